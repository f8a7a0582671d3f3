//! The load generator's own HTTP/1.1 connection: one kept-alive TCP stream,
//! each request written in one call and its reply read and framed in the
//! same task.
//!
//! By hand over `httparse` (the parser hyper itself uses), not hyper's
//! client: hyper hands every request from the caller to a connection task
//! and the reply back, and at the 25k req/s a sweep of `/` reaches on two
//! cores that costs about 6 µs of client CPU a request, taken from the
//! server under test (the runner read 0.87-0.94x of wrk's req/s on `/`).
//! The gates keep `http::Connection`: they send a few requests a second.
//!
//! The reply is untrusted: its head is capped at [`HEAD_LIMIT_BYTES`], its
//! body at the connection's limit, the whole exchange at the request's
//! timeout, and whatever the parser refuses is a transport error, never a
//! panic. Framing is Content-Length, chunked, or (no length declared) to
//! the close, which also ends the connection.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::http::{HttpError, Reply, ServedBy};

/// A reply head larger than this is refused (the fixture's is ~150 bytes):
/// hyper's own read-buffer cap, so both clients refuse the same heads.
pub const HEAD_LIMIT_BYTES: usize = 8192 + 4096 * 100;
/// Headers parsed per reply; more is refused as a transport error (hyper's
/// limit too).
const MAX_HEADERS: usize = 100;
/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 64 * 1024;

/// How the body of a reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
    /// HTTP/1.0 with no length: the body runs to the close.
    UntilClose,
    /// 204 and 304 carry none.
    Empty,
}

/// A parsed reply head.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Head {
    status: u16,
    /// Bytes of the head, blank line included.
    len: usize,
    framing: Framing,
    /// Why the connection ends after this reply, if the reply says so.
    closes: Option<String>,
}

/// A header value as text, where it is text: visible ASCII, spaces and
/// tabs, as `HeaderValue::to_str` reads it (hyper treats any other value of
/// a framing or `Connection` header as unreadable).
fn text(value: &[u8]) -> Option<&str> {
    value
        .iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b))
        .then(|| std::str::from_utf8(value).ok())
        .flatten()
}

/// A Content-Length: ASCII digits only. Rust's `u64::from_str` takes a
/// leading `+`, which HTTP does not (RFC 9110 8.6) and hyper refuses.
fn digits(value: &str) -> Option<u64> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// The length every `Content-Length` line declares: each line a comma list
/// of one number, repeated (`5, 5`); a sign, a non-digit or two different
/// numbers refuse the reply.
fn declared_length(values: &[&[u8]]) -> Result<Option<u64>, HttpError> {
    let mut length: Option<u64> = None;
    for value in values {
        let not_a_number = || {
            HttpError::Transport(format!(
                "a Content-Length that is not a number: {:?}",
                crate::text::clip(&String::from_utf8_lossy(value), 40)
            ))
        };
        let line = text(value).ok_or_else(not_a_number)?;
        for item in line.split(',') {
            let n = digits(item.trim()).ok_or_else(not_a_number)?;
            if length.is_some_and(|m| m != n) {
                return Err(HttpError::Transport(
                    "two different Content-Length values".into(),
                ));
            }
            length = Some(n);
        }
    }
    Ok(length)
}

