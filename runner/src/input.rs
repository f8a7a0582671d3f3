//! Inputs: what a caller asks the engine for, before it is checked. The
//! CLI builds them from flags and the row loaders from YAML keys; the
//! engine checks them once and, when a value is wrong, says which field,
//! never which flag or key: each caller names the field its own way
//! (`--threads` on the command line, `sweep.threads` in a sweep row).

use std::fmt;

/// A field of a request whose value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError<F> {
    pub field: F,
    /// The value as given, when the message is about one value of it.
    pub value: Option<String>,
    /// What is wrong and what to give instead.
    pub message: String,
}

impl<F> FieldError<F> {
    pub fn new(field: F, message: impl Into<String>) -> Self {
        Self {
            field,
            value: None,
            message: message.into(),
        }
    }

    pub fn value(mut self, value: impl fmt::Display) -> Self {
        self.value = Some(value.to_string());
        self
    }

    /// The same error about another field (a part request inside a larger
    /// one: the load window inside a sweep).
    pub fn map<G>(self, field: impl FnOnce(F) -> G) -> FieldError<G> {
        FieldError {
            field: field(self.field),
            value: self.value,
            message: self.message,
        }
    }

    /// `NAME VALUE: message`, or `NAME: message`, with the caller's name of
    /// the field.
    pub fn named(&self, name: &str) -> String {
        match &self.value {
            Some(v) => format!("{name} {v}: {}", self.message),
            None => format!("{name}: {}", self.message),
        }
    }

    /// `VALUE: message`, or the message alone: for a caller that says the
    /// field's name elsewhere (a row error's `key`).
    pub fn detail(&self) -> String {
        match &self.value {
            Some(v) => format!("{v}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_caller_names_the_field() {
        let e = FieldError::new("threads", "use 1 to 256").value(0);
        assert_eq!(e.named("--threads"), "--threads 0: use 1 to 256");
        assert_eq!(e.detail(), "0: use 1 to 256");
        let e = FieldError::new("paths", "give at least one route");
        assert_eq!(e.named("--path"), "--path: give at least one route");
        assert_eq!(e.map(|_| 1).field, 1);
    }
}
