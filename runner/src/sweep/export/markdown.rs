//! `--markdown PATH`: the table as GitHub-flavoured Markdown, with the plot
//! linked under it.

use crate::sweep::table::{self, num};
use crate::sweep::SweepResult;
use crate::text::markdown_cell as cell;

/// `plot` is the link to the SVG, relative to the Markdown file.
pub fn render(result: &SweepResult, plot: Option<&str>) -> String {
    let mut out = match &result.row {
        Some(row) => format!(
            "## {}: {} ({})\n\n{}\n\n",
            cell(&row.id),
            cell(&row.title),
            cell(&result.server),
            cell(&row.claim)
        ),
        None => format!("## sweep on {}\n\n", cell(&result.server)),
    };
    out.push_str(&format!("{}\n\n", cell(&table::describe(result))));
    out.push_str(
        "| setting | req/s | p50 ms | p90 ms | p99 ms | max ms | cpu % | rq % | pss MiB | scaling | errors | check |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    let rows = table::rows(result);
    for r in &rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            cell(&r.setting),
            num(r.requests_per_s, 1),
            num(r.p50_ms, 2),
            num(r.p90_ms, 2),
            num(r.p99_ms, 2),
            num(r.max_ms, 2),
            num(r.cpu_pct, 0),
            num(r.run_queue_pct, 0),
            num(r.pss_mib, 0),
            r.scaling.map_or_else(|| "-".into(), |s| format!("{s:.2}x")),
            cell(&r.errors),
            cell(&r.check)
        ));
    }
    let notes: Vec<_> = rows.iter().filter(|r| r.reason.is_some()).collect();
    if !notes.is_empty() {
        out.push('\n');
    }
    for r in notes {
        out.push_str(&format!(
            "- **{}** {}: {}\n",
            cell(&r.setting),
            r.status.label(),
            cell(r.reason.as_deref().unwrap_or_default())
        ));
    }
    if let Some(note) = result.settings.iter().find_map(|s| s.cpu_note.as_deref()) {
        out.push_str(&format!("- no server CPU figures: {}\n", cell(note)));
    }
    out.push_str(
        "\ncpu % and rq %: the server's on-CPU time and run-queue wait (every thread of its process group) as % of one core; pss MiB: the peak over the window of the PSS summed over its processes; scaling: req/s against the route's first setting.\n",
    );
    if let Some(link) = plot {
        out.push_str(&format!(
            "\n![req/s and p99 against threads]({link})\n\n[the plot]({link})\n"
        ));
    }
    out
}
