//! Latencies of good replies in an HDR histogram (microseconds, three
//! significant figures), one per connection, merged at the end.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Percentiles of one load, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Latency {
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

/// Recorded latencies.
pub struct Latencies(Histogram<u64>);

impl Latencies {
    /// Holds values up to `bound` (the request timeout); longer ones are
    /// recorded as `bound` (they cannot be: such a request timed out).
    pub fn new(bound: Duration) -> Self {
        let high = (bound.as_micros() as u64).max(2);
        // Bounds 1..=high with 3 figures always construct; the fallback
        // keeps a failed request (or a bad bound) from ever being a panic.
        let h = Histogram::new_with_bounds(1, high, 3)
            .or_else(|_| Histogram::new(3))
            .unwrap_or_else(|_| unreachable!("a 3-figure histogram always constructs"));
        Self(h)
    }

    pub fn record(&mut self, latency: Duration) {
        self.0
            .saturating_record((latency.as_micros() as u64).max(1));
    }

    pub fn merge(&mut self, other: &Latencies) {
        // Same bounds by construction; a mismatch would only drop values.
        let _ = self.0.add(&other.0);
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// None when nothing was recorded.
    pub fn summary(&self) -> Option<Latency> {
        if self.0.is_empty() {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(Latency {
            p50_ms: ms(self.0.value_at_quantile(0.50)),
            p90_ms: ms(self.0.value_at_quantile(0.90)),
            p99_ms: ms(self.0.value_at_quantile(0.99)),
            max_ms: ms(self.0.max()),
            mean_ms: self.0.mean() / 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_in_ms() {
        let mut a = Latencies::new(Duration::from_secs(1));
        for ms in 1..=100 {
            a.record(Duration::from_millis(ms));
        }
        let mut b = Latencies::new(Duration::from_secs(1));
        b.record(Duration::from_secs(5)); // beyond the bound: saturates
        a.merge(&b);
        let s = a.summary().unwrap();
        assert_eq!(a.count(), 101);
        assert!((s.p50_ms - 51.0).abs() < 0.1, "{s:?}");
        assert!((s.p99_ms - 100.0).abs() < 0.2, "{s:?}");
        assert!((s.max_ms - 1000.0).abs() < 1.0, "{s:?}");
        assert!(Latencies::new(Duration::from_secs(1)).summary().is_none());
    }
}
