//! The JUnit report as GitHub's test-report actions read it (dorny's
//! test-reporter, mikepenz's action-junit-report, EnricoMi's
//! publish-unit-test-result-action): `<testsuites>` of `<testsuite>`s of
//! `<testcase>`s, each case with a name, a classname, a time, the file and
//! line its annotation points at, and at most one of `<failure>` or
//! `<error>` (message and type) or `<skipped>` (message); the counts on each
//! suite and on the whole must match the cases. [`problems`] lists every
//! way a document departs from that; an empty list is a readable report.

use roxmltree::{Document, Node};

/// The elements a testcase may hold, in the order the readers expect.
const CASE_CHILDREN: &[&str] = &[
    "properties",
    "failure",
    "error",
    "skipped",
    "system-out",
    "system-err",
];

/// Every departure of `xml` from the shape the report actions read, as
/// `where: what`.
pub fn problems(xml: &str) -> Vec<String> {
    let doc = match Document::parse(xml) {
        Ok(d) => d,
        Err(e) => return vec![format!("not well-formed XML: {e}")],
    };
    let mut out = Vec::new();
    let root = doc.root_element();
    if !root.has_tag_name("testsuites") {
        out.push(format!(
            "the root is <{}>, not <testsuites>",
            root.tag_name().name()
        ));
        return out;
    }
    text_attr(&mut out, root, "testsuites", "name");
    decimal(&mut out, root, "testsuites", "time");
    let mut total = Counts::default();
    for child in root.children().filter(Node::is_element) {
        if !child.has_tag_name("testsuite") {
            out.push(format!(
                "testsuites: unexpected <{}>",
                child.tag_name().name()
            ));
            continue;
        }
        total.add(&suite(&mut out, child));
    }
    total.check(&mut out, root, "testsuites");
    out
}

#[derive(Default)]
struct Counts {
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.tests += other.tests;
        self.failures += other.failures;
        self.errors += other.errors;
        self.skipped += other.skipped;
    }

    /// The element's count attributes must be these numbers.
    fn check(&self, out: &mut Vec<String>, node: Node<'_, '_>, at: &str) {
        for (name, want) in [
            ("tests", self.tests),
            ("failures", self.failures),
            ("errors", self.errors),
            ("skipped", self.skipped),
        ] {
            match node.attribute(name).map(str::parse::<u64>) {
                Some(Ok(n)) if n == want => {}
                Some(Ok(n)) => out.push(format!("{at}: {name}=\"{n}\" but it holds {want}")),
                Some(Err(_)) => out.push(format!("{at}: {name} is not a count")),
                None => out.push(format!("{at}: no {name} count")),
            }
        }
    }
}

fn suite(out: &mut Vec<String>, node: Node<'_, '_>) -> Counts {
    let name = node.attribute("name").unwrap_or("?");
    let at = format!("testsuite {name}");
    text_attr(out, node, &at, "name");
    decimal(out, node, &at, "time");
    if let Some(t) = node.attribute("timestamp") {
        if !is_timestamp(t) {
            out.push(format!(
                "{at}: timestamp {t:?} is not an ISO 8601 date-time"
            ));
        }
    }
    let mut counts = Counts::default();
    for child in node.children().filter(Node::is_element) {
        match child.tag_name().name() {
            "properties" => {
                for p in child.children().filter(Node::is_element) {
                    if !p.has_tag_name("property") {
                        out.push(format!(
                            "{at}: unexpected <{}> in properties",
                            p.tag_name().name()
                        ));
                    }
                    text_attr(out, p, &format!("{at} property"), "name");
                    if p.attribute("value").is_none() {
                        out.push(format!("{at}: a property without a value"));
                    }
                }
            }
            "testcase" => {
                counts.tests += 1;
                match case(out, child, &at) {
                    Some("failure") => counts.failures += 1,
                    Some("error") => counts.errors += 1,
                    Some("skipped") => counts.skipped += 1,
                    _ => {}
                }
            }
            "system-out" | "system-err" => {}
            other => out.push(format!("{at}: unexpected <{other}>")),
        }
    }
    counts.check(out, node, &at);
    counts
}

/// Checks one testcase; returns its outcome element, if any.
fn case<'a>(out: &mut Vec<String>, node: Node<'a, '_>, suite: &str) -> Option<&'a str> {
    let at = format!(
        "{suite}, testcase {}",
        node.attribute("name").unwrap_or("?")
    );
    text_attr(out, node, &at, "name");
    text_attr(out, node, &at, "classname");
    text_attr(out, node, &at, "file");
    decimal(out, node, &at, "time");
    match node.attribute("line").map(str::parse::<u64>) {
        Some(Ok(n)) if n > 0 => {}
        Some(_) => out.push(format!("{at}: line is not a positive number")),
        None => out.push(format!("{at}: no line")),
    }
    let mut outcome = None;
    let mut last = 0;
    for child in node.children().filter(Node::is_element) {
        let tag = child.tag_name().name();
        let Some(rank) = CASE_CHILDREN.iter().position(|t| *t == tag) else {
            out.push(format!("{at}: unexpected <{tag}>"));
            continue;
        };
        if rank < last {
            out.push(format!("{at}: <{tag}> out of order"));
        }
        last = rank;
        if matches!(tag, "failure" | "error" | "skipped") {
            if let Some(first) = outcome.replace(tag) {
                out.push(format!("{at}: two outcomes, <{first}> and <{tag}>"));
            }
            text_attr(out, child, &format!("{at} <{tag}>"), "message");
            if tag != "skipped" {
                text_attr(out, child, &format!("{at} <{tag}>"), "type");
            }
        }
        if child.children().any(|n| n.is_element()) && tag != "properties" {
            out.push(format!("{at}: markup inside <{tag}>"));
        }
    }
    outcome
}

/// A present, non-empty attribute.
fn text_attr(out: &mut Vec<String>, node: Node<'_, '_>, at: &str, name: &str) {
    match node.attribute(name) {
        Some(v) if !v.trim().is_empty() => {}
        Some(_) => out.push(format!("{at}: empty {name}")),
        None => out.push(format!("{at}: no {name}")),
    }
}

/// A present, non-negative decimal number of seconds.
fn decimal(out: &mut Vec<String>, node: Node<'_, '_>, at: &str, name: &str) {
    match node.attribute(name) {
        Some(v) => {
            let ok = !v.is_empty()
                && v.chars().all(|c| c.is_ascii_digit() || c == '.')
                && v.parse::<f64>().is_ok();
            if !ok {
                out.push(format!("{at}: {name} {v:?} is not a number of seconds"));
            }
        }
        None => out.push(format!("{at}: no {name}")),
    }
}

/// `YYYY-MM-DDTHH:MM:SS`, then optional fraction and zone.
fn is_timestamp(t: &str) -> bool {
    let b = t.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
}
