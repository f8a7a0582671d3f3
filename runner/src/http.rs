//! Keep-alive HTTP/1.1 connections the runner owns one by one.
//!
//! The pair measurement must put its two requests on two connections that
//! already exist, so that connection set-up is never inside the timing. A
//! pooling client (reqwest) decides connections for us; hyper's connection-
//! level API does not: a [`Connection`] is exactly one TCP stream we opened,
//! with its local port known, and a closed stream is an error rather than a
//! silent reconnect. A failed request is data ([`HttpError`]), never a panic.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Replies larger than this are refused by default; the fixture's are tens
/// of bytes. [`Connection::with_body_limit`] raises it for other routes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Why a request produced no usable reply.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize)]
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
}

/// What the fixture says about who served a request (its `X-` headers).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ServedBy {
    pub pid: Option<u32>,
    pub thread_id: Option<u64>,
    /// The client port the server saw, where the server tells the app.
    pub peer_port: Option<u16>,
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
}

impl Connection {
    /// Opens a TCP connection to `addr` and completes the HTTP/1.1 handshake.
    pub async fn open(addr: SocketAddr, timeout: Duration) -> Result<Self, HttpError> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| HttpError::Timeout(timeout.as_millis() as u64))?
            .map_err(|e| HttpError::Connect(format!("{addr}: {e}")))?;
        stream
            .set_nodelay(true)
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let local_port = stream
            .local_addr()
            .map_err(|e| HttpError::Transport(e.to_string()))?
            .port();
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let driver = tokio::spawn(async move {
            // Ends when the server closes or the sender is dropped; a closed
            // connection surfaces as an error on the next request.
            let _ = conn.await;
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
        })
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
        tokio::time::timeout(timeout, self.get_unbounded(path))
            .await
            .map_err(|_| HttpError::Timeout(timeout_ms))?
    }

    async fn get_unbounded(&mut self, path: &str) -> Result<Reply, HttpError> {
        if self.sender.is_closed() {
            return Err(HttpError::Closed);
        }
        self.sender.ready().await.map_err(|_| HttpError::Closed)?;
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, self.host.clone())
            .body(Empty::<Bytes>::new())
            .map_err(|e| HttpError::Transport(e.to_string()))?;
        let started = Instant::now();
        let response = self.sender.send_request(request).await.map_err(|e| {
            if e.is_closed() || e.is_incomplete_message() {
                HttpError::Closed
            } else {
                HttpError::Transport(with_causes(&e))
            }
        })?;
        let status = response.status().as_u16();
        let served_by = served_by(response.headers());
        let declared_length = response
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse().ok());
        let body = Limited::new(response.into_body(), self.body_limit)
            .collect()
            .await
            .map_err(|e| HttpError::Transport(format!("reading the body: {}", with_causes(&*e))))?
            .to_bytes();
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

fn served_by(headers: &hyper::HeaderMap) -> ServedBy {
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
