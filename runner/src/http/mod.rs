//! Keep-alive HTTP/1.1 connections the runner owns one by one.
//!
//! The pair measurement must put its two requests on two connections that
//! already exist, so that connection set-up is never inside the timing. A
//! pooling client (reqwest) decides connections for us; hyper's connection-
//! level API does not: a [`Connection`] is exactly one TCP stream we opened,
//! with its local port known, and a closed stream is an error rather than a
//! silent reconnect. A failed request is data ([`HttpError`]), never a panic.
//!
//! The server is untrusted: its reply is bounded in time (every request has
//! a timeout, headers or body) and in size ([`MAX_BODY_BYTES`]), and when a
//! connection ends the error says why where anything knows (an HTTP/1.0 or
//! `Connection: close` reply, bytes that answered no request).

pub mod reply;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, LengthLimitError, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Replies larger than this are refused by default; the fixture's are tens
/// of bytes. [`Connection::with_body_limit`] raises it for other routes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long a closed connection's driver gets to report why it ended.
const DRIVER_END_WAIT: Duration = Duration::from_millis(200);

/// Why a request produced no usable reply.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", content = "detail", rename_all = "kebab-case")]
pub enum HttpError {
    #[error("cannot connect to {0}")]
    Connect(String),
    #[error("no reply within {0} ms")]
    Timeout(u64),
    #[error("the connection failed: {0}")]
    Transport(String),
    #[error("the server closed the kept-alive connection")]
    Closed,
    /// The headers came, the body did not end in time (a Content-Length
    /// longer than the body, a chunked body with no last chunk).
    #[error("the headers came but the body did not end within {0} ms")]
    BodyTimeout(u64),
    #[error("the body is over the runner's {0}-byte cap")]
    TooLarge(usize),
    /// The connection is gone, and why is known.
    #[error("the kept-alive connection ended: {0}")]
    Ended(String),
}

/// What the fixture says about who served a request (its `X-` headers).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ServedBy {
    pub pid: Option<u32>,
    pub thread_id: Option<u64>,
    /// The client port the server saw, where the server tells the app.
    pub peer_port: Option<u16>,
    /// The runner's ASGI wrapper: the OS thread id of the event loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loop_thread: Option<u64>,
    /// The wrapper's loop probe: anyio threadpool tokens borrowed then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_busy: Option<u32>,
    /// The wrapper's loop probe: anyio's worker threads alive then.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pool_threads: Vec<u64>,
}

/// A complete reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Bytes,
    pub served_by: ServedBy,
    /// The length the server declared (`Content-Length`), if it did.
    pub declared_length: Option<u64>,
    /// From sending the request to the last byte of the body.
    pub elapsed: Duration,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One kept-alive HTTP/1.1 connection.
pub struct Connection {
    sender: SendRequest<Empty<Bytes>>,
    host: hyper::header::HeaderValue,
    local_port: u16,
    body_limit: usize,
    driver: tokio::task::JoinHandle<()>,
    /// The connection's own error when it ends, sent once by its driver.
    driver_end: Option<oneshot::Receiver<String>>,
    /// Why the connection ended or will end after this reply, once known.
    ended: Option<String>,
    /// Set while a reply's body is read, so a timeout can say which part
    /// never came.
    in_body: bool,
}

/// A TCP connection to `addr` within `timeout`, Nagle off (a request is
/// one small write, sent at once).
pub async fn connect(addr: SocketAddr, timeout: Duration) -> Result<TcpStream, HttpError> {
    let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| HttpError::Timeout(timeout.as_millis() as u64))?
        .map_err(|e| HttpError::Connect(format!("{addr}: {e}")))?;
    stream
        .set_nodelay(true)
        .map_err(|e| HttpError::Transport(e.to_string()))?;
    Ok(stream)
}

impl Connection {
    /// Opens a TCP connection to `addr` and completes the HTTP/1.1 handshake.
    pub async fn open(addr: SocketAddr, timeout: Duration) -> Result<Self, HttpError> {
        let stream = connect(addr, timeout).await?;
        let local_port = stream
            .local_addr()
            .map_err(|e| HttpError::Transport(e.to_string()))?
            .port();
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let (end_tx, driver_end) = oneshot::channel();
        let driver = tokio::spawn(async move {
            // Ends when the server closes or the sender is dropped; a closed
            // connection surfaces as an error on the next request, which
            // names this error (e.g. a reply no request asked for).
            if let Err(e) = conn.await {
                let _ = end_tx.send(with_causes(&e));
            }
        });
        // Parsed once: the load generator sends thousands of requests a
        // second on one connection.
        let host = hyper::header::HeaderValue::from_str(&addr.to_string())
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        Ok(Self {
            sender,
            host,
            local_port,
            body_limit: MAX_BODY_BYTES,
            driver,
            driver_end: Some(driver_end),
            ended: None,
            in_body: false,
        })
    }

