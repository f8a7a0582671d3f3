//! Fuzz of the reply surface: server replies are untrusted input and must
//! never crash the runner.
//!
//! - `fuzz_the_reply_check`: arbitrary status, `X-` header values and body
//!   bytes through `reply::served_by` and `reply::check`, against a model of
//!   what the check must decide; every message it makes stays short and on
//!   one line.
//! - `fuzz_raw_bytes_from_a_socket`: arbitrary bytes (raw, or an HTTP reply
//!   built from mangled parts: signed, listed and repeated Content-Lengths,
//!   lying chunk sizes, 1xx before the reply, duplicate headers, a close
//!   anywhere; split into arbitrary writes) served from a real TcpListener
//!   on 127.0.0.1 to both of the runner's clients, twice on one connection:
//!   every call returns in bounded time with a bounded result, and the two
//!   clients (hyper's `http::Connection`, the load's `load::wire`) read the
//!   same first reply or both refuse it.
//!
//! Each runs `REPLY_FUZZ_CASES` inputs (default 1000, a few seconds here;
//! `REPLY_FUZZ_KINDS=1` also lists the errors the socket inputs reached);
//! bench/fuzz.sh runs many more and reports how many were tried. A panic
//! anywhere, a spawned task included, is counted by a panic hook and fails
//! the run: tokio would otherwise swallow a panic in a connection's driver.

use std::cell::Cell;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::header::HeaderValue;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use runner::http::reply::Broken;
use runner::http::reply::{self, Asked};
use runner::http::{Connection, HttpError, Reply, MAX_BODY_BYTES};
use runner::load::wire::WireConnection;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The request timeout of the socket fuzz: every reply here ends with the
/// server closing, so hyper sees EOF long before; a timeout means a wait
/// that ignores the peer's close. Generous: hyper reads a 1 MiB chunk-size
/// line of zeros byte by byte (0.4 s in a debug build here, over 2 s on a
/// machine shared with four other builds).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// No case may take longer than this (two requests, connect and close).
const CASE_BOUND: Duration = Duration::from_secs(25);
/// The longest message a reply can make: the fixed wording, the mode and
/// URL, and the clipped quotes of the body (each control character escaped
/// to at most 10 bytes).
const MESSAGE_BOUND: usize = 600 + MODE.len() + URL.len() + 10 * reply::STATUS_BODY_BYTES;

const MODE: &str = "releasing";
const URL: &str = "/work?mode=release&kib=24576&seed=7";
const DIGEST: &str = "84167a17c31a211f079de966053c33d0be1dc6ac648f9e99886c57fbe8158740";

fn fuzz_cases() -> u32 {
    std::env::var("REPLY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

thread_local! {
    /// Panics on this thread. Each test runs its cases, and its
    /// current-thread runtime runs every task it spawns, on its own thread,
    /// so tests running side by side do not count each other's.
    static PANICS: Cell<u64> = const { Cell::new(0) };
}

/// Counts every panic (proptest catches the test's own; a tokio task's
/// would vanish into a JoinError), then reports it as usual. Returns the
/// count on this thread so far.
fn count_panics() -> u64 {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            previous(info);
        }));
    });
    PANICS.with(Cell::get)
}

// ---- the pure check ------------------------------------------------------

/// An `X-` header value: mostly near what the check compares it with.
fn header_value(near: u64) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        2 => Just(None),
        3 => Just(Some(near.to_string().into_bytes())),
        2 => any::<u64>().prop_map(|n| Some(n.to_string().into_bytes())),
        1 => Just(Some(format!(" {near}\t").into_bytes())),
        1 => Just(Some(format!("-{near}").into_bytes())),
        1 => Just(Some(format!("{near}0000000000").into_bytes())),
        2 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(Some),
        1 => any::<String>().prop_map(|s| Some(s.into_bytes())),
    ]
}

