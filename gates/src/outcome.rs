//! What a gate's verdict makes of its trial, and the message a failed trial
//! carries: the verdict and reason, the row's place, the key figures and
//! confidence, then the gate's full table and the server log tail.
//!
//! - pass: the trial passes.
//! - fail: the trial fails ("fail: ...").
//! - cannot judge: the trial fails with its own wording ("cannot judge:
//!   ..."), unless `GATES_CANNOT_JUDGE=ignore`, which ignores it with the
//!   reason as the note (for runners known to be too small).
//! - not applicable (the server cannot express the row's knobs): ignored,
//!   with the reason as the note.

use std::fmt::Write;
use std::path::Path;

use libtest_mimic::{Completion, Failed};
use runner::gate::result::GateResult;
use runner::report::export::relative;
use runner::report::terminal::render_gate;
use runner::verdict::Verdict;

use crate::config::{CannotJudge, CANNOT_JUDGE_VAR};

/// The trial's outcome for `result` under `policy`.
pub fn outcome(
    result: &GateResult,
    policy: CannotJudge,
    root: &Path,
) -> Result<Completion, Failed> {
    match (result.verdict(), policy) {
        (Verdict::Pass, _) => Ok(Completion::Completed),
        (Verdict::NotApplicable, _) => Ok(Completion::ignored_with(format!(
            "{}: {}",
            result.verdict().word(),
            result.judgement.reason
        ))),
        (Verdict::CannotJudge, CannotJudge::Ignore) => Ok(Completion::ignored_with(format!(
            "{}: {} ({CANNOT_JUDGE_VAR}=ignore)",
            result.verdict().word(),
            result.judgement.reason
        ))),
        (Verdict::Fail | Verdict::CannotJudge, _) => Err(message(result, root).into()),
    }
}

/// The failure message of a gate that did not pass.
pub fn message(result: &GateResult, root: &Path) -> String {
    let j = &result.judgement;
    let mut s = format!("{}: {}\n", result.verdict().word(), j.reason);
    let _ = writeln!(
        s,
        "  row: {}:{} ({}) on {}",
        relative(root, &result.row.file),
        result.row.line,
        result.row.id,
        result.profile
    );
    if !j.headline.is_empty() {
        let _ = writeln!(s, "  figures: {}", j.headline);
    }
    let _ = writeln!(s, "  confidence: {}", j.confidence);
    if result.verdict() == Verdict::CannotJudge {
        let _ = writeln!(
            s,
            "  (cannot judge fails CI by default: the gate could not have failed. Rerun on a quiet \
             machine; on runners known to be too small set {CANNOT_JUDGE_VAR}=ignore)"
        );
    }
    s.push('\n');
    s.push_str(render_gate(result).trim_end());
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner::gate::result::RowRef;
    use runner::probe::Judgement;
    use runner::server::pool::ServerRun;
    use std::path::PathBuf;

    fn result(verdict: Verdict, reason: &str) -> GateResult {
        let mut judgement = Judgement::bare(verdict, reason.into());
        judgement.headline = "1.96x/1.98x".into();
        GateResult {
            row: RowRef {
                id: "E19".into(),
                title: "t".into(),
                claim: "c".into(),
                probe: "pair-ratio".into(),
                file: PathBuf::from("/p/specs/E19.yaml"),
                line: 4,
            },
            servers: vec![ServerRun {
                profile: "granian".into(),
                settings: "threads=1".into(),
                argv: Vec::new(),
                pgid: None,
                log: PathBuf::from("/p/.gates/logs/E19.granian.log"),
                ready_ms: None,
                survivors: false,
                stopped: None,
                log_dropped_bytes: 0,
            }],
            profile: "granian".into(),
            judgement,
            run: None,
            log_tail: Some("[INFO] Started worker-1".into()),
            elapsed_ms: 1.0,
        }
    }

    fn failure(c: Result<Completion, Failed>) -> Failed {
        match c {
            Err(f) => f,
            Ok(_) => panic!("the trial did not fail"),
        }
    }

    fn ignored_note(c: Result<Completion, Failed>) -> Option<String> {
        match c {
            Ok(Completion::Ignored { reason }) => reason,
            _ => None,
        }
    }

    #[test]
    fn pass_passes_and_fail_fails_with_figures_and_log_tail() {
        let root = std::path::Path::new("/p");
        assert!(matches!(
            outcome(&result(Verdict::Pass, "ok"), CannotJudge::Fail, root),
            Ok(Completion::Completed)
        ));
        let failed = failure(outcome(
            &result(Verdict::Fail, "releasing read 1.96x"),
            CannotJudge::Ignore,
            root,
        ));
        let m = failed.message().unwrap();
        assert!(m.starts_with("fail: releasing read 1.96x\n"), "{m}");
        assert!(
            m.contains("  row: specs/E19.yaml:4 (E19) on granian"),
            "{m}"
        );
        assert!(m.contains("  figures: 1.96x/1.98x"), "{m}");
        assert!(m.contains("| [INFO] Started worker-1"), "{m}");
    }

    #[test]
    fn cannot_judge_fails_unless_ignored_and_not_applicable_is_ignored() {
        let root = std::path::Path::new("/p");
        let cj = result(Verdict::CannotJudge, "no free core");
        let m = failure(outcome(&cj, CannotJudge::Fail, root));
        assert!(m
            .message()
            .unwrap()
            .starts_with("cannot judge: no free core"));
        assert_eq!(
            ignored_note(outcome(&cj, CannotJudge::Ignore, root)).as_deref(),
            Some("cannot judge: no free core (GATES_CANNOT_JUDGE=ignore)")
        );
        let na = result(Verdict::NotApplicable, "waitress cannot express `workers`");
        assert_eq!(
            ignored_note(outcome(&na, CannotJudge::Fail, root)).as_deref(),
            Some("not applicable: waitress cannot express `workers`")
        );
    }
}
