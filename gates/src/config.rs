//! The harness's settings, from the environment (cargo and nextest own the
//! command line): how CI treats "cannot judge", which servers run by
//! default, and where the rows are. A bad value is an error naming the
//! variable, never a silent default.

use std::path::PathBuf;

/// `GATES_CANNOT_JUDGE`: what a "cannot judge" verdict does to its trial.
pub const CANNOT_JUDGE_VAR: &str = "GATES_CANNOT_JUDGE";
/// `GATES_SERVERS`: the servers whose trials run by default.
pub const SERVERS_VAR: &str = "GATES_SERVERS";
/// `GATES_SPECS`: the folder of row files (default: the project's specs/).
pub const SPECS_VAR: &str = "GATES_SPECS";

/// The server whose trials run when `GATES_SERVERS` is unset.
pub const DEFAULT_SERVER: &str = "granian";

/// How a "cannot judge" verdict counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CannotJudge {
    /// The default: the trial fails, its message opening "cannot judge:".
    /// A gate that could not have failed is never a pass.
    Fail,
    /// The trial is ignored with the reason as its note: for runners known
    /// to be too small (no free core) where failing every run helps nobody.
    Ignore,
}

/// Which servers' trials run unless asked for (`--ignored`,
/// `--include-ignored`); the others are listed as ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerChoice {
    All,
    Named(Vec<String>),
}

impl ServerChoice {
    pub fn runs_by_default(&self, server: &str) -> bool {
        match self {
            ServerChoice::All => true,
            ServerChoice::Named(names) => names.iter().any(|n| n == server),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub cannot_judge: CannotJudge,
    pub servers: ServerChoice,
    pub specs: Option<PathBuf>,
}

impl Config {
    pub fn from_env() -> Result<Self, String> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// The settings from `get` (the environment, or a test's map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let cannot_judge = match get(CANNOT_JUDGE_VAR).as_deref().map(str::trim) {
            None | Some("") | Some("fail") => CannotJudge::Fail,
            Some("ignore") => CannotJudge::Ignore,
            Some(other) => {
                return Err(format!(
                    "{CANNOT_JUDGE_VAR}={other:?}: use `fail` (the default) or `ignore`"
                ))
            }
        };
        let servers = match get(SERVERS_VAR).as_deref().map(str::trim) {
            None | Some("") => ServerChoice::Named(vec![DEFAULT_SERVER.into()]),
            Some("all") => ServerChoice::All,
            Some(list) => {
                let names: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
                if names.iter().any(|n| n.is_empty()) {
                    return Err(format!(
                        "{SERVERS_VAR}={list:?}: an empty name; give server names separated by commas, or `all`"
                    ));
                }
                ServerChoice::Named(names)
            }
        };
        let specs = get(SPECS_VAR)
            .filter(|s| !s.trim().is_empty())
            .map(PathBuf::from);
        Ok(Self {
            cannot_judge,
            servers,
            specs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_fail_on_cannot_judge_and_run_granian() {
        let c = config(&[]).unwrap();
        assert_eq!(c.cannot_judge, CannotJudge::Fail);
        assert!(c.servers.runs_by_default("granian"));
        assert!(!c.servers.runs_by_default("gunicorn"));
        assert_eq!(c.specs, None);
    }

    #[test]
    fn opt_outs_and_choices_are_read() {
        let c = config(&[
            ("GATES_CANNOT_JUDGE", "ignore"),
            ("GATES_SERVERS", "gunicorn, waitress"),
        ])
        .unwrap();
        assert_eq!(c.cannot_judge, CannotJudge::Ignore);
        assert!(c.servers.runs_by_default("waitress"));
        assert!(!c.servers.runs_by_default("granian"));
        assert!(config(&[("GATES_SERVERS", "all")])
            .unwrap()
            .servers
            .runs_by_default("uwsgi"));
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = config(&[("GATES_CANNOT_JUDGE", "pass")]).unwrap_err();
        assert!(e.contains("GATES_CANNOT_JUDGE=\"pass\""), "{e}");
        let e = config(&[("GATES_SERVERS", "granian,,x")]).unwrap_err();
        assert!(e.contains("GATES_SERVERS"), "{e}");
    }
}