/// Parses a reply head from the start of `buf`: `Ok(None)` while it is
/// incomplete.
///
/// The framing rules are hyper's client's, rule for rule (RFC 9112 6.3),
/// so that the load and the gates read the same bytes alike:
/// runner/tests/reply_fuzz.rs serves the same bytes to both and fails on
/// any reply one reads and the other refuses.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, HttpError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            return Err(HttpError::Transport(format!(
                "a reply head the runner cannot parse: {e}"
            )))
        }
    };
    let status = response.code.unwrap_or(0);
    if !(100..=999).contains(&status) {
        return Err(HttpError::Transport(format!(
            "a status code out of range: {status:03}"
        )));
    }
    let http10 = response.version == Some(0);
    let mut lengths: Vec<&[u8]> = Vec::new();
    // The last Transfer-Encoding line decides; whether any came at all too.
    let mut encoding: Option<&[u8]> = None;
    let (mut close, mut keep_alive) = (false, false);
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            lengths.push(h.value);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            encoding = Some(h.value);
        } else if h.name.eq_ignore_ascii_case("connection") {
            let says = |token: &str| {
                text(h.value)
                    .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
            };
            close |= says("close");
            keep_alive |= says("keep-alive");
        }
    }
    let framing = match status {
        100..=199 | 204 | 304 => Framing::Empty,
        _ => match encoding {
            Some(_) if http10 => {
                return Err(HttpError::Transport(
                    "an HTTP/1.0 reply with a Transfer-Encoding".into(),
                ))
            }
            Some(value) => {
                // Chunked only if it comes last; any other coding runs to the close.
                let last = text(value).and_then(|v| v.rsplit(',').next());
                if last.is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked")) {
                    Framing::Chunked
                } else {
                    Framing::UntilClose
                }
            }
            None => match declared_length(&lengths)? {
                Some(n) => Framing::Length(n),
                // No declared length: the body runs to the close.
                None => Framing::UntilClose,
            },
        },
    };
    let closes = if status == 101 {
        Some("the server switched protocols (101)".into())
    } else if framing == Framing::UntilClose {
        Some(
            "the reply had no Content-Length nor chunked framing, so its body ran to the close"
                .into(),
        )
    } else if close {
        Some("the server's reply said `Connection: close`".into())
    } else if http10 && !keep_alive {
        Some("the server answered in HTTP/1.0 without keep-alive, so it closes the connection after every reply".into())
    } else {
        None
    };
    Ok(Some(Head {
        status,
        len,
        framing,
        closes,
    }))
}

/// The peer closed or reset the connection.
fn is_reset(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionReset | BrokenPipe | ConnectionAborted)
}

/// Where a chunked body's decoding stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// Inside a chunk: this many data bytes to go.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last chunk: trailer lines until a blank one.
    Trailers,
    Done,
}

/// Decodes what `buf` holds of a chunked body into `body`, consuming it;
/// returns the new state (`Done` at the end).
fn decode_chunks(
    buf: &mut BytesMut,
    mut state: Chunk,
    body: &mut BytesMut,
    limit: usize,
) -> Result<Chunk, HttpError> {
    let bad = |what: &str| HttpError::Transport(format!("a chunked body {what}"));
    loop {
        match state {
            Chunk::Size => match httparse::parse_chunk_size(buf) {
                Ok(httparse::Status::Complete((used, size))) => {
                    buf.advance(used);
                    if size > (limit - body.len()) as u64 {
                        return Err(HttpError::TooLarge(limit));
                    }
                    state = if size == 0 {
                        Chunk::Trailers
                    } else {
                        Chunk::Data(size)
                    };
                }
                Ok(httparse::Status::Partial) => {
                    if buf.len() > HEAD_LIMIT_BYTES {
                        return Err(bad("with a chunk-size line over 64 KiB"));
                    }
                    return Ok(state);
                }
                Err(_) => return Err(bad("with a chunk size that is not hex")),
            },
            Chunk::Data(left) => {
                if buf.is_empty() {
                    return Ok(state);
                }
                // `left` fits in usize: it was checked against the limit.
                let take = buf.len().min(left as usize);
                body.extend_from_slice(&buf[..take]);
                buf.advance(take);
                let left = left - take as u64;
                state = if left == 0 {
                    Chunk::DataEnd
                } else {
                    Chunk::Data(left)
                };
            }
            Chunk::DataEnd => {
                if buf.len() < 2 {
                    return Ok(state);
                }
                if &buf[..2] != b"\r\n" {
                    return Err(bad("whose chunk does not end where its size says"));
                }
                buf.advance(2);
                state = Chunk::Size;
            }
            Chunk::Trailers => {
                let Some(end) = buf.windows(2).position(|w| w == b"\r\n") else {
                    if buf.len() > HEAD_LIMIT_BYTES {
                        return Err(bad("with trailers over 64 KiB"));
                    }
                    return Ok(state);
                };
                buf.advance(end + 2);
                if end == 0 {
                    return Ok(Chunk::Done);
                }
            }
            Chunk::Done => return Ok(state),
        }
    }
}

/// One kept-alive HTTP/1.1 connection of the load generator.
pub struct WireConnection {
    stream: TcpStream,
    /// Bytes read and not yet taken by a reply.
    buf: BytesMut,
    /// `Host: 127.0.0.1:PORT\r\n\r\n`, the end of every request.
    host_tail: Vec<u8>,
    request: Vec<u8>,
    body_limit: usize,
    /// Why the connection cannot carry another request, once known.
    ended: Option<String>,
    /// Set while a reply's body is read, so a timeout can say which part
    /// never came.
    in_body: bool,
}

