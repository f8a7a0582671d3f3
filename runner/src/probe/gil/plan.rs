//! What a GIL probe is asked: the `gil:` block as written ([`GilBlock`]),
//! and the validated plan the instrument runs ([`GilPlan`]).
//!
//! The block is the same for a row in `specs/` and for `runner gil-probe`
//! (the command builds one from its flags), so both are checked by one
//! function and fail with the same messages. A [`PlanError`] names the key at
//! fault; a row loader adds the file and line, the command the flag.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::requires::Requirement;

/// The `gil:` block as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GilBlock {
    /// The call under test, `module:function` (`time:sleep`,
    /// `package.module:Class.method`). Exactly one of `call` and `setup`.
    pub call: Option<String>,
    /// `module:function` run once per worker thread with `args`; it returns
    /// `(callable, args)`, so a per-thread handle can be opened there.
    pub setup: Option<String>,
    /// Arguments as Python literals (`0.005`, `"'text'"`, `[1, 2]`), given to
    /// the call, or to the setup when there is one.
    #[serde(default)]
    pub args: Vec<PyLiteral>,
    /// The answer this row claims; unset: report whichever it is.
    pub expect: Option<Expect>,
    /// Length of one round of one arm.
    pub round_ms: Option<u32>,
    /// Rounds per arm (the call and each control), interleaved.
    pub rounds: Option<u32>,
    /// Bounds on the readings; unset keys keep [`GilBounds::DEFAULT`].
    #[serde(default)]
    pub bounds: BoundsBlock,
    /// Extra packages the call needs, pinned (`libzim==3.13.1`).
    #[serde(default)]
    pub requires: Vec<String>,
    /// Which reading: `auto` (schedstat where the kernel has it),
    /// `schedstat`, or `iterations` (the lost-iteration fallback).
    pub instrument: Option<InstrumentChoice>,
    /// Also measure calls/s on N threads and N processes, for these N.
    #[serde(default)]
    pub scale: Vec<u32>,
}

/// A Python literal: YAML numbers and booleans are taken as written; a
/// string is Python source (`"'text'"` is the string `text`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PyLiteral {
    Bool(bool),
    Int(i64),
    Float(f64),
    Source(String),
}

impl PyLiteral {
    /// The literal as Python source, for `ast.literal_eval`.
    pub fn source(&self) -> String {
        match self {
            PyLiteral::Bool(true) => "True".into(),
            PyLiteral::Bool(false) => "False".into(),
            PyLiteral::Int(i) => i.to_string(),
            // `{:?}` keeps a decimal point (1.0, not 1) and round-trips.
            PyLiteral::Float(f) if f.is_finite() => format!("{f:?}"),
            PyLiteral::Float(f) if f.is_nan() => "float('nan')".into(),
            PyLiteral::Float(f) if *f > 0.0 => "float('inf')".into(),
            PyLiteral::Float(_) => "float('-inf')".into(),
            PyLiteral::Source(s) => s.clone(),
        }
    }
}

/// Bounds as written: every key optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoundsBlock {
    pub releases_at_most: Option<f64>,
    pub holds_at_least: Option<f64>,
    pub control_releases_at_most: Option<f64>,
    pub control_half_at_least: Option<f64>,
    pub control_all_at_least: Option<f64>,
    pub busy_at_least: Option<f64>,
    pub runqueue_at_most: Option<f64>,
}

/// What the call does with the GIL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// Other Python threads run while the call runs.
    Releases,
    /// Other Python threads wait while the call runs.
    Holds,
}

impl Expect {
    pub fn name(self) -> &'static str {
        match self {
            Expect::Releases => "releases",
            Expect::Holds => "holds",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "releases" => Some(Expect::Releases),
            "holds" => Some(Expect::Holds),
            _ => None,
        }
    }
}

/// The instrument asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InstrumentChoice {
    /// schedstat where the kernel has it, else lost iterations.
    #[default]
    Auto,
    /// Only the kernel's accounting; the fallback is not taken silently.
    Schedstat,
    /// The lost-iteration fallback, also where schedstat exists (to test it).
    Iterations,
}

impl InstrumentChoice {
    pub fn name(self) -> &'static str {
        match self {
            InstrumentChoice::Auto => "auto",
            InstrumentChoice::Schedstat => "schedstat",
            InstrumentChoice::Iterations => "iterations",
        }
    }
}

