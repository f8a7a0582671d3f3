//! The window every closed load shares (`runner sweep`, `runner load`, a
//! sweep row): connections, duration, warm-up and the request bound,
//! checked once. Errors name the [`WindowField`]; the caller names it
//! (`--duration`, `sweep.duration`).

use std::time::Duration;

use crate::input::FieldError;

/// A field of the load window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowField {
    Connections,
    Duration,
    Warmup,
    RequestTimeoutMs,
}

/// Checks the window; returns the duration and the warm-up.
pub fn load_window(
    connections: u32,
    duration: &str,
    warmup: &str,
    request_timeout_ms: u64,
) -> Result<(Duration, Duration), FieldError<WindowField>> {
    if !(1..=1024).contains(&connections) {
        return Err(FieldError::new(WindowField::Connections, "use 1 to 1024").value(connections));
    }
    let d = parse_duration(duration).map_err(|e| e.map(|()| WindowField::Duration))?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(3600) {
        return Err(FieldError::new(WindowField::Duration, "use 100ms to 1h").value(duration));
    }
    let w = parse_duration(warmup).map_err(|e| e.map(|()| WindowField::Warmup))?;
    if w > Duration::from_secs(600) {
        return Err(FieldError::new(WindowField::Warmup, "use 0s to 10m").value(warmup));
    }
    if !(100..=600_000).contains(&request_timeout_ms) {
        return Err(
            FieldError::new(WindowField::RequestTimeoutMs, "use 100 to 600000")
                .value(request_timeout_ms),
        );
    }
    Ok((d, w))
}

/// `5s`, `500ms`, `1.5s`, `2m`. By hand: four units, and a crate's wider
/// grammar (`1h 30m`, `1 day`) would be accepted here and mean nothing.
pub fn parse_duration(text: &str) -> Result<Duration, FieldError<()>> {
    let bad = |message: String| FieldError::new((), message).value(text);
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| bad("give a number and a unit, like 5s or 500ms".into()))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "" => return Err(bad(format!("give a unit: {text}s or {text}ms"))),
        other => return Err(bad(format!("unknown unit {other:?}; use ms, s or m"))),
    };
    if !seconds.is_finite() || !(0.0..=86_400.0).contains(&seconds) {
        return Err(bad("out of range".into()));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        for bad in ["5", "s", "5h", "-1s", "1e3s", ""] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e.value.as_deref(), Some(bad), "{e:?}");
        }
    }

    #[test]
    fn each_bad_value_names_its_field() {
        assert!(load_window(8, "5s", "1s", 30_000).is_ok());
        for (c, d, w, t, field) in [
            (0, "5s", "1s", 30_000, WindowField::Connections),
            (8, "50ms", "1s", 30_000, WindowField::Duration),
            (8, "5", "1s", 30_000, WindowField::Duration),
            (8, "5s", "1h", 30_000, WindowField::Warmup),
            (8, "5s", "1s", 10, WindowField::RequestTimeoutMs),
        ] {
            assert_eq!(load_window(c, d, w, t).unwrap_err().field, field);
        }
    }
}