impl WireConnection {
    /// Opens a TCP connection to `addr` within `timeout`.
    pub async fn open(
        addr: SocketAddr,
        timeout: Duration,
        body_limit: usize,
    ) -> Result<Self, HttpError> {
        let stream = crate::http::connect(addr, timeout).await?;
        Ok(Self {
            stream,
            buf: BytesMut::with_capacity(READ_CHUNK),
            host_tail: format!(" HTTP/1.1\r\nHost: {addr}\r\n\r\n").into_bytes(),
            request: Vec::with_capacity(256),
            body_limit,
            ended: None,
            in_body: false,
        })
    }

    /// Sends `GET path` and reads the whole reply, within `timeout`.
    pub async fn get(&mut self, path: &str, timeout: Duration) -> Result<Reply, HttpError> {
        let timeout_ms = timeout.as_millis() as u64;
        self.in_body = false;
        match tokio::time::timeout(timeout, self.exchange(path)).await {
            Ok(result) => {
                if result.is_err() && self.ended.is_none() {
                    self.ended = Some("an earlier reply on it failed".into());
                }
                result
            }
            Err(_) => {
                self.ended = Some("an earlier request on it timed out".into());
                Err(if self.in_body {
                    HttpError::BodyTimeout(timeout_ms)
                } else {
                    HttpError::Timeout(timeout_ms)
                })
            }
        }
    }

    /// Reads more of the reply; 0 at the server's close. A reset before
    /// any byte of a reply is the server closing the kept-alive connection.
    async fn read_more(&mut self) -> Result<usize, HttpError> {
        self.buf.reserve(READ_CHUNK);
        match self.stream.read_buf(&mut self.buf).await {
            Ok(n) => Ok(n),
            Err(e) if self.buf.is_empty() && !self.in_body && is_reset(&e) => {
                Err(HttpError::Closed)
            }
            Err(e) => Err(HttpError::Transport(format!("reading the reply: {e}"))),
        }
    }

