//! Checks one server reply against what was asked: the status, the
//! connection it says it came in on, the worker that served it, and the
//! digest of the work; and why a measurement built on replies broke
//! ([`Broken`]).
//!
//! A reply is untrusted input: any status, any header bytes, any body up to
//! the transport's cap. Everything here is a pure function of plain inputs,
//! so it can be fuzzed without a server (runner/tests/reply_fuzz.rs); every
//! piece of a reply that reaches a message goes through [`clip_bytes`].

use schemars::JsonSchema;
use serde::Serialize;

use crate::http::{HttpError, Reply};
use crate::kernel::control::ControlError;
use crate::text::clip_bytes;

/// How much of a non-200 reply's body a message quotes.
pub const STATUS_BODY_BYTES: usize = 200;
/// How much of a wrong digest a message quotes (a right one is 64 bytes).
pub const DIGEST_GOT_BYTES: usize = 80;

/// What one request asked for, and what its reply must therefore say.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The mode the request measured (for messages).
    pub mode: &'a str,
    /// The path and query sent (for messages).
    pub url: &'a str,
    /// The client port of the connection the request went out on.
    pub port: u16,
    /// Whether a peer port with its two bytes swapped still names this
    /// connection: uWSGI's HTTP router hands the app REMOTE_PORT that way
    /// (unbit/uwsgi#1889).
    pub accept_swapped_port: bool,
    /// The worker process this connection was served by, where the server
    /// has several and the reply must come from the same one.
    pub pid: Option<u32>,
    /// The digest the body must carry (work routes only).
    pub digest: Option<&'a str>,
}

/// A reply that passed every check.
#[derive(Debug, Clone)]
pub struct Checked {
    pub reply: Reply,
    /// The reply named its connection's port byte-swapped (accepted only
    /// with [`Asked::accept_swapped_port`]); worth a warning.
    pub peer_port_swapped: bool,
}

/// Checks `result`, the outcome of the request `asked` describes: a failed
/// request, a non-200 status, a reply from another connection or another
/// worker, or a wrong digest is the [`Broken`] cause that makes the run
/// unusable as evidence.
pub fn check(asked: &Asked<'_>, result: Result<Reply, HttpError>) -> Result<Checked, Broken> {
    let mode = || asked.mode.to_string();
    let reply = result.map_err(|error| Broken::Request {
        mode: mode(),
        port: asked.port,
        error,
    })?;
    if reply.status != 200 {
        return Err(Broken::Status {
            mode: mode(),
            path: asked.url.into(),
            status: reply.status,
            body: clip_bytes(&reply.body, STATUS_BODY_BYTES),
        });
    }
    let mut peer_port_swapped = false;
    if let Some(seen) = reply.served_by.peer_port {
        let swapped = seen == asked.port.swap_bytes() && seen != asked.port;
        if swapped && asked.accept_swapped_port {
            peer_port_swapped = true;
        } else if seen != asked.port {
            return Err(Broken::Connection {
                mode: mode(),
                expected: asked.port,
                seen,
            });
        }
    }
    if let (Some(expected), Some(seen)) = (asked.pid, reply.served_by.pid) {
        if expected != seen {
            return Err(Broken::Worker {
                mode: mode(),
                port: asked.port,
                expected,
                seen,
            });
        }
    }
    if let Some(expected) = asked.digest {
        let got = reply.text();
        if got.trim() != expected {
            return Err(Broken::Digest {
                mode: mode(),
                path: asked.url.into(),
                got: clip_bytes(reply.body.trim_ascii(), DIGEST_GOT_BYTES),
                expected: expected.into(),
            });
        }
    }
    Ok(Checked {
        reply,
        peer_port_swapped,
    })
}

