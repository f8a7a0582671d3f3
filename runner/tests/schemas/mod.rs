//! The report shapes, for the tests: runner/schema/report.schema.json
//! through the `jsonschema` crate, the JUnit report through [`junit`], a
//! check of the fields GitHub's test-report actions read.

#![allow(dead_code)]

pub mod junit;

use serde_json::Value;

use crate::common::root;

pub fn json_schema() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("runner/schema/report.schema.json")).unwrap(),
    )
    .unwrap();
    jsonschema::meta::validate(&schema).expect("report.schema.json is a valid JSON Schema");
    jsonschema::validator_for(&schema).unwrap()
}

/// Every schema violation in `report`, as `path: message`.
pub fn json_errors(validator: &jsonschema::Validator, report: &Value) -> Vec<String> {
    validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Panics with every problem unless `xml` is a JUnit report the actions read.
pub fn assert_junit(xml: &str) {
    let problems = junit::problems(xml);
    assert!(problems.is_empty(), "{problems:#?}\n{xml}");
}
