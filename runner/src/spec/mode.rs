//! Modes: the one under test and the control that proves the probe can fail,
//! each with its route, its server knobs and its bound.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::check::{check_settings, key, ratio_in_range, ErrAt};
use super::error::SpecError;
use super::settings::ServerSettings;

/// One mode of a row, as written.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeFile {
    pub role: Role,
    /// The route (pair-ratio); `/work` routes get `kib` and `seed` added.
    pub path: Option<String>,
    /// Knobs for this mode's server, over the row's `server:`.
    pub server: Option<ServerSettings>,
    pub ratio_at_most: Option<f64>,
    pub ratio_at_least: Option<f64>,
    /// Pair-ratio, on Linux: the scheduler witness's runnable parallelism
    /// of the serving threads over each pair (about 2 when both could run,
    /// about 1 when they took turns behind a lock) must read at least this.
    pub parallelism_at_least: Option<f64>,
    /// ...or at most this. One of the two, on the same side as the ratio
    /// bound's meaning: a mode whose ratio is at most ~1 is parallel.
    pub parallelism_at_most: Option<f64>,
}

/// What a mode is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The claim: this mode must meet its expectation.
    UnderTest,
    /// The proof the probe can fail: this mode must separate from the other,
    /// or the verdict is "cannot judge".
    Control,
}

/// A validated mode: its route (where it has one), the server it runs on
/// (the row's settings with the mode's own over them) and its bound.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Mode {
    pub name: String,
    pub path: String,
    pub server: ServerSettings,
    pub bound: RatioBound,
    /// The scheduler witness's bound on runnable parallelism, where the
    /// row sets one.
    pub witness_bound: Option<RatioBound>,
}

/// A one-sided limit on a ratio.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RatioBound {
    AtMost(f64),
    AtLeast(f64),
}

impl RatioBound {
    pub fn holds(self, value: f64) -> bool {
        match self {
            RatioBound::AtMost(limit) => value <= limit,
            RatioBound::AtLeast(limit) => value >= limit,
        }
    }

    /// How far `value` stands from the bound, on the side it is on
    /// (positive: the bound holds; negative: it is violated).
    pub fn margin(self, value: f64) -> f64 {
        match self {
            RatioBound::AtMost(limit) => limit - value,
            RatioBound::AtLeast(limit) => value - limit,
        }
    }
}

impl std::fmt::Display for RatioBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RatioBound::AtMost(v) => write!(f, "<= {v:.2}x"),
            RatioBound::AtLeast(v) => write!(f, ">= {v:.2}x"),
        }
    }
}

/// The one under-test and one control mode of a block at `prefix`.
pub fn validate_modes(
    block: &str,
    prefix: &[&str],
    modes: &BTreeMap<String, ModeFile>,
    row_server: &ServerSettings,
    needs_path: bool,
    takes_witness: bool,
    err: &ErrAt<'_>,
) -> Result<(Mode, Mode), SpecError> {
    let at_modes = key(prefix, "modes");
    if modes.len() != 2 {
        return Err(err(
            &at_modes,
            format!(
                "has {} modes; a {block} row has exactly two: one under-test, one control",
                modes.len()
            ),
        ));
    }
    let mut under_test = None;
    let mut control = None;
    for (name, mode) in modes {
        let at = |k: &'static str| {
            let mut v = at_modes.clone();
            v.push(name.as_str());
            v.push(k);
            v
        };
        let path = match (&mode.path, needs_path) {
            (Some(p), true) => {
                if !p.starts_with('/') || p.contains(char::is_whitespace) {
                    return Err(err(
                        &at("path"),
                        format!("{p:?} must be a route starting with / and without spaces"),
                    ));
                }
                p.clone()
            }
            (None, true) => {
                return Err(err(
                    &at("role"),
                    "needs a `path` (the route this mode requests)".into(),
                ))
            }
            (Some(_), false) => {
                return Err(err(
                    &at("path"),
                    format!("a {block} mode takes no `path`; its routes are fixed by the probe"),
                ))
            }
            (None, false) => String::new(),
        };
        let bound = match (mode.ratio_at_most, mode.ratio_at_least) {
            (Some(v), None) => RatioBound::AtMost(v),
            (None, Some(v)) => RatioBound::AtLeast(v),
            _ => {
                return Err(err(
                    &at("role"),
                    "needs exactly one of ratio_at_most and ratio_at_least".into(),
                ))
            }
        };
        let (RatioBound::AtMost(v) | RatioBound::AtLeast(v)) = bound;
        ratio_in_range(&at("role"), v, err)?;
        let witness_bound = match (mode.parallelism_at_most, mode.parallelism_at_least) {
            (None, None) => None,
            (Some(_), Some(_)) => {
                return Err(err(
                    &at("parallelism_at_least"),
                    "give at most one of parallelism_at_most and parallelism_at_least".into(),
                ))
            }
            _ if !takes_witness => {
                return Err(err(
                    &at("role"),
                    format!("a {block} mode takes no parallelism bound; only pair-ratio modes are witnessed"),
                ))
            }
            (Some(v), None) => Some(RatioBound::AtMost(v)),
            (None, Some(v)) => Some(RatioBound::AtLeast(v)),
        };
        if let Some(RatioBound::AtMost(v) | RatioBound::AtLeast(v)) = witness_bound {
            ratio_in_range(&at("role"), v, err)?;
        }
        let server = match &mode.server {
            Some(over) => {
                check_settings(&at("server"), over, err)?;
                row_server.overlaid(over)
            }
            None => row_server.clone(),
        };
        let slot = match mode.role {
            Role::UnderTest => &mut under_test,
            Role::Control => &mut control,
        };
        if slot.is_some() {
            return Err(err(
                &at("role"),
                format!(
                    "a second {:?} mode; a {block} row has one mode under test and one control",
                    mode.role
                ),
            ));
        }
        *slot = Some(Mode {
            name: name.clone(),
            path,
            server,
            bound,
            witness_bound,
        });
    }
    match (under_test, control) {
        (Some(u), Some(c)) if u.path == c.path && u.server == c.server => Err(err(
            &at_modes,
            format!(
                "{} and {} are the same measurement (same route, same server); only noise could separate them. \
                 Give them different routes or different `server:` knobs",
                u.name, c.name
            ),
        )),
        (Some(u), Some(c)) => Ok((u, c)),
        _ => Err(err(&at_modes, "needs one mode with role under-test and one with role control".into())),
    }
}
