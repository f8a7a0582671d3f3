//! The one way the runner lays out a terminal table: columns as wide as
//! their widest cell (by display width, so a "…" or a "µs" counts once),
//! two spaces between them, no borders, no trailing blanks. On comfy-table
//! (no TTY probing, no wrapping: a table in a CI log keeps its rows whole).

use comfy_table::{presets, CellAlignment, ColumnConstraint, ContentArrangement, Table};

/// A table with a header row; cells are text already formatted.
pub struct Grid {
    table: Table,
}

impl Grid {
    /// A table whose first row is `header`.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        let mut table = Table::new();
        table
            .load_preset(presets::NOTHING)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(header.into_iter().map(Into::into).collect::<Vec<String>>());
        Self { table }
    }

    /// Appends a row.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.table
            .add_row(cells.into_iter().map(Into::into).collect::<Vec<String>>());
        self
    }

    /// Aligns the columns at `columns` (0-based) to the right: figures.
    pub fn right(&mut self, columns: &[usize]) -> &mut Self {
        for &i in columns {
            if let Some(c) = self.table.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        self
    }

    /// Sets column `i` at least `width` wide.
    pub fn min_width(&mut self, i: usize, width: u16) -> &mut Self {
        if let Some(c) = self.table.column_mut(i) {
            c.set_constraint(ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(
                width,
            )));
        }
        self
    }

    /// The lines, each ending in a newline, indented by `indent`.
    pub fn render(&mut self, indent: &str) -> String {
        let last = self.table.column_count().saturating_sub(1);
        for (i, c) in self.table.column_iter_mut().enumerate() {
            // Two spaces between columns, none before the first.
            c.set_padding((0, if i == last { 0 } else { 2 }));
        }
        let mut out = String::new();
        for line in self.table.lines() {
            // The preset's borders are blanks: one on each side.
            let line = line.strip_prefix(' ').unwrap_or(&line).trim_end();
            out.push_str(indent);
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell_by_display_width() {
        let mut g = Grid::new(["row", "granian", "n"]);
        g.row(["E19", "pass 1.04x/2.01x", "1"]);
        g.row(["C5", "fail…", "10"]).right(&[2]);
        assert_eq!(
            g.render(""),
            "row  granian            n\nE19  pass 1.04x/2.01x   1\nC5   fail…             10\n"
        );
        // The twin: a byte-counted pad would put "fail…" (7 bytes, 5
        // columns) two short; indented, every line is.
        assert!(g.render("  ").lines().all(|l| l.starts_with("  ")));
    }
}
