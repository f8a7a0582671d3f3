//! Reaching each worker of a multi-process server through a kept-alive
//! connection of its own.
//!
//! Workers share one listening socket, and which one accepts a fresh
//! connection is the kernel's and the server's choice. Some choose the same
//! worker again and again: uvicorn's workers each wake their asyncio loop
//! on the socket and the first to run takes every pending connection, so on
//! a two-core CI runner 16 connections in a row landed on one of two
//! workers. A worker busy with a slow request accepts late or not at all (a
//! sync worker serves one connection at a time; an event loop waits for
//! the GIL its handler holds). So while every worker reached so far serves
//! one of the row's own slow requests, a fresh connection goes to a worker
//! not yet reached. Where the row names no slow request, fresh connections
//! are opened as they come, and the server's balance decides.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::host::limits::Limits;
use crate::http::{Connection, HttpError, Reply};

/// The head start a busy request gets before the fresh connection opens:
/// a third of its own time alone, so the worker is well into it and far
/// from done; bounded so a slow view does not stall the census.
const LEAD_SHARE: u32 = 3;
const LEAD_AT_MOST: Duration = Duration::from_millis(500);

/// A request of the spread that failed, on the connection it names.
#[derive(Debug)]
pub struct SpreadError {
    /// The local port of the failed connection (0: it never opened).
    pub port: u16,
    /// Set when the failed request was a busy one, sent to this worker.
    pub busy_pid: Option<u32>,
    pub error: HttpError,
}

impl std::fmt::Display for SpreadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.busy_pid {
            Some(pid) => write!(f, "keeping worker {pid} busy: {}", self.error),
            None => write!(f, "{}", self.error),
        }
    }
}

/// The workers reached so far, each with its connection, and how to keep
/// them busy while the next fresh connection is accepted.
pub struct Spread {
    addr: SocketAddr,
    /// The row's own slow request (a path with its query), if it has one.
    busy: Option<String>,
    /// Once this many workers are reached, fresh connections go plainly.
    wanted: usize,
    /// The busy request's head start, once timed.
    lead: Option<Duration>,
    reached: Vec<(u32, Connection)>,
    limits: Limits,
}

impl Spread {
    pub fn new(addr: SocketAddr, busy: Option<String>, wanted: usize, limits: Limits) -> Self {
        Self {
            addr,
            busy,
            wanted,
            lead: None,
            reached: Vec::new(),
            limits,
        }
    }

    /// Asks `path` on a fresh connection, with every worker reached so far
    /// serving the busy request meanwhile (until `wanted` are reached).
    /// Returns the fresh connection and its reply; the caller reads the
    /// worker from the reply and hands the connection to [`Spread::keep`].
    pub async fn ask(&mut self, path: &str) -> Result<(Connection, Reply), SpreadError> {
        let busy = match &self.busy {
            Some(busy) if !self.reached.is_empty() && self.reached.len() < self.wanted => {
                busy.clone()
            }
            _ => return self.fresh(path).await,
        };
        let lead = match self.lead {
            Some(lead) => lead,
            None => {
                let lead = self.time_alone(&busy).await?;
                self.lead = Some(lead);
                lead
            }
        };
        let limit = self.limits.request;
        let mut busy_set = JoinSet::new();
        for (at, (pid, mut conn)) in self.reached.drain(..).enumerate() {
            let busy = busy.clone();
            busy_set.spawn(async move {
                let result = conn.get(&busy, limit).await;
                (at, pid, conn, result)
            });
        }
        tokio::time::sleep(lead).await;
        let fresh = self.fresh(path).await;
        let mut back = Vec::new();
        let mut failed = None;
        while let Some(done) = busy_set.join_next().await {
            // A busy task cannot panic (it only awaits a bounded request);
            // were it to, its worker is simply no longer reached.
            let Ok((at, pid, conn, result)) = done else {
                continue;
            };
            match result {
                Ok(_) => back.push((at, pid, conn)),
                Err(error) => {
                    failed.get_or_insert(SpreadError {
                        port: conn.local_port(),
                        busy_pid: Some(pid),
                        error,
                    });
                }
            }
        }
        // Kept in the order reached.
        back.sort_by_key(|(at, _, _)| *at);
        self.reached = back.into_iter().map(|(_, pid, conn)| (pid, conn)).collect();
        match failed {
            Some(e) => Err(e),
            None => fresh,
        }
    }

