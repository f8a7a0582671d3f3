//! What became of each request: a good reply, or an error of one kind.
//! A failed request is data (counted by kind, with the first message of
//! each kind kept as a sample), never a panic and never a retry.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::http::{HttpError, Reply};

use super::route::{Check, Request, Route};

/// Why a request did not count as done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// No complete reply within the request timeout.
    Timeout,
    /// The server closed the kept-alive connection.
    Closed,
    /// The connection failed otherwise (reset, bad framing, body too large).
    Transport,
    /// A new connection could not be opened.
    Connect,
    /// A status other than 200.
    Status,
    /// A body shorter or longer than its `Content-Length`.
    Length,
    /// `/work` answered with the digest of other work (or none).
    Digest,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Timeout,
        ErrorKind::Closed,
        ErrorKind::Transport,
        ErrorKind::Connect,
        ErrorKind::Status,
        ErrorKind::Length,
        ErrorKind::Digest,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Closed => "closed",
            ErrorKind::Transport => "transport",
            ErrorKind::Connect => "connect",
            ErrorKind::Status => "status",
            ErrorKind::Length => "length",
            ErrorKind::Digest => "digest",
        }
    }

    /// Whether the connection cannot carry another request after this: a
    /// timed-out reply may still arrive on it, a closed or failed one is gone.
    pub fn drops_connection(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout | ErrorKind::Closed | ErrorKind::Transport | ErrorKind::Connect
        )
    }
}

/// Errors counted by kind, with the first message of each kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ErrorCounts {
    pub counts: BTreeMap<ErrorKind, u64>,
    /// The first message seen for each kind (bodies cut to 120 bytes).
    pub samples: BTreeMap<ErrorKind, String>,
}

impl ErrorCounts {
    pub fn add(&mut self, kind: ErrorKind, message: impl FnOnce() -> String) {
        *self.counts.entry(kind).or_insert(0) += 1;
        self.samples.entry(kind).or_insert_with(message);
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        for (k, n) in &other.counts {
            *self.counts.entry(*k).or_insert(0) += n;
        }
        for (k, s) in &other.samples {
            self.samples.entry(*k).or_insert_with(|| s.clone());
        }
    }

    pub fn get(&self, kind: ErrorKind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Whether the status errors were the server's own (its first one a
    /// 5xx: a view that raised), whose log holds the why.
    pub fn server_error(&self) -> bool {
        // The sample is `check`'s own `HTTP {status} for ...`, below.
        self.samples
            .get(&ErrorKind::Status)
            .is_some_and(|s| s.starts_with("HTTP 5"))
    }

    /// `digest 12, status 3`, or `none`.
    pub fn describe(&self) -> String {
        if self.total() == 0 {
            return "none".into();
        }
        self.counts
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A reply that passed its route's checks.
#[derive(Debug, Clone, Copy)]
pub struct Good {
    pub body_bytes: usize,
    /// Whether a digest was compared (and matched).
    pub digest_checked: bool,
}

/// A failed request: its kind and what happened.
pub type Failure = (ErrorKind, String);

/// Checks one request's result against its route.
pub fn check(
    route: &Route,
    request: &Request,
    result: Result<Reply, HttpError>,
) -> Result<Good, Failure> {
    let reply = result.map_err(|e| {
        let kind = match e {
            HttpError::Timeout(_) | HttpError::BodyTimeout(_) => ErrorKind::Timeout,
            HttpError::Closed | HttpError::Ended(_) => ErrorKind::Closed,
            HttpError::Transport(_) | HttpError::TooLarge(_) => ErrorKind::Transport,
            HttpError::Connect(_) => ErrorKind::Connect,
        };
        (kind, e.to_string())
    })?;
    if reply.status != 200 {
        return Err((
            ErrorKind::Status,
            format!(
                "HTTP {} for {}: {}",
                reply.status,
                request.url,
                crate::text::clip_bytes(&reply.body, 120)
            ),
        ));
    }
    if let Some(declared) = reply.declared_length {
        if declared != reply.body.len() as u64 {
            return Err((
                ErrorKind::Length,
                format!(
                    "{}: {} body bytes, {declared} declared",
                    request.url,
                    reply.body.len()
                ),
            ));
        }
    }
    let mut digest_checked = false;
    if let (Check::Digest(digest), Some(seed)) = (&route.check, request.seed) {
        let expected = digest.expected(seed);
        if reply.body.trim_ascii() != expected.as_bytes() {
            return Err((
                ErrorKind::Digest,
                format!(
                    "{}: got {:?}, expected {expected}; the server did not do the work it was asked for",
                    request.url,
                    crate::text::clip_bytes(&reply.body, 120)
                ),
            ));
        }
        digest_checked = true;
    }
    Ok(Good {
        body_bytes: reply.body.len(),
        digest_checked,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
    use crate::digest::WorkDigest;
    use crate::http::ServedBy;

    fn reply(status: u16, body: &str, declared: Option<u64>) -> Reply {
        Reply {
            status,
            body: Bytes::from(body.to_string()),
            served_by: ServedBy::default(),
            declared_length: declared,
            elapsed: Duration::from_millis(1),
        }
    }

    #[test]
    fn a_right_digest_passes_and_a_wrong_one_is_counted() {
        let route = Route::parse("/work?mode=hold&kib=4", true).unwrap();
        let req = route.next_request();
        let good = WorkDigest::new(4).expected(req.seed.unwrap());
        let ok = check(&route, &req, Ok(reply(200, &good, None))).unwrap();
        assert!(ok.digest_checked);
        assert_eq!(ok.body_bytes, 64);
        let reversed: String = good.chars().rev().collect();
        let (kind, msg) = check(&route, &req, Ok(reply(200, &reversed, None))).unwrap_err();
        assert_eq!(kind, ErrorKind::Digest);
        assert!(msg.contains("did not do the work"), "{msg}");
    }

    #[test]
    fn status_length_and_transport_are_kinds() {
        let route = Route::parse("/", true).unwrap();
        let req = route.next_request();
        let ok = check(&route, &req, Ok(reply(200, "ok", Some(2)))).unwrap();
        assert!(!ok.digest_checked);
        let kind = |r| check(&route, &req, r).unwrap_err().0;
        assert_eq!(kind(Ok(reply(500, "boom", None))), ErrorKind::Status);
        assert_eq!(kind(Ok(reply(200, "ok", Some(3)))), ErrorKind::Length);
        assert_eq!(kind(Err(HttpError::Timeout(5))), ErrorKind::Timeout);
        assert_eq!(kind(Err(HttpError::Closed)), ErrorKind::Closed);
        assert_eq!(
            kind(Err(HttpError::Transport("reset".into()))),
            ErrorKind::Transport
        );
    }

    #[test]
    fn counts_merge_and_keep_the_first_sample() {
        let mut a = ErrorCounts::default();
        a.add(ErrorKind::Digest, || "first".into());
        a.add(ErrorKind::Digest, || "second".into());
        let mut b = ErrorCounts::default();
        b.add(ErrorKind::Status, || "s".into());
        b.add(ErrorKind::Digest, || "third".into());
        a.merge(&b);
        assert_eq!(a.get(ErrorKind::Digest), 3);
        assert_eq!(a.total(), 4);
        assert_eq!(a.samples[&ErrorKind::Digest], "first");
        assert_eq!(a.describe(), "status 1, digest 3");
        assert_eq!(ErrorCounts::default().describe(), "none");
    }
}
