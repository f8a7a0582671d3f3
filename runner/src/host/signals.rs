//! SIGINT and SIGTERM: the work future is dropped, which drops every
//! process guard inside it (stopping each server's whole process group),
//! and the caller learns which signal it was.

use std::future::Future;

use tokio::signal::unix::{signal, SignalKind};

/// Runs `work` to completion, or stops it at the first SIGINT or SIGTERM
/// and returns that signal's number.
pub async fn until_signal<F: Future>(work: F) -> Result<F::Output, i32> {
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        // Without handlers the default action (exit) still applies, and the
        // leaders' PR_SET_PDEATHSIG still takes the servers down on Linux.
        return Ok(work.await);
    };
    tokio::select! {
        out = work => Ok(out),
        _ = int.recv() => Err(libc::SIGINT),
        _ = term.recv() => Err(libc::SIGTERM),
    }
}

/// The conventional name of a signal we handle.
pub fn name(signal: i32) -> &'static str {
    if signal == libc::SIGTERM {
        "SIGTERM"
    } else {
        "SIGINT"
    }
}
