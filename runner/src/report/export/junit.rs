//! `--junit PATH`: JUnit XML as GitHub's test-report actions read it,
//! written with `quick-junit` (the writer cargo-nextest uses). One
//! `<testsuite>` per server, one `<testcase>` per row on it (named like the
//! `gates` harness's trials, `E19::granian`, with the row's file and line).
//! A failed gate is a `<failure>`, cannot judge an `<error>` (the gate could
//! not measure, which is not a pass), not applicable a `<skipped>`; the
//! message carries the figures, `<system-out>` the gate's table and the
//! server log tail. Control characters and colour codes of a log line are
//! dropped (quick-junit's `XmlString`); runner/tests/reports.rs checks the
//! fields the report actions read.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::{relative, ExportInput, Exporter};
use crate::gate::result::GateResult;
use crate::report::terminal::render_gate;
use crate::verdict::{JunitElement, Verdict};

pub struct JunitExporter;

impl Exporter for JunitExporter {
    fn render(&self, input: &ExportInput<'_>) -> String {
        render(input)
    }
}

/// The whole document.
pub fn render(input: &ExportInput<'_>) -> String {
    // Servers in order of first appearance, each with its results.
    let mut servers: Vec<(&str, Vec<&GateResult>)> = Vec::new();
    for r in input.results {
        let name = r.profile.as_str();
        match servers.iter_mut().find(|(s, _)| *s == name) {
            Some((_, list)) => list.push(r),
            None => servers.push((name, vec![r])),
        }
    }
    let timestamp = chrono::DateTime::<chrono::Utc>::from(input.started).fixed_offset();
    let mut report = Report::new("gates");
    // The report's time is the gates' own, as each suite's is.
    report.set_time(input.results.iter().map(elapsed).sum());
    for (server, results) in &servers {
        let mut suite = TestSuite::new(legal(server));
        suite.set_timestamp(timestamp);
        suite.set_time(results.iter().map(|r| elapsed(r)).sum());
        suite.add_property(Property::new("runner_version", env!("CARGO_PKG_VERSION")));
        if let Some(i) = input.interrupted {
            let during = i.during.as_deref().unwrap_or("set-up");
            suite.add_property(Property::new(
                "interrupted",
                legal(&format!("{} during {during}", i.signal)),
            ));
        }
        suite.add_test_cases(results.iter().map(|r| testcase(input, r)));
        report.add_test_suite(suite);
    }
    // Serialising into memory fails only on a broken writer, which a
    // `Vec` is not; an empty report would hide that, so say it instead.
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot write the JUnit report: {e} -->\n"))
}

/// The name the `gates` harness gives this gate's trial.
pub fn case_name(r: &GateResult) -> String {
    format!("{}::{}", r.row.id, r.profile)
}

/// The one-line message of a gate that did not pass: its verdict, reason
/// and key figure.
pub fn message(r: &GateResult) -> String {
    let figures = if r.judgement.headline.is_empty() {
        String::new()
    } else {
        format!(" [{}]", r.judgement.headline)
    };
    format!("{}: {}{figures}", r.verdict().word(), r.judgement.reason)
}

/// How long the gate took (zero for a time that is not one).
fn elapsed(r: &GateResult) -> Duration {
    Duration::try_from_secs_f64(r.elapsed_ms / 1000.0).unwrap_or_default()
}

fn testcase(input: &ExportInput<'_>, r: &GateResult) -> TestCase {
    let file = relative(input.root, &r.row.file);
    let body = || {
        let mut b = format!(
            "{}\nrow: {file}:{}\nserver: {}\n",
            message(r),
            r.row.line,
            r.profile
        );
        if !r.judgement.headline.is_empty() {
            b.push_str(&format!("figures: {}\n", r.judgement.headline));
        }
        b.push_str(&format!("confidence: {}\n", r.judgement.confidence));
        for w in &r.judgement.warnings {
            b.push_str(&format!("warning: {w}\n"));
        }
        legal(&b)
    };
    let status = match r.verdict().spelling().junit {
        None => TestCaseStatus::success(),
        Some(JunitElement::Failure) => problem(NonSuccessKind::Failure, r, body()),
        Some(JunitElement::Error) => problem(NonSuccessKind::Error, r, body()),
        Some(JunitElement::Skipped) => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(legal(&message(r)));
            s
        }
    };
    let mut case = TestCase::new(legal(&case_name(r)), status);
    case.set_classname(legal(&r.row.id));
    case.set_time(elapsed(r));
    case.extra.insert("file".into(), legal(&file).into());
    case.extra
        .insert("line".into(), r.row.line.to_string().into());
    let mut out = render_gate(r);
    if let (Verdict::Pass, Some(log)) = (r.verdict(), r.first_log()) {
        // render_gate shows a tail only for other verdicts; a pass has none.
        out.push_str(&format!("server log: {}\n", log.display()));
    }
    case.set_system_out(legal(&out));
    case
}

