//! Verdicts: the four outcomes of a gate, the warnings beside them, and a
//! judgement over one probe kind's figures. Each kind judges its own figures
//! (`probe/<kind>/judge.rs`); what they share lives here.
//!
//! Every row proves it can fail. Each probe has a control that must
//! separate from the mode under test; where it does not (or where the
//! machine had no free core, or the measurement broke), the verdict is
//! "cannot judge", never pass.

use schemars::JsonSchema;
use serde::Serialize;

use crate::spec::RatioBound;

/// The four outcomes of a gate. Each is written the ways [`Spelling`] lists,
/// and nowhere else: JSON, JUnit, Markdown, the terminal and the `gates`
/// harness all read [`Verdict::spelling`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    CannotJudge,
    NotApplicable,
}

/// The JUnit element a verdict becomes inside its `<testcase>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JunitElement {
    Failure,
    Error,
    Skipped,
}

/// Every way one verdict is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spelling {
    /// For machines: the JSON reports, JUnit's `type`, stress counts.
    pub name: &'static str,
    /// In prose and messages (`cannot judge: no free core`).
    pub word: &'static str,
    /// The terminal's label: a failure stands out.
    pub label: &'static str,
    /// A matrix cell, before its figures.
    pub cell: &'static str,
    /// A Markdown table cell: what needs a look is bold.
    pub markdown: &'static str,
    /// What the verdict is in a JUnit `<testcase>`; none for a pass.
    pub junit: Option<JunitElement>,
}

/// The one table of spellings, in the order of [`Verdict`]'s variants.
const SPELLINGS: [Spelling; 4] = [
    Spelling {
        name: "pass",
        word: "pass",
        label: "pass",
        cell: "pass",
        markdown: "pass",
        junit: None,
    },
    Spelling {
        name: "fail",
        word: "fail",
        label: "FAIL",
        cell: "fail",
        markdown: "**FAIL**",
        junit: Some(JunitElement::Failure),
    },
    Spelling {
        name: "cannot-judge",
        word: "cannot judge",
        label: "cannot judge",
        cell: "cannot judge",
        markdown: "**cannot judge**",
        junit: Some(JunitElement::Error),
    },
    Spelling {
        name: "not-applicable",
        word: "not applicable",
        label: "not applicable",
        cell: "n/a",
        markdown: "n/a",
        junit: Some(JunitElement::Skipped),
    },
];

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::CannotJudge,
        Verdict::NotApplicable,
    ];

    /// Every way this verdict is written.
    pub fn spelling(self) -> &'static Spelling {
        &SPELLINGS[self as usize]
    }

    /// The machine name (`cannot-judge`), as JSON has it.
    pub fn name(self) -> &'static str {
        self.spelling().name
    }

    /// The name in prose (`cannot judge`).
    pub fn word(self) -> &'static str {
        self.spelling().word
    }

    /// The terminal's label (`FAIL`).
    pub fn label(self) -> &'static str {
        self.spelling().label
    }
}

/// The report schema lists the verdicts by their [`Verdict::name`], the
/// spelling `Serialize` writes.
impl JsonSchema for Verdict {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Verdict".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.name()).collect();
        schemars::json_schema!({
            "description": "The outcome of a gate.",
            "type": "string",
            "enum": names,
        })
    }
}

/// Reads a verdict by its [`Verdict::name`] (a report written earlier, for
/// `matrix --from`).
impl<'de> serde::Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Verdict::ALL
            .into_iter()
            .find(|v| v.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.name()).collect();
                serde::de::Error::custom(format!(
                    "verdict {name:?} is none of {}",
                    names.join(", ")
                ))
            })
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Things worth knowing that do not change the verdict: the cause and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Warning {
    /// A mode's route has no digest, so nothing proves its work happened.
    UnverifiedWork { mode: String, path: String },
    /// The pair of the mode under test was only ever served by one thread.
    OneThread { mode: String },
    /// The server told the app its peer ports byte-swapped.
    SwappedPeerPort,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::UnverifiedWork { mode, path } => write!(
                f,
                "mode {mode} ({path}) has no digest to check, so nothing proves the work happened; \
                 use a /work route (fixed work) rather than a deadline or sleep route"
            ),
            Warning::SwappedPeerPort => write!(
                f,
                "the server reports each client port to the app with its two bytes swapped (uWSGI's HTTP router, \
                 unbit/uwsgi#1889); the runner matched connections on the swapped port"
            ),
            Warning::OneThread { mode } => write!(
                f,
                "every {mode} pair was served by a single server thread; check the row's `server.threads` \
                 and the profile's `knobs.threads`"
            ),
        }
    }
}