/// Why a run cannot be used as evidence at all.
#[derive(Debug, Clone, Serialize, JsonSchema, thiserror::Error)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum Broken {
    #[error("{mode}: request failed on connection :{port}: {error}")]
    Request {
        mode: String,
        port: u16,
        error: HttpError,
    },
    #[error("{mode}: HTTP {status} for {path}: {body}")]
    Status {
        mode: String,
        path: String,
        status: u16,
        body: String,
    },
    #[error("{mode}: wrong digest for {path} (got {got:?}, expected {expected}); the server did not do the work it was asked for")]
    Digest {
        mode: String,
        path: String,
        got: String,
        expected: String,
    },
    #[error("{mode}: the reply on connection :{expected} says the server saw peer port :{seen}; the request did not travel on the kept-alive connection")]
    Connection {
        mode: String,
        expected: u16,
        seen: u16,
    },
    #[error("{mode}: the reply on connection :{port} came from worker {seen}, but that connection was served by worker {expected}")]
    Worker {
        mode: String,
        port: u16,
        expected: u32,
        seen: u32,
    },
    #[error("{mode}: {opened} connections all landed on one worker ({pid}); cannot put a pair on two processes (raise connections_at_most)")]
    OneWorker { mode: String, opened: u32, pid: u32 },
    #[error("capacity control: {0}")]
    Control(
        #[serde(serialize_with = "display")]
        #[schemars(with = "String")]
        ControlError,
    ),
}

impl Broken {
    /// A 5xx: the server's own failure (a view that raised), whose log
    /// holds the why (the traceback).
    pub fn is_server_error(&self) -> bool {
        matches!(self, Broken::Status { status, .. } if *status >= 500)
    }
}

