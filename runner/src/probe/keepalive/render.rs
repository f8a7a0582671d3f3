//! The keepalive-isolation table: each check of the mode under test, then
//! the control.

use super::judge::KeepaliveFigures;
use crate::text::table::Grid;

/// The table of a keepalive-isolation run's figures.
pub fn table(f: &KeepaliveFigures, s: &mut String) {
    let mut grid = Grid::new([
        format!("figure (over S = {} ms)", f.slow_ms),
        "value".into(),
        "bound".into(),
        String::new(),
    ]);
    for c in &f.checks {
        grid.row([
            c.name.to_string(),
            format!("{:.3}", c.value),
            c.bound.to_string(),
            (if c.holds { "ok" } else { "no" }).to_string(),
        ]);
    }
    grid.row([
        "control B over S (best trial)".to_string(),
        format!("{:.3}", f.control_ratio),
        String::new(),
        "(control: B waits behind A)".into(),
    ]);
    s.push_str(&grid.right(&[1]).render("  "));
    s.push_str(&format!("  ({} trials)\n", f.trials));
}