/// A verdict with its one-line reason and how sure it is, over one probe
/// kind's figures (`F`); `probe::Judgement` is the one over any kind's.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Judged<F> {
    pub verdict: Verdict,
    pub reason: String,
    /// In words: how many trials agree and by what margin.
    pub confidence: String,
    pub figures: Option<F>,
    pub warnings: Vec<Warning>,
    /// The key figure in a few characters, for summaries and matrix cells
    /// (`1.04x/2.01x`); empty when there is none.
    pub headline: String,
    /// Why more trials could still change this verdict (a named figure
    /// within its margin, too few trials with a free core); `None` once the
    /// figures decide it. The trial loop stops when it is `None`.
    #[serde(skip)]
    pub unsettled: Option<String>,
}

impl<F> Judged<F> {
    /// A verdict with no figures (a server that would not start, a row
    /// that does not apply, a broken measurement): final.
    pub fn bare(verdict: Verdict, reason: String) -> Self {
        Self {
            verdict,
            reason,
            confidence: "no verdict".into(),
            figures: None,
            warnings: Vec::new(),
            headline: String::new(),
            unsettled: None,
        }
    }

    /// Whether more trials could not change the verdict.
    pub fn settled(&self) -> bool {
        self.unsettled.is_none()
    }

    /// The same judgement over other figures (a kind's into the registry's).
    pub fn map<G>(self, f: impl FnOnce(F) -> G) -> Judged<G> {
        Judged {
            verdict: self.verdict,
            reason: self.reason,
            confidence: self.confidence,
            figures: self.figures.map(f),
            warnings: self.warnings,
            headline: self.headline,
            unsettled: self.unsettled,
        }
    }

    /// The judgement once the trial budget is spent: a pass or a fail that
    /// more trials could still have changed is "cannot judge", saying why
    /// and what it would have been. Never a pass from unsettled figures.
    pub fn concluded(mut self) -> Self {
        if let Some(why) = self.unsettled.take() {
            if matches!(self.verdict, Verdict::Pass | Verdict::Fail) {
                self.reason = format!(
                    "{why}; would have been {} ({})",
                    self.verdict.label(),
                    self.reason
                );
                self.verdict = Verdict::CannotJudge;
            }
        }
        self
    }
}

/// How far a value stands from a bound, on the side it is on (positive: the
/// bound holds; negative: it is violated).
pub fn margin(value: f64, bound: RatioBound) -> f64 {
    bound.margin(value)
}

/// A gate that ended before its probe had figures: the verdict (cannot
/// judge, or not applicable), why, and the server log tail worth showing.
#[derive(Debug, Clone)]
pub struct Stop {
    pub verdict: Verdict,
    pub reason: String,
    pub log_tail: Option<String>,
}

impl Stop {
    pub fn cannot_judge(reason: impl Into<String>) -> Self {
        Self {
            verdict: Verdict::CannotJudge,
            reason: reason.into(),
            log_tail: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_variant_order_and_the_names_are_what_json_says() {
        let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names, ["pass", "fail", "cannot-judge", "not-applicable"]);
        for v in Verdict::ALL {
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::Value::from(v.name())
            );
        }
        // Only a pass has no JUnit element; every other verdict has its own.
        let elements: Vec<_> = Verdict::ALL.iter().map(|v| v.spelling().junit).collect();
        assert_eq!(
            elements,
            [
                None,
                Some(JunitElement::Failure),
                Some(JunitElement::Error),
                Some(JunitElement::Skipped)
            ]
        );
    }

    #[test]
    fn the_names_are_the_report_schemas_verdicts() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schema/report.schema.json")).unwrap();
        let mut found = None;
        find_verdict_enum(&schema, &mut found);
        let listed: Vec<&str> = found
            .expect("report.schema.json lists the verdicts")
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(listed, names);
    }

    /// The `enum` under a `verdict` property, wherever it is.
    fn find_verdict_enum<'a>(
        v: &'a serde_json::Value,
        found: &mut Option<&'a Vec<serde_json::Value>>,
    ) {
        match v {
            serde_json::Value::Object(map) => {
                // Inline under a `verdict` property, or the `Verdict`
                // definition the properties refer to.
                for key in ["verdict", "Verdict"] {
                    if let Some(list) = map
                        .get(key)
                        .and_then(|p| p.get("enum"))
                        .and_then(|e| e.as_array())
                    {
                        *found = Some(list);
                    }
                }
                map.values().for_each(|x| find_verdict_enum(x, found));
            }
            serde_json::Value::Array(items) => {
                items.iter().for_each(|x| find_verdict_enum(x, found))
            }
            _ => {}
        }
    }
}