    /// Whether the server has closed this connection (seen once the
    /// connection's driver task has read the close).
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Refuse replies larger than `bytes` (a transport error) instead of
    /// [`MAX_BODY_BYTES`]: for routes of the user's own app.
    pub fn with_body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The client-side port: this connection's identity.
    pub fn local_port(&self) -> u16 {
        self.local_port
    }

    /// Sends `GET path` on this connection and reads the whole reply.
    pub async fn get(&mut self, path: &str, timeout: Duration) -> Result<Reply, HttpError> {
        let timeout_ms = timeout.as_millis() as u64;
        self.in_body = false;
        match tokio::time::timeout(timeout, self.get_unbounded(path)).await {
            Ok(result) => result,
            Err(_) if self.in_body => Err(HttpError::BodyTimeout(timeout_ms)),
            Err(_) => Err(HttpError::Timeout(timeout_ms)),
        }
    }

    /// The error for a connection found closed: why, where known.
    async fn closed(&mut self) -> HttpError {
        if let Some(end) = self.driver_end.take() {
            // The driver is finishing (the sender saw it close); its error,
            // if any, is sent before it drops the channel, microseconds from
            // now. The bound keeps a driver stuck in a close from turning a
            // closed connection into a request timeout.
            if let Ok(Ok(why)) = tokio::time::timeout(DRIVER_END_WAIT, end).await {
                self.ended.get_or_insert(why);
            }
        }
        match &self.ended {
            Some(why) => HttpError::Ended(why.clone()),
            None => HttpError::Closed,
        }
    }

    async fn get_unbounded(&mut self, path: &str) -> Result<Reply, HttpError> {
        if self.sender.is_closed() || self.sender.ready().await.is_err() {
            return Err(self.closed().await);
        }
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, self.host.clone())
            .body(Empty::<Bytes>::new())
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let started = Instant::now();
        let response = match self.sender.send_request(request).await {
            Ok(response) => response,
            // Canceled: the connection was closing when the request was
            // queued (hyper says "operation was canceled: connection closed").
            Err(e) if e.is_closed() || e.is_canceled() || e.is_incomplete_message() => {
                return Err(self.closed().await)
            }
            Err(e) => return Err(HttpError::Transport(with_causes(&e))),
        };
        let status = response.status().as_u16();
        let served_by = served_by(response.headers());
        if let Some(why) = closes_after(&response) {
            self.ended.get_or_insert(why);
        }
        self.in_body = true;
        let declared_length = response
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let limit = self.body_limit;
        let body = Limited::new(response.into_body(), limit)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<LengthLimitError>() {
                    HttpError::TooLarge(limit)
                } else {
                    HttpError::Transport(format!("reading the body: {}", with_causes(&*e)))
                }
            })?
            .to_bytes();
        self.in_body = false;
        Ok(Reply {
            status,
            body,
            served_by,
            declared_length,
            elapsed: started.elapsed(),
        })
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Why the connection closes after this reply, if the reply says so (hyper
/// then closes it): a server that does this cannot keep a connection alive,
/// which every probe here relies on.
fn closes_after<B>(response: &hyper::Response<B>) -> Option<String> {
    let connection = response
        .headers()
        .get(hyper::header::CONNECTION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let says = |token: &str| connection.split(',').any(|t| t.trim() == token);
    if response.version() == hyper::Version::HTTP_10 && !says("keep-alive") {
        Some("the server answered in HTTP/1.0 without keep-alive, so it closes the connection after every reply".into())
    } else if says("close") {
        Some("the server's reply said `Connection: close`".into())
    } else {
        None
    }
}

/// An error and its sources (`error reading a body from connection:
/// Connection reset by peer`): hyper's own message alone does not say what
/// the peer did.
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// One request on a fresh connection that is closed afterwards (health checks).
pub async fn get_once(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Reply, HttpError> {
    let started = Instant::now();
    let mut conn = Connection::open(addr, timeout).await?;
    let left = timeout.saturating_sub(started.elapsed());
    conn.get(path, left).await
}

/// What the fixture's `X-` headers say about who served a reply. A header
/// that is missing, not text, or not a number of the right size reads as
/// absent: the checks above then have nothing to compare, which is weaker
/// evidence but never a crash.
pub fn served_by(headers: &hyper::HeaderMap) -> ServedBy {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    ServedBy {
        pid: get("x-pid").and_then(|v| v.parse().ok()),
        thread_id: get("x-thread-id").and_then(|v| v.parse().ok()),
        peer_port: get("x-peer-port").and_then(|v| v.parse().ok()),
        loop_thread: get("x-gates-loop-thread").and_then(|v| v.parse().ok()),
        pool_busy: get("x-gates-pool-busy").and_then(|v| v.parse().ok()),
        pool_threads: get("x-gates-pool-threads")
            .map(|v| {
                v.split(',')
                    .take(1024)
                    .filter_map(|t| t.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default(),
    }
}
