//! Shared validation of row blocks: every error names the file, the line and
//! column, and the key (`pair-ratio.modes.releasing.role`).

use super::error::SpecError;
use super::settings::ServerSettings;

/// Makes the error for the key at `path` (`["pair-ratio", "margin"]`).
pub type ErrAt<'a> = dyn Fn(&[&str], String) -> SpecError + 'a;

/// `prefix` with `key` after it.
pub fn key<'a>(prefix: &[&'a str], key: &'a str) -> Vec<&'a str> {
    let mut v = prefix.to_vec();
    v.push(key);
    v
}

/// A ratio or a fraction: finite, between 0 and 100.
pub fn ratio_in_range(path: &[&str], v: f64, err: &ErrAt<'_>) -> Result<(), SpecError> {
    if !v.is_finite() || !(0.0..=100.0).contains(&v) {
        return Err(err(
            path,
            format!("is {v}; it must be a ratio between 0 and 100"),
        ));
    }
    Ok(())
}

/// A whole number in `range`.
pub fn int_in_range<T>(
    path: &[&str],
    v: T,
    range: std::ops::RangeInclusive<T>,
    err: &ErrAt<'_>,
) -> Result<(), SpecError>
where
    T: PartialOrd + std::fmt::Display,
{
    if !range.contains(&v) {
        return Err(err(
            path,
            format!(
                "is {v}; it must be between {} and {}",
                range.start(),
                range.end()
            ),
        ));
    }
    Ok(())
}

/// Thread and worker counts a server can be asked for.
pub fn check_settings(path: &[&str], s: &ServerSettings, err: &ErrAt<'_>) -> Result<(), SpecError> {
    for (knob, value) in [("threads", s.threads), ("workers", s.workers)] {
        if let Some(v) = value {
            int_in_range(&key(path, knob), v, 1..=256, err)?;
        }
    }
    Ok(())
}