/// Bounds on the readings, all fractions of the spinner's time (schedstat:
/// its blocked share; iterations: its lost share).
///
/// The defaults are measured on a 2-core Linux VM shared with parallel
/// builds (load average 8-12), with and without one more core kept busy:
/// over 120 probes, releasing calls' medians read 0.00-0.20 (the releasing
/// control 0.00-0.15), holding ones 0.36-0.73 (bytecode control 0.11-0.79,
/// PyDLL control 0.68-0.88). The answers' bounds sit either side of the
/// empty band between; see `fixtures/gilprobe/README.md` for the figures.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct GilBounds {
    /// The call releases when its median reading is at most this.
    pub releases_at_most: f64,
    /// The call holds when its median reading is at least this.
    pub holds_at_least: f64,
    /// The releasing control (CDLL usleep) must read at most this.
    pub control_releases_at_most: f64,
    /// The bytecode control (holds about half) must read at least this.
    pub control_half_at_least: f64,
    /// The PyDLL control (holds about all) must read at least this.
    pub control_all_at_least: f64,
    /// The worker must be inside the call at least this share of a round,
    /// or the reading is about the loop around the call.
    pub busy_at_least: f64,
    /// A round in which the spinner waited for a core longer than this
    /// share has no reading (the instrument marks it), and the median over
    /// every round must stay under it too: beyond it too little is left to
    /// read the lock from.
    pub runqueue_at_most: f64,
}

impl GilBounds {
    pub const DEFAULT: GilBounds = GilBounds {
        releases_at_most: 0.20,
        holds_at_least: 0.30,
        control_releases_at_most: 0.20,
        control_half_at_least: 0.25,
        control_all_at_least: 0.55,
        busy_at_least: 0.80,
        runqueue_at_most: 0.70,
    };
}

impl Default for GilBounds {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What is called: a function, or a setup that returns one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    Call(String),
    Setup(String),
}

impl Target {
    /// `time:sleep`, or `setup zimsearch:setup`.
    pub fn describe(&self) -> String {
        match self {
            Target::Call(c) => c.clone(),
            Target::Setup(s) => format!("setup {s}"),
        }
    }
}

/// A validated probe: what to call, how long, and what counts as what.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct GilPlan {
    pub target: Target,
    /// Python literal sources, in order.
    pub args: Vec<String>,
    pub expect: Option<Expect>,
    pub round_ms: u32,
    pub rounds: u32,
    pub bounds: GilBounds,
    pub requires: Vec<Requirement>,
    pub instrument: InstrumentChoice,
    /// Worker counts for the threads-against-processes table; empty: none.
    pub scale: Vec<u32>,
}

impl GilPlan {
    /// Rounds per arm when unset: five, so a median has two on each side.
    pub const DEFAULT_ROUNDS: u32 = 5;
    /// Round length when unset: 12 switch intervals; with four arms and five
    /// rounds the probe measures for about 1.3 s.
    pub const DEFAULT_ROUND_MS: u32 = 60;
    /// The most rounds and the longest round a plan may ask for.
    pub const MAX_ROUNDS: u32 = 200;
    pub const MAX_ROUND_MS: u32 = 60_000;
    /// The largest `scale` worker count.
    pub const MAX_SCALE: u32 = 64;
    /// The fewest rounds that still give a median with a neighbour each side.
    pub const MIN_ROUNDS: u32 = 3;
    /// Shorter rounds than this hold fewer than four switch intervals.
    pub const MIN_ROUND_MS: u32 = 20;

    /// The most rounds the instrument runs: the planned ones, then more while
    /// any arm lacks readable rounds (a saturated moment costs time, not the
    /// answer).
    pub fn max_rounds(&self) -> u32 {
        self.rounds * 2
    }

    /// The arguments for the instrument: its script path comes first.
    pub fn instrument_args(&self) -> Vec<String> {
        let mut argv = Vec::new();
        match &self.target {
            Target::Call(c) => argv.extend(["--call".to_string(), c.clone()]),
            Target::Setup(s) => argv.extend(["--setup".to_string(), s.clone()]),
        }
        for a in &self.args {
            // `--arg=VALUE` so that a literal starting with `-` is not a flag.
            argv.push(format!("--arg={a}"));
        }
        argv.push(format!("--rounds={}", self.rounds));
        argv.push(format!("--max-rounds={}", self.max_rounds()));
        argv.push(format!("--round-ms={}", self.round_ms));
        argv.push(format!("--max-runqueue={}", self.bounds.runqueue_at_most));
        // With the witness off (`--witness off`), auto takes the fallback a
        // platform without schedstat takes.
        let instrument = match self.instrument {
            InstrumentChoice::Auto if crate::kernel::schedstat::forced_off() => {
                InstrumentChoice::Iterations
            }
            other => other,
        };
        argv.push(format!("--instrument={}", instrument.name()));
        if !self.scale.is_empty() {
            let counts: Vec<String> = self.scale.iter().map(u32::to_string).collect();
            argv.push(format!("--scale={}", counts.join(",")));
        }
        argv
    }
}

