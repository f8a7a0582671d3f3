//! The report schemas, for the tests: runner/schema/report.schema.json
//! through the `jsonschema` crate, runner/schema/junit.xsd through
//! [`xsd`], a focused validator.

#![allow(dead_code)]

pub mod xsd;

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

pub fn junit_schema() -> xsd::Schema {
    xsd::Schema::parse(&std::fs::read_to_string(root().join("runner/schema/junit.xsd")).unwrap())
        .unwrap()
}
