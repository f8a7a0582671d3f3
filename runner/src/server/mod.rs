//! One fresh server under test: started from its profile on a free loopback
//! port, polled until ready within a bound, checked to listen on loopback
//! only, logging through a capped pipe to a file whose tail goes into every
//! failure, and stopped (whole process group) when dropped.

pub mod asgi;
pub mod choose;
pub mod interface;
pub mod logdrain;
pub mod loopback;
pub mod pool;
pub mod status;

use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::host::process::{GroupGuard, StopOutcome};
use crate::http;
use crate::server::logdrain::{LogDrain, LOG_CAP_BYTES};
use crate::spec::profile::{Launch, NotApplicable, Profile};
use crate::spec::{Interface, ServerSettings};

/// Lines of server log shown with a failure.
pub const LOG_TAIL_LINES: usize = 20;
/// How long a stop waits for the server's last output to reach its log.
const LOG_FLUSH: Duration = Duration::from_secs(1);
/// How often readiness is polled (a refused connect costs microseconds;
/// every gate waits half of this on average after its server is up).
const READY_POLL: Duration = Duration::from_millis(10);
/// Characters of a readiness reply's body quoted in an error.
const READY_BODY_CHARS: usize = 120;

/// Why a server did not come up.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    NotApplicable(#[from] NotApplicable),
    #[error("cannot start {program:?} ({source}); check `argv` in {profile}")]
    Spawn {
        program: String,
        profile: String,
        source: std::io::Error,
    },
    #[error("no free port on the loopback address: {0}")]
    Port(std::io::Error),
    #[error("the server exited before it was ready ({status}); log {log}:\n{tail}")]
    Exited {
        status: String,
        log: String,
        tail: String,
    },
    #[error(transparent)]
    NotReady(Box<NotReady>),
    #[error(transparent)]
    NotAsAsked(Box<NotAsAsked>),
    #[error("the server listens on {addrs}, beyond loopback; servers under test must listen on loopback only (bind `{{host}}` in `argv` of {profile}, which the runner sets to {host}); it was stopped")]
    NotLoopback {
        addrs: String,
        host: String,
        profile: String,
    },
    #[error("cannot write the runner's ASGI wrapper into a temporary folder ({0}); check TMPDIR")]
    Wrapper(std::io::Error),
    #[error("cannot write the server log {log}: {source}")]
    Log { log: String, source: std::io::Error },
}

/// A server that sent no complete HTTP reply on its readiness path in time
/// (or only 503s: it said it was not ready yet).
#[derive(Debug, thiserror::Error)]
#[error("the server was not ready within {timeout_ms} ms (GET {path} {last}; raise `ready.timeout_ms` in {profile} if it is just slow to start); log {log}:\n{tail}")]
pub struct NotReady {
    timeout_ms: u64,
    path: String,
    /// What the attempts got: no reply (and the last attempt's error), or
    /// only 503s.
    last: String,
    profile: String,
    log: String,
    tail: String,
}

/// A server that answered its readiness path, but not with the status the
/// profile asks for (`ready.status`): said at once, since waiting longer
/// would not change a server that is up and answering.
#[derive(Debug, thiserror::Error)]
#[error("the server answered GET {path} with HTTP {got} ({body}) after {after_ms} ms, but {profile} asks for {wanted} (`ready.status`); give a route that answers {wanted} with --ready-path (or `ready_path` in the row), or drop `ready.status` from the profile to take any reply; log {log}")]
pub struct NotAsAsked {
    path: String,
    got: u16,
    wanted: u16,
    /// The start of the reply's body, as text.
    body: String,
    after_ms: u64,
    profile: String,
    log: String,
}

/// A running, ready server.
pub struct Server {
    guard: GroupGuard,
    drain: LogDrain,
    pub addr: SocketAddr,
    pub log: PathBuf,
    pub argv: Vec<String>,
    /// From spawn to the first reply on the readiness path.
    pub ready_after: Duration,
    /// The interface the server speaks to the app.
    pub interface: Interface,
    /// The ASGI wrapper's folder, kept while the server runs.
    _wrapper: Option<tempfile::TempDir>,
}

/// `reason`, then the server log `log`'s last lines `tail`, indented: for
/// a reply that broke on a 5xx, where a Python server prints the view's
/// traceback ("HTTP 500" alone tells the user nothing to fix).
pub fn with_log_tail(reason: &str, log: &Path, tail: &str) -> String {
    let mut out = format!("{reason}; the server's log ({}) ends:", log.display());
    for line in tail.lines() {
        out.push_str("\n    ");
        out.push_str(line);
    }
    out
}

impl Server {
    pub fn pgid(&self) -> i32 {
        self.guard.pgid()
    }

