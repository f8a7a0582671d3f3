//! Validated options: what the CLI asked for, checked once, with messages
//! that name the flag to change.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::{GateArgs, RunArgs};
use crate::host::limits::Limits;
use crate::spec::row::Row;
use crate::spec::Trials;

/// How gates run, from `--trials`, `--request-timeout-ms`, `--machine-wait-ms`.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    pub trials: Option<u32>,
    pub limits: Limits,
}

impl RunOptions {
    pub fn from_args(args: &RunArgs) -> Result<Self, String> {
        if let Some(t) = args.trials {
            if !(1..=1000).contains(&t) {
                return Err(format!("--trials {t}: use a number from 1 to 1000"));
            }
        }
        if !(100..=600_000).contains(&args.request_timeout_ms) {
            return Err(format!(
                "--request-timeout-ms {}: use 100 to 600000",
                args.request_timeout_ms
            ));
        }
        Ok(Self {
            trials: args.trials,
            limits: Limits {
                request: Duration::from_millis(args.request_timeout_ms),
                machine_wait: Duration::from_millis(args.machine_wait_ms),
            },
        })
    }

    /// `--trials N` makes the row run exactly N trials.
    pub fn apply(&self, row: &mut Row) {
        if let Some(t) = self.trials {
            row.trials = Trials { min: t, max: t };
        }
    }
}

/// Options for `runner gate`.
#[derive(Debug, Clone)]
pub struct GateOptions {
    pub rows: Vec<String>,
    pub server: String,
    pub json: bool,
    /// Report files: `--json-file`, `--junit`, `--markdown`.
    pub json_file: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub run: RunOptions,
}

impl GateOptions {
    pub fn from_args(args: &GateArgs) -> Result<Self, String> {
        let run = RunOptions::from_args(&args.run)?;
        for (flag, path) in [
            ("--json-file", &args.json_file),
            ("--junit", &args.junit),
            ("--markdown", &args.markdown),
        ] {
            report_path(flag, path.as_deref())?;
        }
        Ok(Self {
            rows: args.rows.clone(),
            server: args.server.clone(),
            json: args.json,
            json_file: args.json_file.clone(),
            junit: args.junit.clone(),
            markdown: args.markdown.clone(),
            run,
        })
    }
}

/// A report file must be a file path (its folder is created when missing).
pub fn report_path(flag: &str, path: Option<&Path>) -> Result<(), String> {
    match path {
        Some(p) if p.as_os_str().is_empty() => Err(format!("{flag}: give a file path")),
        Some(p) if p.is_dir() => Err(format!(
            "{flag} {}: is a folder; give a file path inside it",
            p.display()
        )),
        _ => Ok(()),
    }
}