/// A body: the right digest, nearly right, text, or any bytes.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => Just(DIGEST.as_bytes().to_vec()),
        2 => "[ \t\r\n]{0,3}".prop_map(|ws| format!("{ws}{DIGEST}{ws}").into_bytes()),
        1 => (0usize..64).prop_map(|n| DIGEST.as_bytes()[..n].to_vec()),
        2 => proptest::collection::vec(any::<u8>(), 0..2048),
        1 => any::<String>().prop_map(String::into_bytes),
        // Multi-byte characters, cut or whole, around the quote lengths.
        2 => (proptest::sample::select(vec!["€", "é", "😀", "\u{fffd}", "\n", "\u{1b}"]), 0usize..400, 0usize..4)
            .prop_map(|(c, n, cut)| {
                let mut b = c.repeat(n).into_bytes();
                b.truncate(b.len().saturating_sub(cut));
                b
            }),
        1 => (0usize..200_000).prop_map(|n| vec![b'x'; n]),
    ]
}

fn http_error() -> impl Strategy<Value = HttpError> {
    prop_oneof![
        any::<String>().prop_map(HttpError::Connect),
        any::<u64>().prop_map(HttpError::Timeout),
        any::<String>().prop_map(HttpError::Transport),
        Just(HttpError::Closed),
        any::<u64>().prop_map(HttpError::BodyTimeout),
        any::<usize>().prop_map(HttpError::TooLarge),
        any::<String>().prop_map(HttpError::Ended),
    ]
}

#[derive(Debug, Clone)]
struct CheckCase {
    status: u16,
    pid: Option<Vec<u8>>,
    thread_id: Option<Vec<u8>>,
    peer_port: Option<Vec<u8>>,
    body: Vec<u8>,
    port: u16,
    accept_swapped_port: bool,
    expected_pid: Option<u32>,
    digest: bool,
    error: Option<HttpError>,
}

fn check_case() -> impl Strategy<Value = CheckCase> {
    (
        (
            prop_oneof![4 => Just(200u16), 2 => 100u16..1000, 1 => any::<u16>()],
            any::<u16>(),
            any::<bool>(),
            proptest::option::of(1u32..100_000),
            any::<bool>(),
            proptest::option::weighted(0.1, http_error()),
        ),
        any::<bool>(),
    )
        .prop_flat_map(|((status, port, swapped, pid, digest, error), swap_near)| {
            // The peer port the server names: this connection's, swapped, or other.
            let near_port = if swap_near { port.swap_bytes() } else { port };
            (
                header_value(pid.unwrap_or(4242) as u64),
                header_value(140_000),
                header_value(near_port as u64),
                body(),
            )
                .prop_map(move |(pid_h, tid_h, port_h, body)| CheckCase {
                    status,
                    pid: pid_h,
                    thread_id: tid_h,
                    peer_port: port_h,
                    body,
                    port,
                    accept_swapped_port: swapped,
                    expected_pid: pid,
                    digest,
                    error: error.clone(),
                })
        })
}

/// What the check must decide, written from the rules, not from the code:
/// None for a pass, else the name of the `Broken` variant.
fn model(c: &CheckCase, by: &runner::http::ServedBy) -> Option<&'static str> {
    if c.error.is_some() {
        return Some("request");
    }
    if c.status != 200 {
        return Some("status");
    }
    if let Some(seen) = by.peer_port {
        let same = seen == c.port;
        let swapped_ok = c.accept_swapped_port && seen == c.port.swap_bytes();
        if !same && !swapped_ok {
            return Some("connection");
        }
    }
    if let (Some(want), Some(seen)) = (c.expected_pid, by.pid) {
        if want != seen {
            return Some("worker");
        }
    }
    if c.digest && String::from_utf8_lossy(&c.body).trim() != DIGEST {
        return Some("digest");
    }
    None
}

fn variant(b: &Broken) -> &'static str {
    match b {
        Broken::Request { .. } => "request",
        Broken::Status { .. } => "status",
        Broken::Connection { .. } => "connection",
        Broken::Worker { .. } => "worker",
        Broken::Digest { .. } => "digest",
        Broken::OneWorker { .. } => "one-worker",
        Broken::Control(_) => "control",
    }
}

