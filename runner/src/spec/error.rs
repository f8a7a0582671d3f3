//! Errors in rows and profiles: always a file, a line and column, and the key
//! at fault, because the fix is an edit to that file.

use std::fmt;
use std::path::PathBuf;

use super::locate::Location;

/// A row or profile file that cannot be used.
#[derive(Debug, Clone)]
pub struct SpecError {
    pub file: PathBuf,
    pub location: Option<Location>,
    /// The offending key path (`modes.holding.path`), where one is known.
    pub key: Option<String>,
    pub message: String,
}

impl SpecError {
    pub fn new(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        let file = file.into();
        // An error about a file's content with no better position (empty,
        // oversized, several YAML documents) points at its first line, so
        // every such message reads `file:line:` for editors and CI
        // annotations; `at` replaces it. Folders and missing files get none.
        let location = file.is_file().then_some(Location { line: 1, column: 1 });
        Self {
            file,
            location,
            key: None,
            message: message.into(),
        }
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(loc) = self.location {
            write!(f, ":{}:{}", loc.line, loc.column)?;
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "`{key}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for SpecError {}

/// Turns a YAML parse error into a [`SpecError`] with its position.
pub fn from_yaml(file: &std::path::Path, err: &serde_norway::Error) -> SpecError {
    let mut message = err.to_string();
    // serde_norway appends " at line L column C"; we print the position
    // up front in the `file:line:col` form editors jump to.
    if let Some(i) = message.find(" at line ") {
        message.truncate(i);
    }
    let mut e = SpecError::new(file, message);
    if let Some(loc) = err.location() {
        e = e.at(Location {
            line: loc.line(),
            column: loc.column(),
        });
    }
    e
}
