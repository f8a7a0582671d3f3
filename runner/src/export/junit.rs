//! `--junit PATH`: JUnit XML as GitHub's test-report actions read it. One
//! `<testsuite>` per server, one `<testcase>` per row on it (named like the
//! `gates` harness's trials, `E19::granian`, with the row's file and line).
//! A failed gate is a `<failure>`, cannot judge an `<error>` (the gate could
//! not measure, which is not a pass), not applicable a `<skipped>`; the
//! message carries the figures, `<system-out>` the gate's table and the
//! server log tail. The shape is runner/schema/junit.xsd.

use std::fmt::Write;

use super::{iso8601, relative, ExportInput, Exporter};
use crate::report::terminal::render_gate;
use crate::result::GateResult;
use crate::verdict::Verdict;

pub struct JunitExporter;

impl Exporter for JunitExporter {
    fn render(&self, input: &ExportInput<'_>) -> String {
        render(input)
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    seconds: f64,
}

impl Counts {
    fn add(&mut self, r: &GateResult) {
        self.tests += 1;
        self.seconds += r.elapsed_ms / 1000.0;
        match r.verdict() {
            Verdict::Pass => {}
            Verdict::Fail => self.failures += 1,
            Verdict::CannotJudge => self.errors += 1,
            Verdict::NotApplicable => self.skipped += 1,
        }
    }