fn run_check_case(c: CheckCase) -> Result<(), TestCaseError> {
    let mut headers = hyper::HeaderMap::new();
    for (name, value) in [
        ("x-pid", &c.pid),
        ("x-thread-id", &c.thread_id),
        ("x-peer-port", &c.peer_port),
    ] {
        // Bytes hyper would not have accepted as a header never reach us.
        if let Some(v) = value
            .as_deref()
            .and_then(|v| HeaderValue::from_bytes(v).ok())
        {
            headers.insert(name, v);
        }
    }
    let by = runner::http::served_by(&headers);
    let result = match &c.error {
        Some(e) => Err(e.clone()),
        None => Ok(Reply {
            status: c.status,
            body: Bytes::from(c.body.clone()),
            served_by: by.clone(),
            elapsed: Duration::from_millis(1),
            declared_length: None,
        }),
    };
    let asked = Asked {
        mode: MODE,
        url: URL,
        port: c.port,
        accept_swapped_port: c.accept_swapped_port,
        pid: c.expected_pid,
        digest: c.digest.then_some(DIGEST),
    };
    let want = model(&c, &by);
    match reply::check(&asked, result) {
        Ok(checked) => {
            prop_assert_eq!(want, None, "passed a reply the rules refuse");
            let seen = checked.reply.served_by.peer_port;
            prop_assert_eq!(
                checked.peer_port_swapped,
                seen.is_some_and(|s| s != c.port),
                "peer_port_swapped misreports {:?} on :{}",
                seen,
                c.port
            );
        }
        Err(broken) => {
            prop_assert_eq!(want, Some(variant(&broken)), "{}", broken);
            let message = broken.to_string();
            // Our own error strings are arbitrary here; the reply's parts
            // are what must stay bounded.
            if !matches!(broken, Broken::Request { .. }) {
                prop_assert!(
                    message.len() <= MESSAGE_BOUND,
                    "{} bytes: {}",
                    message.len(),
                    message
                );
                prop_assert!(!message.contains('\n'), "not one line: {}", message);
            }
        }
    }
    Ok(())
}

#[test]
fn fuzz_the_reply_check() {
    let before = count_panics();
    let cases = fuzz_cases();
    let tried = AtomicU64::new(0);
    let started = Instant::now();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&check_case(), |c| {
        tried.fetch_add(1, Ordering::Relaxed);
        run_check_case(c)
    });
    let panics = count_panics() - before;
    // bench/fuzz.sh reads this line.
    eprintln!(
        "fuzz: {} reply checks tried in {:.1} s, {panics} panics",
        tried.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert_eq!(panics, 0);
    assert!(tried.load(Ordering::Relaxed) >= cases as u64);
}

// ---- raw bytes over a socket ---------------------------------------------

/// Pieces of an HTTP/1.1 reply that parsers trip on.
fn status_line() -> impl Strategy<Value = Vec<u8>> {
    let version = prop_oneof![
        8 => Just("HTTP/1.1"),
        2 => Just("HTTP/1.0"),
        1 => proptest::sample::select(vec![
            "HTTP/2", "HTTP/1.1 ", "http/1.1", "HTTP/9.9", "", "HTTP/1.1\0",
        ]),
    ];
    let code = prop_oneof![
        6 => Just("200".to_string()),
        2 => (100u16..1000).prop_map(|c| c.to_string()),
        1 => "[0-9]{0,5}",
        1 => any::<String>(),
    ];
    let reason = prop_oneof![4 => Just("OK".to_string()), 1 => any::<String>()];
    let end = prop_oneof![
        8 => Just("\r\n"),
        1 => proptest::sample::select(vec!["\n", "\r", ""]),
    ];
    (version, code, reason, end).prop_map(|(v, c, r, e)| format!("{v} {c} {r}{e}").into_bytes())
}

fn header_line() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        12 => proptest::sample::select(vec![
            "Content-Length", "Transfer-Encoding", "Connection", "X-Pid",
            "X-Peer-Port", "X-Thread-Id", "Content-Type", "Upgrade",
        ]).prop_map(String::from),
        1 => any::<String>(),
        1 => Just(String::new()),
    ];
    let value = prop_oneof![
        3 => any::<u32>().prop_map(|n| n.to_string().into_bytes()),
        2 => proptest::sample::select(vec![
            "chunked", "close", "keep-alive", "gzip, chunked", "-1", "18446744073709551616",
            "1, 2", "websocket", "+5", "+0", " 5 ", "5, 5", "0x5", "", "chunked, gzip",
            "close, keep-alive", "5\t",
        ]).prop_map(|s| s.as_bytes().to_vec()),
        2 => proptest::collection::vec(any::<u8>(), 0..32),
    ];
    let sep = prop_oneof![
        8 => Just(": "),
        1 => proptest::sample::select(vec![":", " : ", ""]),
    ];
    (name, sep, value).prop_map(|(n, s, v)| [n.as_bytes(), s.as_bytes(), &v, b"\r\n"].concat())
}