/// A `<failure>` or `<error>`: the message, the verdict's name as its type,
/// the details as its text.
fn problem(kind: NonSuccessKind, r: &GateResult, body: String) -> TestCaseStatus {
    let mut s = TestCaseStatus::non_success(kind);
    s.set_message(legal(&message(r)))
        .set_type(r.verdict().name())
        .set_description(body);
    s
}

/// `s` with the two characters XML 1.0 cannot carry that quick-junit lets
/// through (the noncharacters U+FFFE and U+FFFF, which a server log may
/// hold) written out as `\u{fffe}`; it drops the others (C0 controls such
/// as the ESC of a coloured log line) itself.
pub fn legal(s: &str) -> String {
    if !s.contains(['\u{FFFE}', '\u{FFFF}']) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\u{FFFE}' | '\u{FFFF}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_xml_cannot_carry_are_written_out() {
        assert_eq!(legal("ok\u{FFFE}\u{FFFF}"), "ok\\u{fffe}\\u{ffff}");
        assert_eq!(legal("a < b\tc\n"), "a < b\tc\n");
    }

    #[test]
    fn each_verdict_has_its_element_and_the_counts_add_up() {
        use crate::report::export::tests::sample;
        let mut results = [
            sample(Verdict::Pass, "ok"),
            sample(Verdict::Fail, "releasing read 2.01x"),
            sample(Verdict::CannotJudge, "no free core"),
            sample(Verdict::NotApplicable, "cannot express `workers`"),
        ];
        // A log tail with what a server may print: noncharacters too.
        results[1].log_tail = Some("[INFO] <started> & \u{FFFF} \u{1b}[31mred\u{1b}[0m".into());
        let input = ExportInput {
            results: &results,
            interrupted: None,
            root: std::path::Path::new("/work/main"),
            started: std::time::UNIX_EPOCH,
            wall: std::time::Duration::from_secs(10),
        };
        let xml = render(&input);
        let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        for (attr, value) in [
            ("name", "gates"),
            ("tests", "4"),
            ("failures", "1"),
            ("errors", "1"),
            ("skipped", "1"),
            ("time", "10.000"),
        ] {
            assert_eq!(root.attribute(attr), Some(value), "{attr} in {xml}");
        }
        let suite = root.first_element_child().unwrap();
        assert_eq!(suite.attribute("name"), Some("granian"));
        assert_eq!(
            suite.attribute("timestamp"),
            Some("1970-01-01T00:00:00.000+00:00")
        );
        let cases: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        assert_eq!(cases.len(), 4);
        for case in &cases {
            assert_eq!(case.attribute("name"), Some("E19::granian"));
            assert_eq!(case.attribute("classname"), Some("E19"));
            assert_eq!(case.attribute("file"), Some("specs/E19.yaml"));
            assert_eq!(case.attribute("line"), Some("6"));
            assert_eq!(case.attribute("time"), Some("2.500"));
        }
        let outcome = |i: usize| {
            cases[i]
                .children()
                .find(|n| n.is_element() && !n.has_tag_name("system-out"))
        };
        assert!(outcome(0).is_none(), "a pass has no outcome element");
        let failure = outcome(1).unwrap();
        assert_eq!(failure.tag_name().name(), "failure");
        assert_eq!(
            failure.attribute("message"),
            Some("fail: releasing read 2.01x [2.01x/2.03x]")
        );
        assert_eq!(failure.attribute("type"), Some("fail"));
        assert!(failure.text().unwrap().contains("confidence: "));
        let error = outcome(2).unwrap();
        assert_eq!(error.tag_name().name(), "error");
        assert_eq!(
            error.attribute("message"),
            Some("cannot judge: no free core [2.01x/2.03x]")
        );
        assert_eq!(error.attribute("type"), Some("cannot-judge"));
        let skipped = outcome(3).unwrap();
        assert_eq!(skipped.tag_name().name(), "skipped");
        assert_eq!(
            skipped.attribute("message"),
            Some("not applicable: cannot express `workers` [2.01x/2.03x]")
        );
        // The log tail arrives as it was, less its colour codes, with the
        // noncharacter written out.
        let out = cases[1]
            .children()
            .find(|n| n.has_tag_name("system-out"))
            .and_then(|n| n.text())
            .unwrap();
        assert!(out.contains("[INFO] <started> & \\u{ffff} red"), "{out}");
        let pass_out = cases[0]
            .children()
            .find(|n| n.has_tag_name("system-out"))
            .and_then(|n| n.text())
            .unwrap();
        assert!(pass_out.contains("server log: /work/main/.gates/logs/E19.granian.log"));
    }
}