fn display<S: serde::Serializer, T: std::fmt::Display>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{served_by, ServedBy};
    use bytes::Bytes;
    use std::time::Duration;

    const DIGEST: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    fn asked() -> Asked<'static> {
        Asked {
            mode: "releasing",
            url: "/work?kib=1&seed=7",
            port: 40072,
            accept_swapped_port: true,
            pid: Some(11),
            digest: Some(DIGEST),
        }
    }

    fn reply(status: u16, body: impl Into<Bytes>, served_by: ServedBy) -> Reply {
        Reply {
            status,
            body: body.into(),
            served_by,
            elapsed: Duration::from_millis(1),
            declared_length: None,
        }
    }

    fn by(pid: Option<u32>, peer_port: Option<u16>) -> ServedBy {
        ServedBy {
            pid,
            thread_id: Some(1),
            peer_port,
            ..Default::default()
        }
    }

    fn good() -> Reply {
        reply(200, format!("{DIGEST}\n"), by(Some(11), Some(40072)))
    }

    #[test]
    fn a_right_reply_passes() {
        let c = check(&asked(), Ok(good())).unwrap();
        assert!(!c.peer_port_swapped);
        // Nothing to compare is not a mismatch.
        let bare = reply(200, DIGEST, ServedBy::default());
        assert!(check(&asked(), Ok(bare)).is_ok());
    }

    #[test]
    fn a_failed_request_is_broken() {
        let e = check(&asked(), Err(HttpError::Closed)).unwrap_err();
        assert!(matches!(e, Broken::Request { port: 40072, .. }), "{e}");
        assert!(e.to_string().contains("closed the kept-alive connection"));
    }

    #[test]
    fn a_non_200_is_broken_and_quotes_a_clipped_body() {
        // The reply that panicked at pair_ratio.rs:197: 300 "€", HTTP 500.
        let r = reply(500, "€".repeat(300), by(Some(11), Some(40072)));
        let e = check(&asked(), Ok(r)).unwrap_err();
        let Broken::Status { status, body, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(*status, 500);
        assert!(body.len() <= STATUS_BODY_BYTES + 20, "{body}");
        assert!(body.ends_with("… (900 bytes)"), "{body}");
        assert!(e.to_string().contains("HTTP 500 for /work?kib=1&seed=7"));
    }

    #[test]
    fn a_wrong_digest_is_broken_and_quotes_a_clipped_body() {
        // The same reply at 200: the digest path cut at 80 bytes (:233).
        let r = reply(200, "€".repeat(300), by(Some(11), Some(40072)));
        let e = check(&asked(), Ok(r)).unwrap_err();
        let Broken::Digest { got, expected, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(expected, DIGEST);
        assert!(
            got.starts_with('€') && got.ends_with("… (900 bytes)"),
            "{got}"
        );
        assert!(e.to_string().contains("wrong digest"));
        // Invalid UTF-8 and a character cut at the end read lossily.
        let mut cut = "€".repeat(300).into_bytes();
        cut.pop();
        for body in [vec![0xff, 0xfe, 0x00, 0x80], cut] {
            let r = reply(200, body, by(Some(11), Some(40072)));
            assert!(matches!(check(&asked(), Ok(r)), Err(Broken::Digest { .. })));
        }
    }

    #[test]
    fn no_digest_asked_means_no_digest_checked() {
        let a = Asked {
            digest: None,
            ..asked()
        };
        let r = reply(200, "anything", by(Some(11), Some(40072)));
        assert!(check(&a, Ok(r)).is_ok());
    }

    #[test]
    fn another_connection_is_broken() {
        let r = reply(200, DIGEST, by(Some(11), Some(40073)));
        let e = check(&asked(), Ok(r)).unwrap_err();
        assert!(
            matches!(
                e,
                Broken::Connection {
                    expected: 40072,
                    seen: 40073,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_byte_swapped_peer_port_passes_only_where_accepted() {
        let swapped = 40072u16.swap_bytes();
        let r = reply(200, DIGEST, by(Some(11), Some(swapped)));
        let c = check(&asked(), Ok(r.clone())).unwrap();
        assert!(c.peer_port_swapped);
        // The twin: a server without the quirk gets no such pass.
        let strict = Asked {
            accept_swapped_port: false,
            ..asked()
        };
        let e = check(&strict, Ok(r)).unwrap_err();
        assert!(
            matches!(e, Broken::Connection { seen, .. } if seen == swapped),
            "{e}"
        );
    }

    #[test]
    fn a_port_equal_to_its_own_swap_is_not_called_swapped() {
        let port = 0x9c9c;
        let a = Asked { port, ..asked() };
        let c = check(&a, Ok(reply(200, DIGEST, by(Some(11), Some(port))))).unwrap();
        assert!(!c.peer_port_swapped);
    }

    #[test]
    fn another_worker_is_broken() {
        let r = reply(200, DIGEST, by(Some(12), Some(40072)));
        let e = check(&asked(), Ok(r)).unwrap_err();
        assert!(
            matches!(
                e,
                Broken::Worker {
                    expected: 11,
                    seen: 12,
                    ..
                }
            ),
            "{e}"
        );
        // Without a known worker, any pid is fine.
        let a = Asked {
            pid: None,
            ..asked()
        };
        let r = reply(200, DIGEST, by(Some(12), Some(40072)));
        assert!(check(&a, Ok(r)).is_ok());
    }

    #[test]
    fn served_by_reads_numbers_and_ignores_anything_else() {
        let mut h = hyper::HeaderMap::new();
        h.insert("x-pid", " 42 ".parse().unwrap());
        h.insert("x-thread-id", "140234".parse().unwrap());
        h.insert("x-peer-port", "40072".parse().unwrap());
        assert_eq!(
            served_by(&h),
            ServedBy {
                pid: Some(42),
                thread_id: Some(140234),
                peer_port: Some(40072),
                ..Default::default()
            }
        );
        let mut h = hyper::HeaderMap::new();
        h.insert("x-pid", "-1".parse().unwrap());
        h.insert(
            "x-thread-id",
            hyper::header::HeaderValue::from_bytes(b"\xe2\x82\xac").unwrap(),
        );
        h.insert("x-peer-port", "99999".parse().unwrap());
        assert_eq!(served_by(&h), ServedBy::default());
    }
}