/// A body, plain or chunked (with sizes that may lie).
fn wire_body() -> impl Strategy<Value = Vec<u8>> {
    let chunk =
        (proptest::collection::vec(any::<u8>(), 0..64), any::<i8>()).prop_map(|(data, lie)| {
            let size = (data.len() as i64 + lie as i64 % 3).max(0);
            [format!("{size:x}\r\n").as_bytes(), &data, b"\r\n"].concat()
        });
    prop_oneof![
        30 => proptest::collection::vec(any::<u8>(), 0..256),
        20 => Just(DIGEST.as_bytes().to_vec()),
        20 => (proptest::collection::vec(chunk, 0..6), any::<bool>()).prop_map(|(chunks, last)| {
            let mut b = chunks.concat();
            if last {
                b.extend_from_slice(b"0\r\n\r\n");
            }
            b
        }),
        // Rarely, past the 1 MiB cap.
        1 => Just(vec![b'0'; MAX_BODY_BYTES + 4096]),
    ]
}

/// The `Content-Length` lines of a reply whose body is `n` bytes: none,
/// right, signed, listed, repeated, padded with zeros, or one that
/// promises more than comes (an early close).
fn length_lines() -> impl Strategy<Value = fn(usize) -> String> {
    let forms: Vec<fn(usize) -> String> = vec![
        |_| String::new(),
        |n| format!("Content-Length: {n}\r\n"),
        |n| format!("Content-Length: +{n}\r\n"),
        |n| format!("Content-Length: -{n}\r\n"),
        |n| format!("Content-Length: {n}, {n}\r\n"),
        |n| format!("Content-Length: {n},{}\r\n", n + 1),
        |n| format!("Content-Length: {n}\r\nContent-Length: {n}\r\n"),
        |n| format!("Content-Length: {n}\r\nContent-Length: +{n}\r\n"),
        |n| format!("Content-Length: {n}\r\nContent-Length: {}\r\n", n + 1),
        |n| format!("Content-Length: 00{n}\r\n"),
        |n| format!("Content-Length: {}\r\n", n + 3),
    ];
    prop_oneof![
        6 => Just(forms[0]),
        6 => Just(forms[1]),
        4 => proptest::sample::select(forms),
    ]
}

/// One reply: status line, headers, blank line, body.
fn one_reply() -> impl Strategy<Value = Vec<u8>> {
    (
        status_line(),
        proptest::collection::vec(header_line(), 0..6),
        length_lines(),
        wire_body(),
    )
        .prop_map(|(status, headers, length, body)| {
            let mut out = status;
            for h in headers {
                out.extend_from_slice(&h);
            }
            out.extend_from_slice(length(body.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&body);
            out
        })
}

/// Interim replies a server may send before the real one (1xx), or none.
fn interim() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        6 => Just(""),
        1 => proptest::sample::select(vec![
            "HTTP/1.1 100 Continue\r\n\r\n",
            "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n",
            "HTTP/1.1 199 Odd\r\nContent-Length: 3\r\n\r\n",
            "HTTP/1.0 100 Continue\r\n\r\n",
        ]),
    ]
}

/// A built reply, maybe followed by a second one nobody asked for, then a
/// few byte edits.
fn built_reply() -> impl Strategy<Value = Vec<u8>> {
    let edit = (any::<prop::sample::Index>(), any::<u8>(), 0u8..3);
    let edits = prop_oneof![
        2 => Just(Vec::new()),
        1 => proptest::collection::vec(edit, 1..4),
    ];
    (
        interim(),
        one_reply(),
        proptest::option::weighted(0.2, one_reply()),
        edits,
        proptest::option::weighted(0.1, any::<prop::sample::Index>()),
    )
        .prop_map(|(first, a, b, edits, cut)| {
            let mut out = first.as_bytes().to_vec();
            out.extend(a);
            out.extend(b.unwrap_or_default());
            // The server closes early: anywhere in the reply.
            if let Some(cut) = cut {
                out.truncate(cut.index(out.len() + 1));
            }
            for (at, byte, op) in edits {
                if out.is_empty() {
                    break;
                }
                let i = at.index(out.len());
                match op {
                    0 => out[i] = byte,
                    1 => out.insert(i, byte),
                    _ => {
                        out.remove(i);
                    }
                }
            }
            out
        })
}

