//! Report files from real runs: `--json-file` against
//! runner/schema/report.schema.json (the `jsonschema` crate), `--junit`
//! through the fields GitHub's test-report actions read
//! (tests/schemas/junit.rs), `--markdown` and the step summary, and GitHub
//! annotations. Each shape check has its twin: the same document, broken, is
//! rejected.

mod common;
mod schemas;

use std::path::Path;

use common::{edited_row, runner};
use schemas::{assert_junit, json_errors, json_schema, junit};
use serde_json::Value;

/// A way to break a valid report.
type Breaking = fn(&mut Value);

/// One row of each probe kind: the real run below gates these (not `all`,
/// whose model rows each load a 90 MB model), E19 at `E19_AT`.
const ROWS: [&str; 4] = ["C5", "E15", "E19", "GIL-releases"];
/// Where E19's result sits in the report.
const E19_AT: usize = 2;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The exit code the runner's table gives these results' verdicts.
fn code_for(report: &Value) -> i32 {
    let verdicts: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    if verdicts.contains(&"fail") {
        1
    } else if verdicts.contains(&"cannot-judge") {
        2
    } else {
        0
    }
}

/// The `<testcase>` elements of a JUnit document.
fn testcases(doc: &roxmltree::Document<'_>) -> Vec<(String, String, String)> {
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| {
            (
                n.attribute("name").unwrap().to_string(),
                n.attribute("file").unwrap().to_string(),
                n.attribute("line").unwrap().to_string(),
            )
        })
        .collect()
}

/// Ways to break a JUnit report that the report actions would misread.
fn broken_junit(xml: &str) -> Vec<(&'static str, String)> {
    let once = |from: &str, to: &str| {
        assert!(xml.contains(from), "no {from:?} to break in\n{xml}");
        xml.replacen(from, to, 1)
    };
    vec![
        ("a testcase without a name", once("<testcase name=", "<testcase nom=")),
        ("a testcase without a classname", once(" classname=", " class=")),
        ("a testcase without a file", once(" file=", " path=")),
        ("a testcase without a line", once(" line=\"", " row=\"")),
        ("line 0", {
            let start = xml.find(" line=\"").expect("a line attribute") + 7;
            let end = start + xml[start..].find('"').unwrap();
            format!("{}0{}", &xml[..start], &xml[end..])
        }),
        ("an unknown element", once("<system-out>", "<weird/><system-out>")),
        ("a time that is not a number", once(" time=\"", " time=\"soon")),
        ("two outcomes in one testcase", once(
            "<system-out>",
            "<failure message=\"a\" type=\"fail\"/><error message=\"b\" type=\"x\"/><system-out>",
        )),
        ("a count that does not match the cases", once(" tests=\"", " tests=\"9")),
        ("markup left unescaped", once("&lt;", "<")),
    ]
}