    async fn exchange(&mut self, path: &str) -> Result<Reply, HttpError> {
        if let Some(why) = &self.ended {
            return Err(HttpError::Ended(why.clone()));
        }
        self.request.clear();
        self.request.extend_from_slice(b"GET ");
        self.request.extend_from_slice(path.as_bytes());
        self.request.extend_from_slice(&self.host_tail);
        let started = Instant::now();
        if let Err(e) = self.stream.write_all(&self.request).await {
            return Err(if is_reset(&e) {
                HttpError::Closed
            } else {
                HttpError::Transport(format!("sending the request: {e}"))
            });
        }
        let head = loop {
            match parse_head(&self.buf)? {
                // An interim reply (100 Continue and the like): the real one follows.
                Some(h) if (100..200).contains(&h.status) && h.status != 101 => {
                    self.buf.advance(h.len);
                    continue;
                }
                Some(h) => break h,
                None => {}
            }
            if self.buf.len() > HEAD_LIMIT_BYTES {
                return Err(HttpError::Transport(format!(
                    "a reply head over {} KiB",
                    HEAD_LIMIT_BYTES / 1024
                )));
            }
            if self.read_more().await? == 0 {
                return Err(if self.buf.is_empty() {
                    HttpError::Closed
                } else {
                    HttpError::Transport(format!(
                        "the server closed the connection {} bytes into a reply head",
                        self.buf.len()
                    ))
                });
            }
        };
        self.buf.advance(head.len);
        self.in_body = true;
        let limit = self.body_limit;
        let body: Bytes = match head.framing {
            Framing::Empty => Bytes::new(),
            Framing::Length(n) => {
                if n > limit as u64 {
                    return Err(HttpError::TooLarge(limit));
                }
                let n = n as usize;
                while self.buf.len() < n {
                    if self.read_more().await? == 0 {
                        return Err(HttpError::Transport(format!(
                            "the server closed the connection {} bytes into a {n}-byte body",
                            self.buf.len()
                        )));
                    }
                }
                self.buf.split_to(n).freeze()
            }
            Framing::Chunked => {
                let mut body = BytesMut::new();
                let mut state = Chunk::Size;
                loop {
                    state = decode_chunks(&mut self.buf, state, &mut body, limit)?;
                    if state == Chunk::Done {
                        break;
                    }
                    if self.read_more().await? == 0 {
                        return Err(HttpError::Transport(
                            "the server closed the connection inside a chunked body".into(),
                        ));
                    }
                }
                body.freeze()
            }
            Framing::UntilClose => {
                while self.read_more().await? > 0 {
                    if self.buf.len() > limit {
                        return Err(HttpError::TooLarge(limit));
                    }
                }
                if self.buf.len() > limit {
                    return Err(HttpError::TooLarge(limit));
                }
                self.buf.split().freeze()
            }
        };
        self.in_body = false;
        if let Some(why) = head.closes {
            self.ended = Some(why);
        } else if !self.buf.is_empty() {
            // hyper refuses these too: bytes no request asked for.
            self.ended = Some(format!(
                "the server sent {} bytes after a reply that no request asked for",
                self.buf.len()
            ));
        }
        Ok(Reply {
            status: head.status,
            declared_length: match head.framing {
                Framing::Length(n) => Some(n),
                _ => None,
            },
            body,
            // The load's checks read no `X-` headers.
            served_by: ServedBy::default(),
            elapsed: started.elapsed(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> Result<Option<Head>, HttpError> {
        parse_head(text.as_bytes())
    }

    #[test]
    fn heads_and_their_framing() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap()
            .unwrap();
        assert_eq!(
            (h.status, h.framing, h.closes.is_none()),
            (200, Framing::Length(5), true)
        );
        assert_eq!(h.len, 38);
        assert_eq!(head("HTTP/1.1 200 OK\r\nContent-Len").unwrap(), None);
        let h = head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Chunked);
        let h = head("HTTP/1.0 200 OK\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.framing, Framing::UntilClose);
        assert!(h.closes.unwrap().contains("ran to the close"));
        let h = head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(h.closes.unwrap().contains("HTTP/1.0"));
        let h = head("HTTP/1.1 204 No Content\r\nConnection: Close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(h.framing, Framing::Empty);
        assert!(h.closes.unwrap().contains("Connection: close"));
        // The twins of the refusals below: the same headers, well formed.
        for (good, framing) in [
            ("Content-Length: 5", Framing::Length(5)),
            (
                "Content-Length: 5, 5\r\nContent-Length: 05",
                Framing::Length(5),
            ),
            ("Transfer-Encoding: gzip", Framing::UntilClose),
            (
                "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked",
                Framing::Chunked,
            ),
        ] {
            let h = head(&format!("HTTP/1.1 200 OK\r\n{good}\r\n\r\n"))
                .unwrap()
                .unwrap();
            assert_eq!(h.framing, framing, "{good:?}");
        }
        // Refused, each with its reason.
        for (bad, why) in [
            (
                "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                "not a number",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "two different",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\n",
                "not a number",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 5, +5\r\n\r\n",
                "not a number",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Length: 5,6\r\n\r\n",
                "two different",
            ),
            (
                "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                "HTTP/1.0 reply with a Transfer-Encoding",
            ),
            ("HTTP/1.1 099 Low\r\n\r\n", "out of range"),
            ("HTPT/1.1 200 OK\r\n\r\n", "cannot parse"),
        ] {
            let e = head(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    fn chunks(input: &[u8], limit: usize) -> Result<(Chunk, Vec<u8>, usize), HttpError> {
        let mut buf = BytesMut::from(input);
        let mut body = BytesMut::new();
        let state = decode_chunks(&mut buf, Chunk::Size, &mut body, limit)?;
        Ok((state, body.to_vec(), buf.len()))
    }

    #[test]
    fn chunked_bodies_decode_whole_or_wait() {
        let (s, body, left) =
            chunks(b"5\r\nhello\r\n4;x=y\r\n abc\r\n0\r\nT: v\r\n\r\nrest", 100).unwrap();
        assert_eq!(
            (s, body.as_slice(), left),
            (Chunk::Done, &b"hello abc"[..], 4)
        );
        // Cut anywhere, it waits for more rather than failing.
        let whole = b"5\r\nhello\r\n0\r\n\r\n";
        for cut in 0..whole.len() {
            let (s, _, _) = chunks(&whole[..cut], 100).unwrap();
            assert_ne!(s, Chunk::Done, "cut at {cut}");
        }
        assert!(chunks(b"zz\r\n", 100).is_err());
        assert!(chunks(b"5\r\nhelloXX", 100).is_err());
        assert!(matches!(
            chunks(b"ff\r\n", 100),
            Err(HttpError::TooLarge(100))
        ));
    }
}