/// What the server writes: the bytes, cut into writes at these points.
fn served() -> impl Strategy<Value = (Vec<u8>, Vec<prop::sample::Index>)> {
    let bytes = prop_oneof![
        4 => built_reply(),
        1 => proptest::collection::vec(any::<u8>(), 0..1024),
    ];
    (
        bytes,
        proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
    )
}

/// Accepts one connection, reads the request head, writes `bytes` in
/// pieces, closes its write side, and drains until the client hangs up.
async fn serve_once(listener: TcpListener, bytes: Vec<u8>, cuts: Vec<usize>) {
    let Ok((mut stream, _)) = listener.accept().await else {
        return;
    };
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let mut from = 0;
    for to in cuts.into_iter().chain([bytes.len()]) {
        if stream.write_all(&bytes[from..to]).await.is_err() {
            return;
        }
        let _ = stream.flush().await;
        tokio::task::yield_now().await;
        from = to;
    }
    let _ = stream.shutdown().await;
    // Unread data at close would make it a reset: drain the second request.
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}

/// Which of the runner's two clients reads a socket case: the gates'
/// (`http::Connection`, hyper) or the load generator's (`load::wire`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    Gates,
    Load,
}

/// Two requests on one connection to a server that answers with `bytes`.
async fn fetch_twice(addr: SocketAddr, client: Client) -> [Option<Result<Reply, HttpError>>; 2] {
    // The two clients share no trait (the load's is not the gates'); the
    // same two calls on each.
    macro_rules! twice {
        ($open:expr) => {{
            let mut conn = match $open.await {
                Ok(c) => c,
                Err(e) => return [Some(Err(e)), None],
            };
            let first = conn.get(URL, REQUEST_TIMEOUT).await;
            let second = match &first {
                Ok(_) => Some(conn.get(URL, REQUEST_TIMEOUT).await),
                Err(_) => None,
            };
            [Some(first), second]
        }};
    }
    match client {
        Client::Gates => twice!(Connection::open(addr, REQUEST_TIMEOUT)),
        Client::Load => twice!(WireConnection::open(addr, REQUEST_TIMEOUT, MAX_BODY_BYTES)),
    }
}

/// Serves `bytes` once and reads them with `client`, bounded by CASE_BOUND.
async fn serve_and_fetch(
    bytes: Vec<u8>,
    cuts: Vec<usize>,
    client: Client,
) -> Result<[Option<Result<Reply, HttpError>>; 2], tokio::time::error::Elapsed> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve_once(listener, bytes, cuts));
    let results = tokio::time::timeout(CASE_BOUND, fetch_twice(addr, client)).await;
    server.abort();
    results
}

fn check_result(r: &Result<Reply, HttpError>) -> Result<(), TestCaseError> {
    match r {
        Ok(reply) => {
            prop_assert!(
                reply.body.len() <= MAX_BODY_BYTES,
                "{} bytes",
                reply.body.len()
            );
            prop_assert!(reply.elapsed <= CASE_BOUND);
        }
        Err(HttpError::Timeout(_) | HttpError::BodyTimeout(_)) => {
            prop_assert!(false, "a timeout although the server closed: {:?}", r);
        }
        Err(e) => {
            let message = e.to_string();
            prop_assert!(message.len() < 1024, "{}", message);
        }
    }
    Ok(())
}

