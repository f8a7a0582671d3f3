//! Where a command's output goes, handed in by the binary: the engine
//! never prints, it writes to the [`Console`] it is given (the binary's is
//! stdout and stderr; a test's can keep the text). Stdout carries the
//! answer (a table, a verdict, or the JSON report), stderr the progress and
//! notes. [`JsonOut`] is the JSON report as every command offers it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The two streams a command writes to.
pub trait Console {
    /// The answer's stream (stdout).
    fn answer(&self) -> Box<dyn Write>;
    /// The stream of progress and notes (stderr).
    fn notes(&self) -> Box<dyn Write>;

    /// Whether the notes go to a terminal (a live progress line is
    /// redrawn in place there; plain lines otherwise).
    fn live(&self) -> bool {
        false
    }

    /// Writes `text` as it is to the answer's stream.
    fn print(&self, text: &str) {
        let mut out = self.answer();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// Writes `line` and a newline to the notes' stream.
    fn note(&self, line: &str) {
        let _ = writeln!(self.notes(), "{line}");
    }

    /// The answer's stream, or the notes' when `json` takes the answer's.
    fn screen(&self, json: bool) -> Box<dyn Write> {
        if json {
            self.notes()
        } else {
            self.answer()
        }
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

/// The JSON report: `json` prints it on the answer's stream (instead of
/// the text; progress stays on the notes'), `file` writes it.
#[derive(Debug, Clone, Default)]
pub struct JsonOut {
    pub json: bool,
    pub file: Option<PathBuf>,
}

impl JsonOut {
    /// Checks the file's path before anything runs.
    pub fn check(&self) -> Result<(), String> {
        report_path("--json-file", self.file.as_deref())
    }

    /// Prints `json` when asked and writes its file; true when the answer's
    /// stream carries it (the caller prints the text otherwise).
    pub fn emit(&self, console: &dyn Console, json: &str) -> Result<bool, String> {
        if let Some(path) = &self.file {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    format!(
                        "--json-file {}: cannot create {}: {e}",
                        path.display(),
                        dir.display()
                    )
                })?;
            }
            std::fs::write(path, with_newline(json))
                .map_err(|e| format!("--json-file {}: cannot write: {e}", path.display()))?;
            console.note(&format!("wrote {}", path.display()));
        }
        if self.json {
            console.print(&with_newline(json));
        }
        Ok(self.json)
    }

    /// [`Self::emit`] of a value, serialised.
    pub fn emit_value<T: serde::Serialize>(
        &self,
        console: &dyn Console,
        value: &T,
    ) -> Result<bool, String> {
        if !self.json && self.file.is_none() {
            return Ok(false);
        }
        let json = serde_json::to_string_pretty(value)
            .map_err(|e| format!("cannot write the JSON report: {e}"))?;
        self.emit(console, &json)
    }

    /// The JSON of `value` when asked for, else `text`, on the answer's
    /// stream.
    pub fn answer<T: serde::Serialize>(
        &self,
        console: &dyn Console,
        value: &T,
        text: impl FnOnce(&T) -> String,
    ) -> Result<(), String> {
        if !self.emit_value(console, value)? {
            console.print(&text(value));
        }
        Ok(())
    }
}

fn with_newline(text: &str) -> String {
    if text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}