#[test]
fn the_junit_check_reads_a_recorded_report_and_rejects_it_broken() {
    // Written by `runner::report::export::junit` from the four verdicts (its unit
    // test's results): a pass, a <failure>, an <error> and a <skipped>.
    let xml =
        std::fs::read_to_string(common::root().join("runner/tests/schemas/recorded-junit.xml"))
            .unwrap();
    assert_junit(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for tag in ["failure", "error", "skipped"] {
        assert_eq!(
            doc.descendants().filter(|n| n.has_tag_name(tag)).count(),
            1,
            "{tag}"
        );
    }
    let mut broken = broken_junit(&xml);
    broken.extend([
        (
            "a failure without a type",
            xml.replacen(" type=\"fail\"", "", 1),
        ),
        (
            "an error without a message",
            xml.replacen("<error message=", "<error note=", 1),
        ),
        (
            "a skipped without a message",
            xml.replacen("<skipped message=", "<skipped note=", 1),
        ),
        (
            "a suite without a name",
            xml.replacen("<testsuite name=", "<testsuite nom=", 1),
        ),
        (
            "a bad timestamp",
            xml.replacen("timestamp=\"1970", "timestamp=\"yesterday", 1),
        ),
    ]);
    for (what, bad) in broken {
        assert_ne!(bad, xml, "{what}: nothing was broken");
        assert!(
            !junit::problems(&bad).is_empty(),
            "the JUnit check accepted {what}"
        );
    }
}

#[test]
fn a_real_run_writes_reports_that_validate_against_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    let step = dir.path().join("step-summary.md");
    std::fs::write(&step, "earlier step\n").unwrap();
    let out = runner()
        .arg("gate")
        .args(ROWS)
        .args(["--trials", "2", "--json"])
        .arg("--json-file")
        .arg(reports.join("report.json"))
        .arg("--junit")
        .arg(reports.join("junit.xml"))
        .arg("--markdown")
        .arg(reports.join("summary.md"))
        .env("GITHUB_STEP_SUMMARY", &step)
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = read_json(&reports.join("report.json"));
    // --json on stdout still works, and is the same document.
    let printed: Value = serde_json::from_str(&stdout).expect("stdout is the JSON report");
    assert_eq!(printed, report);
    assert_eq!(out.status.code(), Some(code_for(&report)), "{stderr}");
    assert!(!stdout.contains("::error") && !stderr.contains("::error"));

    // JSON: every probe kind present, valid against the schema...
    let validator = json_schema();
    let results = report["results"].as_array().unwrap();
    // One result per row named, in order, and every registered probe kind
    // among them.
    assert_eq!(results.len(), ROWS.len());
    for (r, id) in results.iter().zip(ROWS) {
        assert_eq!(r["row"]["id"], id);
        if !r["figures"].is_null() {
            assert_eq!(r["figures"]["kind"], r["row"]["probe"]);
        }
    }
    for kind in runner::probe::ProbeKind::ALL {
        assert!(
            results.iter().any(|r| r["row"]["probe"] == kind.name()),
            "no row of probe kind {} in {ROWS:?}",
            kind.name()
        );
    }
    // The twins below break the pair-ratio result (E19, at E19_AT).
    assert_eq!(results[E19_AT]["row"]["id"], "E19");
    let errors = json_errors(&validator, &report);
    assert!(errors.is_empty(), "{errors:#?}");
    // ...and its twins, broken, are not.
    let broken: [(&str, Breaking); 6] = [
        ("unknown verdict", |r| {
            r["results"][0]["verdict"] = "maybe".into()
        }),
        ("no reason", |r| {
            r["results"][0].as_object_mut().unwrap().remove("reason");
        }),
        ("a stray key", |r| r["extra"] = 1.into()),
        ("line 0", |r| r["results"][E19_AT]["row"]["line"] = 0.into()),
        ("pair-ratio figures without the mode under test", |r| {
            let figures = r["results"][E19_AT]["figures"].as_object_mut().unwrap();
            figures.remove("under_test");
        }),
        ("a bound on both sides", |r| {
            r["results"][E19_AT]["figures"]["control"]["bound"]["at_most"] = 9.into();
        }),
    ];
    for (what, breaking) in broken {
        let mut bad = report.clone();
        breaking(&mut bad);
        assert!(
            !json_errors(&validator, &bad).is_empty(),
            "the schema accepted {what}"
        );
    }

    // JUnit: valid, one testcase per row on granian pointing at its row...
    let xml = std::fs::read_to_string(reports.join("junit.xml")).unwrap();
    assert_junit(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases = testcases(&doc);
    let expected: Vec<(String, String, String)> = results
        .iter()
        .map(|r| {
            let id = r["row"]["id"].as_str().unwrap();
            (
                format!("{id}::{}", r["profile"].as_str().unwrap()),
                format!("specs/{id}.yaml"),
                r["row"]["line"].to_string(),
            )
        })
        .collect();
    assert_eq!(cases, expected);
    let root_el = doc.root_element();
    let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
    let tests = results.len().to_string();
    assert_eq!(root_el.attribute("tests"), Some(tests.as_str()));
    assert_eq!(
        root_el.attribute("failures").unwrap(),
        count("failure").to_string()
    );
    assert_eq!(
        root_el.attribute("errors").unwrap(),
        count("error").to_string()
    );
    // ...and its twins, broken, are not.
    for (what, bad) in broken_junit(&xml) {
        assert!(
            !junit::problems(&bad).is_empty(),
            "the JUnit check accepted {what}"
        );
    }

    // Markdown: the table, a line per gate; appended to the step summary.
    let md = std::fs::read_to_string(reports.join("summary.md")).unwrap();
    assert!(
        md.contains("| row | server | verdict | figures | reason |"),
        "{md}"
    );
    for id in ["C5", "E15", "E19"] {
        assert!(md.contains(&format!("| {id} | granian | ")), "{md}");
    }
    let summary = std::fs::read_to_string(&step).unwrap();
    assert!(summary.starts_with("earlier step\n"), "{summary}");
    assert!(summary.contains(&md), "{summary}");
}

#[test]
fn a_failing_row_is_a_failed_testcase_carrying_its_figure() {
    let dir = tempfile::tempdir().unwrap();
    let row = edited_row(
        dir.path(),
        "E19-one-thread.yaml",
        &[("threads: 2", "threads: 1")],
    );
    let out = runner()
        .arg("gate")
        .arg(&row)
        .args(["--trials", "2", "--server", "granian"])
        .arg("--junit")
        .arg(dir.path().join("junit.xml"))
        .arg("--json-file")
        .arg(dir.path().join("report.json"))
        .env("GITHUB_ACTIONS", "true")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = read_json(&dir.path().join("report.json"));
    let result = &report["results"][0];
    assert_eq!(result["verdict"], "fail", "{}", result["reason"]);
    assert_eq!(out.status.code(), Some(1));
    // The figure that decided: the wall ratio, or (no free core) the
    // scheduler witness's parallelism; either way it opens the reason, and
    // the key figures (the headline) travel with it.
    common::JsonRun::assert_pair_figures(&result["figures"], false);
    let reason = result["reason"].as_str().unwrap();
    let opening: String = reason.chars().take(40).collect();
    let figure = result["headline"].as_str().unwrap().to_string();
    assert!(!figure.is_empty());

    let xml = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert_junit(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    assert_eq!(case.attribute("name"), Some("E19::granian"));
    let failure = case
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("a <failure> in the testcase");
    let message = failure.attribute("message").unwrap();
    assert!(
        message.starts_with(&format!("fail: {opening}")),
        "{message}"
    );
    assert!(message.contains(&figure), "{figure} not in {message}");
    assert!(failure.text().unwrap().contains("confidence: "));
    let system_out = case
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(system_out.contains("server log tail"), "{system_out}");
    assert!(
        system_out.contains("<= 1.35x"),
        "the table, unescaped by the parser"
    );

    // The annotation points at the row file and the line of its `id:`.
    let annotation = format!(
        "::error file={},line={},title=E19%3A%3Agranian::fail: {opening}",
        row.display(),
        result["row"]["line"]
    );
    assert!(
        stdout.contains(&annotation),
        "no {annotation:?} in\n{stdout}"
    );
}

#[test]
fn report_paths_that_are_folders_are_refused_before_any_gate() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--junit", "--json-file", "--markdown"] {
        let out = runner()
            .args(["gate", "E19", flag])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(flag) && stderr.contains("is a folder"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// A one-result `gate --json-file` report: E19 (this checkout's claim) on
/// `server`, with `verdict`.
fn e19_report(server: &str, verdict: &str) -> String {
    let rows =
        runner::spec::row::resolve_rows(&common::root().join("specs"), &["E19".into()]).unwrap();
    let row = &rows[0];
    serde_json::json!({
        "runner_version": "0", "interrupted": null,
        "servers": [{"name": server, "file": "x", "ready": true,
                     "version": format!("{server} 1.0"), "note": null}],
        "results": [{
            "row": {"id": "E19", "title": row.title, "claim": row.claim,
                    "probe": row.probe.name(), "file": "specs/E19.yaml", "line": 1},
            "profile": server, "verdict": verdict, "reason": "because",
            "headline": "1.04x/2.01x", "elapsed_ms": 900.0
        }]
    })
    .to_string()
}

#[test]
fn a_partial_matrix_merge_shows_the_cells_the_reports_hold_and_exits_by_them() {
    // E19 on granian and E19 on waitress, merged with no ROWs nor
    // --servers: two cells, both passes, exit 0 (it printed every row by
    // every profile, with 34 missing, and exited 2).
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, e19_report("granian", "pass")).unwrap();
    std::fs::write(&b, e19_report("waitress", "pass")).unwrap();
    let merged = |extra: &[&str]| {
        let out = runner()
            .args(["matrix", "--json", "--from"])
            .args([&a, &b])
            .args(extra)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), doc)
    };
    let (code, doc) = merged(&[]);
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{doc:#}");
    assert!(cells.iter().all(|c| c["verdict"] == "pass"), "{doc:#}");
    assert_eq!(code, Some(0));
    // The twin: asking for a server no report holds shows it missing, exit 2.
    let (code, doc) = merged(&["--servers", "granian,waitress,gunicorn"]);
    let missing: Vec<&Value> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["text"] == "missing")
        .collect();
    assert_eq!(missing.len(), 1, "{doc:#}");
    assert_eq!(code, Some(2));
}