/// A block that cannot be run: the key at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {message}")]
pub struct PlanError {
    pub key: &'static str,
    pub message: String,
}

fn err(key: &'static str, message: impl Into<String>) -> PlanError {
    PlanError {
        key,
        message: message.into(),
    }
}

/// `module:attr.path` with Python identifiers on both sides.
fn check_target(key: &'static str, target: &str) -> Result<(), PlanError> {
    let ident = |s: &str| {
        let mut chars = s.chars();
        matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
            && chars.all(|c| c == '_' || c.is_alphanumeric())
    };
    let dotted = |s: &str| !s.is_empty() && s.split('.').all(ident);
    match target.split_once(':') {
        Some((module, attr)) if dotted(module) && dotted(attr) => Ok(()),
        _ => Err(err(
            key,
            format!(
                "{target:?} is not MODULE:FUNCTION (for example time:sleep or zimsearch:setup)"
            ),
        )),
    }
}

fn fraction(key: &'static str, value: Option<f64>, default: f64) -> Result<f64, PlanError> {
    let v = value.unwrap_or(default);
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(err(key, format!("{v} is not a fraction from 0 to 1")))
    }
}

impl GilBlock {
    /// Checks every key and fills the defaults.
    pub fn validate(&self) -> Result<GilPlan, PlanError> {
        let target = match (&self.call, &self.setup) {
            (Some(c), None) => {
                check_target("call", c)?;
                Target::Call(c.clone())
            }
            (None, Some(s)) => {
                check_target("setup", s)?;
                Target::Setup(s.clone())
            }
            (Some(_), Some(_)) => {
                return Err(err(
                    "setup",
                    "give `call` or `setup`, not both (setup returns the callable)",
                ))
            }
            (None, None) => {
                return Err(err(
                    "call",
                    "missing: give `call: module:function` or `setup: module:function`",
                ))
            }
        };
        let rounds = self.rounds.unwrap_or(GilPlan::DEFAULT_ROUNDS);
        if !(GilPlan::MIN_ROUNDS..=GilPlan::MAX_ROUNDS).contains(&rounds) {
            return Err(err(
                "rounds",
                format!(
                    "{rounds}: use {} to {} (a median needs rounds either side of it)",
                    GilPlan::MIN_ROUNDS,
                    GilPlan::MAX_ROUNDS
                ),
            ));
        }
        let round_ms = self.round_ms.unwrap_or(GilPlan::DEFAULT_ROUND_MS);
        if !(GilPlan::MIN_ROUND_MS..=GilPlan::MAX_ROUND_MS).contains(&round_ms) {
            return Err(err(
                "round_ms",
                format!(
                    "{round_ms}: use {} to {} ms (a round must span several 5 ms switch intervals)",
                    GilPlan::MIN_ROUND_MS,
                    GilPlan::MAX_ROUND_MS
                ),
            ));
        }
        let mut args = Vec::with_capacity(self.args.len());
        for a in &self.args {
            let source = a.source();
            if source.trim().is_empty() || source.contains('\0') {
                return Err(err(
                    "args",
                    format!("{source:?} is not a Python literal; quote strings, e.g. \"'text'\""),
                ));
            }
            args.push(source);
        }
        let d = GilBounds::DEFAULT;
        let b = &self.bounds;
        let bounds = GilBounds {
            releases_at_most: fraction(
                "bounds.releases_at_most",
                b.releases_at_most,
                d.releases_at_most,
            )?,
            holds_at_least: fraction("bounds.holds_at_least", b.holds_at_least, d.holds_at_least)?,
            control_releases_at_most: fraction(
                "bounds.control_releases_at_most",
                b.control_releases_at_most,
                d.control_releases_at_most,
            )?,
            control_half_at_least: fraction(
                "bounds.control_half_at_least",
                b.control_half_at_least,
                d.control_half_at_least,
            )?,
            control_all_at_least: fraction(
                "bounds.control_all_at_least",
                b.control_all_at_least,
                d.control_all_at_least,
            )?,
            busy_at_least: fraction("bounds.busy_at_least", b.busy_at_least, d.busy_at_least)?,
            runqueue_at_most: fraction(
                "bounds.runqueue_at_most",
                b.runqueue_at_most,
                d.runqueue_at_most,
            )?,
        };
        if bounds.releases_at_most >= bounds.holds_at_least {
            return Err(err(
                "bounds.holds_at_least",
                format!(
                    "{} must be above releases_at_most ({}), or one reading would be both answers",
                    bounds.holds_at_least, bounds.releases_at_most
                ),
            ));
        }
        if bounds.control_releases_at_most >= bounds.control_half_at_least {
            return Err(err(
                "bounds.control_half_at_least",
                format!(
                    "{} must be above control_releases_at_most ({}), or the controls need not separate",
                    bounds.control_half_at_least, bounds.control_releases_at_most
                ),
            ));
        }
        let mut requires = Vec::with_capacity(self.requires.len());
        for r in &self.requires {
            requires.push(Requirement::parse(r).map_err(|m| err("requires", m))?);
        }
        let mut scale = self.scale.clone();
        if scale.iter().any(|n| !(1..=GilPlan::MAX_SCALE).contains(n)) {
            return Err(err(
                "scale",
                format!(
                    "{:?}: worker counts from 1 to {}",
                    self.scale,
                    GilPlan::MAX_SCALE
                ),
            ));
        }
        scale.sort_unstable();
        scale.dedup();
        Ok(GilPlan {
            target,
            args,
            expect: self.expect,
            round_ms,
            rounds,
            bounds,
            requires,
            instrument: self.instrument.unwrap_or_default(),
            scale,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(yaml: &str) -> GilBlock {
        serde_norway::from_str(yaml).unwrap()
    }

    #[test]
    fn a_minimal_block_gets_the_defaults() {
        let plan = block("call: time:sleep\nargs: [0.005]\n")
            .validate()
            .unwrap();
        assert_eq!(plan.target, Target::Call("time:sleep".into()));
        assert_eq!(plan.args, vec!["0.005".to_string()]);
        assert_eq!(plan.rounds, GilPlan::DEFAULT_ROUNDS);
        assert_eq!(plan.round_ms, GilPlan::DEFAULT_ROUND_MS);
        assert_eq!(plan.bounds, GilBounds::DEFAULT);
        assert_eq!(plan.expect, None);
    }

    #[test]
    fn literals_become_python_source() {
        let plan = block("call: m:f\nargs: [1, 2.0, true, \"'text'\", \"[1, -2]\"]\n")
            .validate()
            .unwrap();
        assert_eq!(plan.args, ["1", "2.0", "True", "'text'", "[1, -2]"]);
        let argv = plan.instrument_args();
        assert!(argv.contains(&"--arg=[1, -2]".to_string()), "{argv:?}");
    }

    #[test]
    fn a_full_block_round_trips() {
        let plan = block(
            "setup: zimsearch:setup\nexpect: holds\nround_ms: 100\nrounds: 7\n\
             bounds: {holds_at_least: 0.35}\nrequires: [libzim==3.13.1]\nscale: [2, 1, 2]\n",
        )
        .validate()
        .unwrap();
        assert_eq!(plan.target, Target::Setup("zimsearch:setup".into()));
        assert_eq!(plan.expect, Some(Expect::Holds));
        assert_eq!(plan.bounds.holds_at_least, 0.35);
        assert_eq!(
            plan.bounds.releases_at_most,
            GilBounds::DEFAULT.releases_at_most
        );
        assert_eq!(plan.requires[0].name, "libzim");
        assert_eq!(plan.scale, vec![1, 2]);
    }

    #[test]
    fn every_bad_key_is_named() {
        let cases = [
            ("args: [1]\n", "call"),
            ("call: m:f\nsetup: m:g\n", "setup"),
            ("call: sleep\n", "call"),
            ("call: 'time:'\n", "call"),
            ("setup: 'a b:c'\n", "setup"),
            ("call: m:f\nrounds: 1\n", "rounds"),
            ("call: m:f\nround_ms: 5\n", "round_ms"),
            ("call: m:f\nargs: ['']\n", "args"),
            (
                "call: m:f\nbounds: {busy_at_least: 1.5}\n",
                "bounds.busy_at_least",
            ),
            (
                "call: m:f\nbounds: {releases_at_most: 0.5, holds_at_least: 0.4}\n",
                "bounds.holds_at_least",
            ),
            ("call: m:f\nrequires: [libzim]\n", "requires"),
            ("call: m:f\nscale: [0]\n", "scale"),
        ];
        for (yaml, key) in cases {
            let e = block(yaml).validate().unwrap_err();
            assert_eq!(e.key, key, "{yaml}: {e}");
        }
    }

    #[test]
    fn unknown_keys_are_refused_by_the_parser() {
        assert!(serde_norway::from_str::<GilBlock>("call: m:f\nround: 3\n").is_err());
        assert!(serde_norway::from_str::<GilBlock>("call: m:f\nexpect: maybe\n").is_err());
    }
}