    fn attrs(&self) -> String {
        format!(
            "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\"",
            self.tests, self.failures, self.errors, self.skipped, self.seconds
        )
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
    let mut total = Counts::default();
    input.results.iter().for_each(|r| total.add(r));
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(s, "<testsuites name=\"gates\" {}>", total.attrs());
    let timestamp = iso8601(input.started);
    for (server, results) in &servers {
        let mut counts = Counts::default();
        results.iter().for_each(|r| counts.add(r));
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" {} timestamp=\"{timestamp}\">",
            attr(server),
            counts.attrs()
        );
        s.push_str("    <properties>\n");
        property(&mut s, "runner_version", env!("CARGO_PKG_VERSION"));
        if let Some(i) = input.interrupted {
            let during = i.during.as_deref().unwrap_or("set-up");
            property(
                &mut s,
                "interrupted",
                &format!("{} during {during}", i.signal),
            );
        }
        s.push_str("    </properties>\n");
        for r in results {
            testcase(&mut s, input, r);
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

fn property(s: &mut String, name: &str, value: &str) {
    let _ = writeln!(
        s,
        "      <property name=\"{}\" value=\"{}\"/>",
        attr(name),
        attr(value)
    );
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
    let verdict = match r.verdict() {
        Verdict::Fail => "fail",
        Verdict::CannotJudge => "cannot judge",
        Verdict::NotApplicable => "not applicable",
        Verdict::Pass => "pass",
    };
    format!("{verdict}: {}{figures}", r.judgement.reason)
}

fn testcase(s: &mut String, input: &ExportInput<'_>, r: &GateResult) {
    let file = relative(input.root, &r.row.file);
    let _ = writeln!(
        s,
        "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\" time=\"{:.3}\">",
        attr(&case_name(r)),
        attr(&r.row.id),
        attr(&file),
        r.row.line,
        r.elapsed_ms / 1000.0
    );
    let body = || {
        let mut b = format!(
            "{}\nrow: {file}:{}\nserver: {}\n",
            message(r),
            r.row.line,
            r.profile
        );
        if !r.judgement.headline.is_empty() {
            let _ = writeln!(b, "figures: {}", r.judgement.headline);
        }
        let _ = writeln!(b, "confidence: {}", r.judgement.confidence);
        for w in &r.judgement.warnings {
            let _ = writeln!(b, "warning: {w}");
        }
        b
    };
    let (element, kind) = match r.verdict() {
        Verdict::Pass => (None, ""),
        Verdict::Fail => (Some("failure"), "fail"),
        Verdict::CannotJudge => (Some("error"), "cannot-judge"),
        Verdict::NotApplicable => (Some("skipped"), "not-applicable"),
    };
    match element {
        Some("skipped") => {
            let _ = writeln!(s, "      <skipped message=\"{}\"/>", attr(&message(r)));
        }
        Some(element) => {
            let _ = writeln!(
                s,
                "      <{element} message=\"{}\" type=\"{kind}\">{}</{element}>",
                attr(&message(r)),
                text(&body())
            );
        }
        None => {}
    }
    let mut out = render_gate(r);
    if let (Verdict::Pass, Some(log)) = (r.verdict(), r.first_log()) {
        // render_gate shows a tail only for other verdicts; a pass has none.
        out.push_str(&format!("server log: {}\n", log.display()));
    }
    let _ = writeln!(s, "      <system-out>{}</system-out>", text(&out));
    s.push_str("    </testcase>\n");
}

/// Characters XML 1.0 cannot carry at all (most C0 controls, such as the
/// ESC of a coloured log line), written out as `\u{1b}` instead.
fn push_legal(out: &mut String, c: char) {
    let legal = matches!(c, '\t' | '\n' | '\r')
        || matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
    if legal {
        out.push(c);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// Escapes character data.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => push_legal(&mut out, c),
        }
    }
    out
}

/// Escapes an attribute value (quotes too, and line breaks as character
/// references so that parsers do not fold them into spaces).
pub fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => push_legal(&mut out, c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_illegal_characters_are_escaped() {
        assert_eq!(
            text("a < b && c > d \u{1b}[31mred"),
            "a &lt; b &amp;&amp; c &gt; d \\u{1b}[31mred"
        );
        assert_eq!(
            attr("say \"hi\" & 'bye'\nnext"),
            "say &quot;hi&quot; &amp; &apos;bye&apos;&#10;next"
        );
        // Line breaks and tabs are legal character data as they are.
        assert_eq!(text("a\tb\nc"), "a\tb\nc");
        assert_eq!(text("\u{0}\u{FFFE}ok"), "\\u{0}\\u{fffe}ok");
    }

    #[test]
    fn each_verdict_has_its_element_and_the_counts_add_up() {
        use crate::export::tests::sample;
        let results = [
            sample(Verdict::Pass, "ok"),
            sample(Verdict::Fail, "releasing read 2.01x"),
            sample(Verdict::CannotJudge, "no free core"),
            sample(Verdict::NotApplicable, "cannot express `workers`"),
        ];
        let input = ExportInput {
            results: &results,
            interrupted: None,
            root: std::path::Path::new("/work/main"),
            started: std::time::UNIX_EPOCH,
            wall: std::time::Duration::from_secs(10),
        };
        let xml = render(&input);
        assert!(xml.contains(
            "<testsuites name=\"gates\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"10.000\">"
        ), "{xml}");
        assert!(
            xml.contains(
                "<failure message=\"fail: releasing read 2.01x [2.01x/2.03x]\" type=\"fail\">"
            ),
            "{xml}"
        );
        assert!(xml.contains("<error message=\"cannot judge: no free core [2.01x/2.03x]\" type=\"cannot-judge\">"), "{xml}");
        assert!(
            xml.contains(
                "<skipped message=\"not applicable: cannot express `workers` [2.01x/2.03x]\"/>"
            ),
            "{xml}"
        );
        assert!(xml.contains("file=\"specs/E19.yaml\" line=\"6\""), "{xml}");
        assert!(xml.contains("timestamp=\"1970-01-01T00:00:00Z\""), "{xml}");
        // The log tail's markup and escape characters are escaped.
        assert!(
            xml.contains("[INFO] &lt;started&gt; &amp; \\u{1b}[31mred"),
            "{xml}"
        );
        assert_eq!(xml.matches("<testcase ").count(), 4);
    }
}