    /// Keeps `conn` as the way to worker `pid` if none reaches it yet;
    /// whether `pid` was new.
    pub fn keep(&mut self, pid: u32, conn: Connection) -> bool {
        if self.reached.iter().any(|(p, _)| *p == pid) {
            return false;
        }
        self.reached.push((pid, conn));
        true
    }

    /// How many distinct workers are reached.
    pub fn reached(&self) -> usize {
        self.reached.len()
    }

    /// The reached workers with their connections, in the order reached.
    pub fn into_reached(self) -> Vec<(u32, Connection)> {
        self.reached
    }

    async fn fresh(&self, path: &str) -> Result<(Connection, Reply), SpreadError> {
        let fail = |port| {
            move |error| SpreadError {
                port,
                busy_pid: None,
                error,
            }
        };
        let mut conn = Connection::open(self.addr, self.limits.request)
            .await
            .map_err(fail(0))?;
        let reply = conn
            .get(path, self.limits.request)
            .await
            .map_err(fail(conn.local_port()))?;
        Ok((conn, reply))
    }

    /// Times the busy request alone on the first worker reached: the head
    /// start the others get.
    async fn time_alone(&mut self, busy: &str) -> Result<Duration, SpreadError> {
        let limit = self.limits.request;
        let (pid, conn) = &mut self.reached[0];
        let started = Instant::now();
        conn.get(busy, limit).await.map_err(|error| SpreadError {
            port: conn.local_port(),
            busy_pid: Some(*pid),
            error,
        })?;
        Ok((started.elapsed() / LEAD_SHARE).min(LEAD_AT_MOST))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    /// A two-worker server whose balance is uvicorn's on a small runner:
    /// worker 1 takes every fresh connection unless it is busy, and only
    /// then worker 2 does. `/busy` keeps the worker busy for 150 ms.
    async fn server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let busy = Arc::new(AtomicBool::new(false));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let pid = if busy.load(Ordering::SeqCst) { 2 } else { 1 };
                tokio::spawn(serve(stream, pid, busy.clone()));
            }
        });
        addr
    }

    async fn serve(mut stream: TcpStream, pid: u32, busy: Arc<AtomicBool>) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                match stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
                continue;
            };
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            buf.drain(..end + 4);
            if head.starts_with("GET /busy") && pid == 1 {
                busy.store(true, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(150)).await;
                busy.store(false, Ordering::SeqCst);
            }
            let body = pid.to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nX-Pid: {pid}\r\n\r\n{body}",
                body.len()
            );
            if stream.write_all(reply.as_bytes()).await.is_err() {
                return;
            }
        }
    }

    async fn reached_after(busy: Option<&str>, fresh: u32) -> (usize, u32) {
        let addr = server().await;
        let mut spread = Spread::new(addr, busy.map(String::from), 2, Limits::DEFAULT);
        let mut opened = 0;
        while opened < fresh && spread.reached() < 2 {
            let (conn, reply) = spread.ask("/pid").await.unwrap();
            opened += 1;
            spread.keep(reply.served_by.pid.unwrap(), conn);
        }
        (spread.reached(), opened)
    }

    #[tokio::test]
    async fn a_worker_kept_busy_sends_the_next_connection_to_another() {
        assert_eq!(reached_after(Some("/busy"), 16).await, (2, 2));
    }

    #[tokio::test]
    async fn without_a_busy_request_the_balance_decides_and_one_worker_takes_all() {
        // The twin: the same server, no busy request: 16 of 16 on worker 1.
        assert_eq!(reached_after(None, 16).await, (1, 16));
    }

    #[tokio::test]
    async fn once_every_wanted_worker_is_reached_fresh_connections_go_plainly() {
        let addr = server().await;
        let mut spread = Spread::new(addr, Some("/busy".into()), 1, Limits::DEFAULT);
        let (conn, reply) = spread.ask("/pid").await.unwrap();
        spread.keep(reply.served_by.pid.unwrap(), conn);
        // One wanted and reached: no busy request, so worker 1 again.
        let (_, reply) = spread.ask("/pid").await.unwrap();
        assert_eq!(reply.served_by.pid, Some(1));
        assert_eq!(spread.lead, None);
    }
}