    /// The end of the server's output: from the log file, or, once the
    /// output passed the log's cap, from the drain with a note saying so.
    pub fn log_tail(&self) -> String {
        self.drain
            .overflow_tail(LOG_TAIL_LINES)
            .unwrap_or_else(|| crate::host::logtail::tail(&self.log, LOG_TAIL_LINES))
    }

    /// Bytes the server wrote beyond the log's cap (0 for a quiet server):
    /// a server flooding its output is busy with that, not the claim.
    pub fn log_dropped(&self) -> u64 {
        self.drain.dropped()
    }

    /// Whether the server's leader is still running.
    pub fn exited(&mut self) -> Option<String> {
        self.guard.try_exit_status().map(|s| s.to_string())
    }

    /// Stops the server's whole process group now, then lets the log copy
    /// finish (bounded: a process that escaped the group may hold the pipe).
    pub fn stop(&mut self) -> StopOutcome {
        let outcome = self.guard.stop();
        self.drain.wait(LOG_FLUSH);
        outcome
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Where to start a server and what to run in it.
pub struct ServerStart<'a> {
    pub profile: &'a Profile,
    pub settings: &'a ServerSettings,
    pub python: &'a Path,
    pub app: &'a str,
    pub app_dir: &'a Path,
    pub log: &'a Path,
    /// The readiness path instead of the profile's `ready.path`
    /// (`--ready-path`, or the route under test for the user's own app).
    pub ready_path: Option<&'a str>,
}

/// A server spawned but not yet ready: its process group and argv are known,
/// so a caller can record them even if it never becomes ready.
pub struct Starting {
    server: Server,
    started: Instant,
    ready_path: String,
    ready_timeout_ms: u64,
    ready_status: Option<u16>,
    profile_file: String,
    host_text: String,
}

impl Starting {
    pub fn pgid(&self) -> i32 {
        self.server.pgid()
    }

    pub fn argv(&self) -> &[String] {
        &self.server.argv
    }

