//! Small statistics over trial figures: median, extremes, and the ratio of
//! minima that the verdicts use.
//!
//! Why the ratio of minima: on a shared machine noise only ever *adds* time,
//! so the fastest single and the fastest pair over interleaved trials are the
//! two figures least touched by it. Measured here under bursty load, the
//! per-trial minimum ratio was unsafe (one noisy single request made the
//! holding mode read 1.39x) and the per-trial median drifted (releasing
//! 1.28-1.37x), while min(pair)/min(single) over 5-7 interleaved trials held.

use serde::Serialize;

/// Median and extremes of a set of figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// None for an empty set.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Some(Self {
            median,
            min: v[0],
            max: v[n - 1],
        })
    }
}

/// min(pairs) / min(singles); None when either is empty or the single is 0.
pub fn ratio_of_minima(pairs: &[f64], singles: &[f64]) -> Option<f64> {
    let p = pairs.iter().copied().min_by(f64::total_cmp)?;
    let s = singles.iter().copied().min_by(f64::total_cmp)?;
    (s > 0.0).then(|| p / s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_odd_and_even_sets() {
        assert_eq!(
            Spread::of(&[3.0, 1.0, 2.0]),
            Some(Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            })
        );
        assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(Spread::of(&[]), None);
    }

    #[test]
    fn ratio_of_minima_ignores_one_slow_outlier() {
        // One noisy single (40) does not move the figure; its per-trial ratio would.
        let singles = [20.0, 40.0, 21.0];
        let pairs = [40.0, 41.0, 42.0];
        assert_eq!(ratio_of_minima(&pairs, &singles), Some(2.0));
        assert_eq!(ratio_of_minima(&[], &singles), None);
        assert_eq!(ratio_of_minima(&pairs, &[0.0]), None);
    }
}
