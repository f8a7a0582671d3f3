//! `--markdown PATH`: the summary table as GitHub Markdown (also appended to
//! `$GITHUB_STEP_SUMMARY` when that is set): one line per gate with its
//! verdict, key figure and reason, then the server log tail of every gate
//! that did not pass, folded.

use crate::text::markdown_cell as cell;
use std::fmt::Write;

use super::{relative, ExportInput, Exporter};
use crate::gate::result::GateResult;
use crate::verdict::Verdict;

#[derive(Default)]
pub struct MarkdownExporter {
    /// Markdown put between the heading and the table (the sign-off
    /// bundle's environment).
    pub preamble: Option<String>,
}

impl Exporter for MarkdownExporter {
    fn render(&self, input: &ExportInput<'_>) -> String {
        let mut s = String::new();
        let count = |v: Verdict| input.results.iter().filter(|r| r.verdict() == v).count();
        let _ = writeln!(
            s,
            "### gates: {} passed, {} failed, {} cannot judge, {} not applicable\n",
            count(Verdict::Pass),
            count(Verdict::Fail),
            count(Verdict::CannotJudge),
            count(Verdict::NotApplicable)
        );
        if let Some(p) = &self.preamble {
            s.push_str(p.trim_end());
            s.push_str("\n\n");
        }
        s.push_str("| row | server | verdict | figures | reason |\n|---|---|---|---|---|\n");
        for r in input.results {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                cell(&r.row.id),
                cell(&r.profile),
                verdict(r.verdict()),
                cell(&r.judgement.headline),
                cell(&r.judgement.reason)
            );
        }
        s.push('\n');
        for r in input
            .results
            .iter()
            .filter(|r| r.verdict() != Verdict::Pass)
        {
            details(&mut s, input, r);
        }
        let n = input.results.len();
        let _ = write!(
            s,
            "{n} gate{} in {:.1} s (runner {})",
            if n == 1 { "" } else { "s" },
            input.wall.as_secs_f64(),
            env!("CARGO_PKG_VERSION")
        );
        if let Some(i) = input.interrupted {
            let _ = write!(
                s,
                "; interrupted by {} during {}",
                i.signal,
                i.during.as_deref().unwrap_or("set-up")
            );
        }
        s.push_str(".\n");
        s
    }
}

fn verdict(v: Verdict) -> &'static str {
    v.spelling().markdown
}

fn details(s: &mut String, input: &ExportInput<'_>, r: &GateResult) {
    let _ = writeln!(
        s,
        "<details><summary>{} on {} ({}:{}): {}</summary>\n",
        cell(&r.row.id),
        cell(&r.profile),
        cell(&relative(input.root, &r.row.file)),
        r.row.line,
        verdict(r.verdict()).trim_matches('*')
    );
    let _ = writeln!(s, "{}\n", cell(&r.judgement.reason));
    if r.verdict() != Verdict::NotApplicable {
        let _ = writeln!(s, "confidence: {}\n", cell(&r.judgement.confidence));
    }
    if let (Some(tail), Some(log)) = (&r.log_tail, r.first_log()) {
        let _ = writeln!(
            s,
            "server log tail ({}):\n\n```text\n{}\n```",
            cell(&log.display().to_string()),
            // A fence inside the log must not close ours.
            tail.replace("```", "'''")
        );
    }
    s.push_str("\n</details>\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::export::tests::sample;

    #[test]
    fn a_line_per_gate_and_the_log_tail_of_each_that_did_not_pass() {
        let results = [
            sample(Verdict::Pass, "releasing 1.05x (<= 1.35x) | ok"),
            sample(Verdict::Fail, "releasing read 2.01x"),
        ];
        let input = ExportInput {
            results: &results,
            interrupted: None,
            servers: &[],
            root: std::path::Path::new("/work/main"),
            started: std::time::UNIX_EPOCH,
            wall: std::time::Duration::from_millis(2500),
        };
        let md = MarkdownExporter::default().render(&input);
        assert!(
            md.starts_with("### gates: 1 passed, 1 failed, 0 cannot judge, 0 not applicable\n"),
            "{md}"
        );
        assert!(
            md.contains(
                "| E19 | granian | pass | 2.01x/2.03x | releasing 1.05x (&lt;= 1.35x) \\| ok |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| E19 | granian | **FAIL** | 2.01x/2.03x | releasing read 2.01x |"),
            "{md}"
        );
        assert_eq!(md.matches("<details>").count(), 1, "{md}");
        assert!(
            md.contains("E19 on granian (specs/E19.yaml:6): FAIL"),
            "{md}"
        );
        assert!(md.contains("```text\n[INFO] <started>"), "{md}");
        let end = format!("2 gates in 2.5 s (runner {}).\n", env!("CARGO_PKG_VERSION"));
        assert!(md.ends_with(&end), "{md}");
    }
}