    /// Waits (bounded by the profile's `ready.timeout_ms`) until the server
    /// sends a complete HTTP reply on its readiness path, whatever its
    /// status (a user's app may answer 404 on `/`: it is up all the same),
    /// and listens on loopback only. When the profile asks for a status
    /// (`ready.status`) and the server answers another, that is said at
    /// once. On error the server is dropped, which stops its whole process
    /// group.
    pub async fn ready(self) -> Result<Server, StartError> {
        let Starting {
            mut server,
            started,
            ready_path,
            ready_timeout_ms,
            ready_status,
            profile_file,
            host_text,
        } = self;
        let timeout = Duration::from_millis(ready_timeout_ms);
        let mut last = String::from("got no HTTP reply (no attempt yet)");
        let mut seen_503 = false;
        loop {
            if let Some(status) = server.exited() {
                return Err(StartError::Exited {
                    status,
                    log: server.log.display().to_string(),
                    tail: server.log_tail(),
                });
            }
            // A readiness request never outlives the readiness bound, and
            // gets all of what is left: a refused connection returns at
            // once, and a server that accepted is answering (the route may be
            // a slow view, or its first request may build the app's state).
            let left = timeout.saturating_sub(started.elapsed());
            if !left.is_zero() {
                // Raced against the leader's exit: a server whose leader
                // died while something else holds its port must not be
                // waited on for the whole bound.
                let mut request = Box::pin(http::get_once(server.addr, &ready_path, left));
                let answer = loop {
                    tokio::select! {
                        answer = &mut request => break Some(answer),
                        () = tokio::time::sleep(READY_POLL) => {
                            if server.exited().is_some() {
                                break None;
                            }
                        }
                    }
                };
                drop(request);
                let Some(answer) = answer else { continue };
                match answer {
                    Ok(reply) if ready_status.is_some_and(|s| s != reply.status) => {
                        let body: String = reply.text().chars().take(READY_BODY_CHARS).collect();
                        return Err(StartError::NotAsAsked(Box::new(NotAsAsked {
                            path: ready_path,
                            got: reply.status,
                            wanted: ready_status.unwrap_or(200),
                            body: format!("{:?}", body.trim()),
                            after_ms: started.elapsed().as_millis() as u64,
                            profile: profile_file,
                            log: server.log.display().to_string(),
                        })));
                    }
                    // 503 is the one status that says "up, not ready yet"
                    // (RFC 9110, 15.6.4): keep polling, as a health check
                    // that answers it while the app loads asks.
                    Ok(reply) if reply.status == 503 && ready_status != Some(503) => {
                        seen_503 = true;
                        last = "answered only HTTP 503 Service Unavailable (the server says it is not ready yet)"
                            .into();
                    }
                    Ok(_) => return ready_now(server, started, host_text, profile_file),
                    // The headers came and the body runs past the cap:
                    // the server is answering (a huge view as the path).
                    Err(http::HttpError::TooLarge(_)) if ready_status.is_none() => {
                        return ready_now(server, started, host_text, profile_file);
                    }
                    Err(e) if seen_503 => {
                        last = format!("answered only HTTP 503 Service Unavailable (the server says it is not ready yet; last attempt: {e})");
                    }
                    Err(e) => last = format!("got no HTTP reply, last: {e}"),
                }
            }
            if started.elapsed() >= timeout {
                return Err(StartError::NotReady(Box::new(NotReady {
                    timeout_ms: ready_timeout_ms,
                    path: ready_path,
                    last,
                    profile: profile_file,
                    log: server.log.display().to_string(),
                    tail: server.log_tail(),
                })));
            }
            tokio::time::sleep(READY_POLL).await;
        }
    }
}

/// The server answered: it is ready once it listens on loopback only.
fn ready_now(
    mut server: Server,
    started: Instant,
    host: String,
    profile: String,
) -> Result<Server, StartError> {
    server.ready_after = started.elapsed();
    let stray = loopback::stray_listeners(server.pgid());
    if !stray.is_empty() {
        let addrs: Vec<String> = stray.iter().map(|a| a.to_string()).collect();
        return Err(StartError::NotLoopback {
            addrs: addrs.join(", "),
            host,
            profile,
        });
    }
    Ok(server)
}

/// Starts a server and waits until it answers its readiness path.
pub async fn start(req: ServerStart<'_>) -> Result<Server, StartError> {
    spawn(req)?.ready().await
}

/// Spawns a server from its profile on a free loopback port.
pub fn spawn(req: ServerStart<'_>) -> Result<Starting, StartError> {
    let host = loopback::bind_host();
    let host_text = host.to_string();
    let port = free_port(host).map_err(StartError::Port)?;
    // An ASGI server serves the runner's wrapper, which imports the app.
    let (wrapper, wrapper_env) = match req.profile.interface {
        Interface::Wsgi => (None, Default::default()),
        Interface::Asgi => {
            let (dir, env) = asgi::install(req.app, req.app_dir).map_err(StartError::Wrapper)?;
            (Some(dir), env)
        }
    };
    let launch = Launch {
        python: req.python,
        host: &host_text,
        port,
        app: if wrapper.is_some() {
            asgi::APP
        } else {
            req.app
        },
        app_dir: req.app_dir,
    };
    let argv = req.profile.argv(&launch, req.settings)?;
    let knob_env = req.profile.knob_env(&launch, req.settings)?;
    if let Some(dir) = req.log.parent() {
        std::fs::create_dir_all(dir).map_err(|source| StartError::Log {
            log: req.log.display().to_string(),
            source,
        })?;
    }
    // Output goes through a pipe we drain, so a flood cannot fill the disk.
    let (drain, output) =
        LogDrain::start(req.log, LOG_CAP_BYTES).map_err(|source| StartError::Log {
            log: req.log.display().to_string(),
            source,
        })?;
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .current_dir(req.app_dir)
        .envs(&req.profile.env)
        .envs(&wrapper_env)
        .envs(&knob_env)
        .envs(&req.settings.env)
        .stdin(Stdio::null())
        .stdout(output.stdout)
        .stderr(output.stderr);
    let started = Instant::now();
    let guard = GroupGuard::spawn(
        &mut command,
        Duration::from_millis(req.profile.stop_grace_ms),
    )
    .map_err(|source| StartError::Spawn {
        program: argv[0].clone(),
        profile: req.profile.file.display().to_string(),
        source,
    })?;
    // Our copies of the pipe's writing end go with the command, so the
    // drain sees end-of-file once the server's group is gone.
    drop(command);
    let server = Server {
        guard,
        drain,
        addr: SocketAddr::new(host, port),
        log: req.log.to_path_buf(),
        argv,
        ready_after: Duration::ZERO,
        interface: req.profile.interface,
        _wrapper: wrapper,
    };
    Ok(Starting {
        server,
        started,
        ready_path: req
            .ready_path
            .unwrap_or(&req.profile.ready.path)
            .to_string(),
        ready_timeout_ms: req.profile.ready.timeout_ms,
        ready_status: req.profile.ready.status,
        profile_file: req.profile.file.display().to_string(),
        host_text,
    })
}

/// A port that was free on `host` a moment ago.
fn free_port(host: IpAddr) -> std::io::Result<u16> {
    Ok(TcpListener::bind((host, 0))?.local_addr()?.port())
}
