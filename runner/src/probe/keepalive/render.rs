//! The keepalive-isolation table: each check of the mode under test, then
//! the control.

use super::judge::KeepaliveFigures;

/// The table of a keepalive-isolation run's figures.
pub fn table(f: &KeepaliveFigures, s: &mut String) {
    s.push_str(&format!(
        "  {:<40} {:>8}   {:>9}\n",
        "figure (over S = ".to_string() + &f.slow_ms.to_string() + " ms)",
        "value",
        "bound"
    ));
    for c in &f.checks {
        s.push_str(&format!(
            "  {:<40} {:>8.3}   {:>9}   {}\n",
            c.name,
            c.value,
            c.bound.to_string(),
            if c.holds { "ok" } else { "no" }
        ));
    }
    s.push_str(&format!(
        "  {:<40} {:>8.3}   (control: B waits behind A)\n",
        "control B over S (best trial)", f.control_ratio
    ));
    s.push_str(&format!("  ({} trials)\n", f.trials));
}
