//! The interface between a server and an app: WSGI (PEP 3333, a callable of
//! `(environ, start_response)`) or ASGI (a coroutine callable of `(scope,
//! receive, send)`). A profile says which one its server speaks; the app's
//! is found by importing it (`crate::host::interface`), or given.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// WSGI or ASGI.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Deserialize,
    Serialize,
    JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Interface {
    /// PEP 3333: `app(environ, start_response)`, run on a handler thread.
    #[default]
    Wsgi,
    /// ASGI 3: `await app(scope, receive, send)`, run on an event loop.
    Asgi,
}

impl Interface {
    pub const ALL: [Interface; 2] = [Interface::Wsgi, Interface::Asgi];

    pub fn name(self) -> &'static str {
        match self {
            Interface::Wsgi => "wsgi",
            Interface::Asgi => "asgi",
        }
    }

    /// The name as users write it (`WSGI`).
    pub fn upper(self) -> &'static str {
        match self {
            Interface::Wsgi => "WSGI",
            Interface::Asgi => "ASGI",
        }
    }

    /// Parses `wsgi` or `asgi` (any case).
    pub fn parse(text: &str) -> Option<Interface> {
        Interface::ALL
            .into_iter()
            .find(|i| i.name().eq_ignore_ascii_case(text.trim()))
    }

    /// The profile served when none is named: granian for WSGI, uvicorn
    /// (the ASGI server most apps are deployed on) for ASGI.
    pub fn default_server(self) -> &'static str {
        match self {
            Interface::Wsgi => "granian",
            Interface::Asgi => "uvicorn",
        }
    }
}

impl std::fmt::Display for Interface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.upper())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_and_nothing_else() {
        assert_eq!(Interface::parse("ASGI"), Some(Interface::Asgi));
        assert_eq!(Interface::parse("wsgi"), Some(Interface::Wsgi));
        for bad in ["", "rsgi", "asgi3", "w sgi"] {
            assert_eq!(Interface::parse(bad), None, "{bad}");
        }
    }
}