#[test]
fn fuzz_raw_bytes_from_a_socket() {
    let before = count_panics();
    let cases = fuzz_cases();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tried = AtomicU64::new(0);
    let replies = AtomicU64::new(0);
    let both = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    // Which refusals the inputs reached (the error with its numbers blanked).
    let kinds = std::sync::Mutex::new(std::collections::BTreeMap::<String, u64>::new());
    let slowest = Arc::new(std::sync::Mutex::new(Duration::ZERO));
    let started = Instant::now();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&served(), |(bytes, cuts)| {
        tried.fetch_add(1, Ordering::Relaxed);
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut firsts = Vec::new();
        for client in [Client::Gates, Client::Load] {
            let case_started = Instant::now();
            let results = rt.block_on(serve_and_fetch(bytes.clone(), cuts.clone(), client));
            let took = case_started.elapsed();
            {
                let mut s = slowest.lock().unwrap();
                *s = (*s).max(took);
            }
            let results = results.map_err(|_| {
                TestCaseError::fail(format!("{client:?}: a case took over CASE_BOUND"))
            })?;
            // The first reply, or that the client refused it.
            firsts.push(match &results[0] {
                Some(Ok(first)) => Ok((first.status, first.body.clone())),
                Some(Err(e)) => Err(e.to_string()),
                None => Err("no request".to_string()),
            });
            for r in results.iter().flatten() {
                match r {
                    Ok(_) => {
                        replies.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        let kind: String = e.to_string().replace(|c: char| c.is_ascii_digit(), "");
                        *kinds.lock().unwrap().entry(kind).or_default() += 1;
                    }
                }
                check_result(r)?;
            }
        }
        // The same bytes, the same first reply from both clients, or both
        // refuse it (each in its own words).
        match (&firsts[0], &firsts[1]) {
            (Ok(gates), Ok(load)) => {
                prop_assert_eq!(
                    gates,
                    load,
                    "the two clients read different replies from the same bytes"
                );
                both.fetch_add(1, Ordering::Relaxed);
            }
            (Err(_), Err(_)) => {
                refused.fetch_add(1, Ordering::Relaxed);
            }
            (gates, load) => prop_assert!(
                false,
                "one client read a reply the other refused: gates (hyper) {:?}, load (wire) {:?}, from {:?}",
                gates.as_ref().map(|(s, b)| (s, b.len())),
                load.as_ref().map(|(s, b)| (s, b.len())),
                String::from_utf8_lossy(&bytes)
            ),
        }
        Ok(())
    });
    let panics = count_panics() - before;
    // bench/fuzz.sh reads this line.
    eprintln!(
        "fuzz: {} raw replies served in {:.1} s, each to both clients ({} parsed as replies, {} read alike by both, {} refused by both, none read by one alone, slowest case {:.0} ms), {panics} panics",
        tried.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        replies.load(Ordering::Relaxed),
        both.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
        slowest.lock().unwrap().as_secs_f64() * 1000.0
    );
    if std::env::var_os("REPLY_FUZZ_KINDS").is_some() {
        for (kind, n) in kinds.lock().unwrap().iter() {
            eprintln!("  {n:>7}  {kind}");
        }
    }
    if let Err(e) = result {
        panic!("{e}");
    }
    assert_eq!(panics, 0);
    assert!(tried.load(Ordering::Relaxed) >= cases as u64);
    // The strategies must reach the parser's success path too, or the fuzz
    // tests only refusal.
    assert!(
        replies.load(Ordering::Relaxed) > 0,
        "no input parsed as a reply"
    );
    assert!(
        both.load(Ordering::Relaxed) > 0,
        "no input parsed as a reply by both clients: the comparison never ran"
    );
}

#[test]
fn a_well_formed_reply_from_the_socket_is_read_whole() {
    // The twin of the fuzz: the same server and clients read a right reply
    // (plain, and chunked with a trailer, cut into pieces), so the fuzz's
    // refusals are the inputs', not the harness's.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let plain = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: 64\r\nX-Pid: 7\r\nX-Peer-Port: 1\r\n\r\n{DIGEST}"
    );
    let chunked = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n{}\r\n20;ext=1\r\n{}\r\n0\r\nX-T: 1\r\n\r\n",
        &DIGEST[..32],
        &DIGEST[32..]
    );
    for (bytes, cuts) in [(plain, vec![10, 40]), (chunked, vec![5, 50, 90])] {
        for client in [Client::Gates, Client::Load] {
            let [first, second] = rt
                .block_on(serve_and_fetch(
                    bytes.clone().into_bytes(),
                    cuts.clone(),
                    client,
                ))
                .unwrap();
            let reply = first.unwrap().unwrap();
            assert_eq!(reply.status, 200, "{client:?}");
            assert_eq!(reply.text(), DIGEST, "{client:?}");
            if client == Client::Gates && bytes.contains("X-Pid") {
                assert_eq!(reply.served_by.pid, Some(7));
            }
            // The server closed after one reply: the second request says so.
            assert!(
                matches!(second, Some(Err(HttpError::Closed | HttpError::Ended(_)))),
                "{client:?}: {second:?}"
            );
        }
    }
}
