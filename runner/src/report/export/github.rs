//! GitHub Actions: when `GITHUB_ACTIONS=true`, every gate that failed or
//! could not judge becomes an `::error` workflow command pointing at its
//! row (`file=specs/E19.yaml,line=6`), so the pull request shows it on the
//! row's line. Not applicable and pass make none.

use std::path::Path;

use super::junit::{case_name, message};
use super::relative;
use crate::gate::result::GateResult;
use crate::verdict::Verdict;

/// Whether this process runs as a GitHub Actions step.
pub fn in_actions() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// `$GITHUB_STEP_SUMMARY`, when set.
pub fn step_summary() -> Option<std::path::PathBuf> {
    std::env::var_os("GITHUB_STEP_SUMMARY").map(Into::into)
}

/// The annotation for one gate, if it needs one.
pub fn annotation(root: &Path, r: &GateResult) -> Option<String> {
    if !matches!(r.verdict(), Verdict::Fail | Verdict::CannotJudge) {
        return None;
    }
    let mut text = message(r);
    if r.verdict() == Verdict::Fail {
        text.push_str(&format!("\nconfidence: {}", r.judgement.confidence));
    }
    Some(format!(
        "::error file={},line={},title={}::{}",
        property(&relative(root, &r.row.file)),
        r.row.line,
        property(&case_name(r)),
        data(&text)
    ))
}

/// Every annotation for `results`, in order.
pub fn annotations(root: &Path, results: &[GateResult]) -> Vec<String> {
    results.iter().filter_map(|r| annotation(root, r)).collect()
}

/// Escapes a command's message (GitHub's `escapeData`).
pub fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property's value (GitHub's `escapeProperty`).
pub fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped() {
        assert_eq!(data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(property("E19::granian, x"), "E19%3A%3Agranian%2C x");
    }

    #[test]
    fn a_failed_gate_points_at_its_row_and_a_pass_makes_none() {
        let root = Path::new("/work/main");
        let failed =
            crate::report::export::tests::sample(Verdict::Fail, "releasing read 2.01x (<= 1.35x)");
        let line = annotation(root, &failed).unwrap();
        assert!(
            line.starts_with("::error file=specs/E19.yaml,line=6,title=E19%3A%3Agranian::fail: releasing read 2.01x"),
            "{line}"
        );
        assert!(line.contains("%0Aconfidence: "), "{line}");
        let unjudged = crate::report::export::tests::sample(Verdict::CannotJudge, "no free core");
        assert!(annotation(root, &unjudged)
            .unwrap()
            .contains("::cannot judge: no free core"));
        for v in [Verdict::Pass, Verdict::NotApplicable] {
            assert_eq!(
                annotation(root, &crate::report::export::tests::sample(v, "x")),
                None
            );
        }
    }
}
