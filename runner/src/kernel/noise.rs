//! Background CPU load for `runner stress`: a busy loop the runner itself
//! starts, bounds and kills, so that flakiness is measured under a known
//! disturbance instead of whatever else the machine happens to be doing.
//!
//! The load is a child process (a few lines of Python run from an argv, no
//! shell), not a thread of ours: a process leads its own group through
//! [`GroupGuard`], so stopping it is the same SIGTERM-grace-SIGKILL path as
//! every server, it dies with the runner (PR_SET_PDEATHSIG on Linux), and it
//! cannot share the runner's own scheduling or allocator state. A single
//! Python thread can use at most one core, which is what both patterns want.
//! It also ends itself after `lifetime`, so even an orphan is bounded.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::Serialize;

use crate::host::process::GroupGuard;

/// The background load a stress run applies (`runner stress --noise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Noise {
    /// No load of our own.
    None,
    /// One core busy for 100 ms, then idle for 100 ms, over and over.
    Burst,
    /// One core busy all the time.
    Spin,
}

impl Noise {
    /// Every load, in the order a value list shows them.
    pub const ALL: [Noise; 3] = [Noise::None, Noise::Burst, Noise::Spin];

    /// As the flag, the JSON summary and the terminal spell it.
    pub fn name(self) -> &'static str {
        match self {
            Noise::None => "none",
            Noise::Burst => "burst",
            Noise::Spin => "spin",
        }
    }

    /// What the load does, in a line (the value list's help).
    pub fn describe(self) -> &'static str {
        match self {
            Noise::None => "No load of our own",
            Noise::Burst => "One core busy for 100 ms, then idle for 100 ms, over and over",
            Noise::Spin => "One core busy all the time",
        }
    }

    /// (busy ms, idle ms) per period; None for no load.
    pub fn duty_ms(self) -> Option<(u64, u64)> {
        match self {
            Noise::None => None,
            Noise::Burst => Some((100, 100)),
            Noise::Spin => Some((1000, 0)),
        }
    }
}

impl std::str::FromStr for Noise {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Noise::ALL
            .into_iter()
            .find(|n| n.name() == s)
            .ok_or_else(|| format!("{s:?}: use none, burst or spin"))
    }
}

/// How long a load may take to start spinning.
const LOAD_START: Duration = Duration::from_secs(10);

/// The busy loop. argv: busy_ms idle_ms lifetime_s. Says `busy` on stdout
/// once it is about to spin, then spins on the monotonic clock for busy_ms,
/// sleeps idle_ms, until lifetime_s have passed.
const LOOP: &str = "\
import sys, time
on, off, life = float(sys.argv[1]) / 1e3, float(sys.argv[2]) / 1e3, float(sys.argv[3])
end = time.monotonic() + life
print('busy', flush=True)
while time.monotonic() < end:
    busy = time.monotonic() + on
    while time.monotonic() < busy:
        pass
    if off:
        time.sleep(off)
";

/// A running load; stopped (whole group) when dropped.
pub struct Load {
    guard: GroupGuard,
    pub noise: Noise,
}

impl Load {
    /// Starts `noise` with `python`, ending itself after `lifetime` at the
    /// latest. `Ok(None)` for [`Noise::None`].
    pub fn start(noise: Noise, python: &Path, lifetime: Duration) -> std::io::Result<Option<Self>> {
        let Some((on_ms, off_ms)) = noise.duty_ms() else {
            return Ok(None);
        };
        let mut command = Command::new(python);
        command
            .args(["-c", LOOP])
            .arg(on_ms.to_string())
            .arg(off_ms.to_string())
            .arg(lifetime.as_secs().max(1).to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // A busy loop holds nothing worth a graceful stop.
        let mut guard = GroupGuard::spawn(&mut command, Duration::from_millis(200))?;
        // Return only once the loop is spinning, so the load covers the
        // whole measurement rather than starting during it (the
        // interpreter takes tens of ms to start, longer on a loaded machine).
        let stdout = guard.child_mut().stdout.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            if let Some(out) = stdout {
                let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line);
            }
            let _ = tx.send(line);
        });
        match rx.recv_timeout(LOAD_START) {
            Ok(line) if line.trim() == "busy" => Ok(Some(Self { guard, noise })),
            Ok(_) => Err(std::io::Error::other("the load exited before it started")),
            Err(_) => Err(std::io::Error::other(format!(
                "the load did not start within {} s",
                LOAD_START.as_secs()
            ))),
        }
    }

    pub fn pgid(&self) -> i32 {
        self.guard.pgid()
    }

    /// Stops the load now.
    pub fn stop(&mut self) {
        self.guard.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::process::group_alive;

    fn python() -> std::path::PathBuf {
        "python3".into()
    }

    #[test]
    fn the_flag_the_json_and_the_terminal_spell_it_alike() {
        for n in Noise::ALL {
            assert_eq!(serde_json::to_value(n).unwrap(), n.name());
            assert_eq!(n.name().parse::<Noise>(), Ok(n));
        }
        assert!("loud".parse::<Noise>().is_err());
    }

    #[test]
    fn none_starts_nothing() {
        assert!(Load::start(Noise::None, &python(), Duration::from_secs(5))
            .unwrap()
            .is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn spin_keeps_a_thread_runnable_all_the_time_and_burst_about_half() {
        // Runnable time (on a CPU, or waiting on a run queue for one) over
        // wall time, from the kernel's per-task accounting: spin near 1.0,
        // burst near 0.5. CPU time alone measured the machine instead: on a
        // loaded 2-core box spin got 0.29 of a core while runnable all along.
        use crate::kernel::schedstat::{delta, Snapshot};
        let share = |noise| {
            let mut load = Load::start(noise, &python(), Duration::from_secs(30))
                .unwrap()
                .unwrap();
            let pgid = load.pgid();
            std::thread::sleep(Duration::from_millis(300));
            let before = Snapshot::of_group(pgid).unwrap();
            std::thread::sleep(Duration::from_millis(1200));
            let after = Snapshot::of_group(pgid).unwrap();
            load.stop();
            assert!(!group_alive(pgid), "the load survived its stop");
            let d = delta(&before, &after);
            (d.on_cpu_ns + d.run_queue_ns) as f64 / d.wall.as_nanos() as f64
        };
        let spin = share(Noise::Spin);
        let burst = share(Noise::Burst);
        assert!(spin > 0.85, "spin was runnable {spin:.2} of the time");
        assert!(
            burst < 0.75 && burst > 0.25,
            "burst was runnable {burst:.2} of the time"
        );
        assert!(spin > burst + 0.2, "spin {spin:.2} vs burst {burst:.2}");
    }

    #[test]
    fn dropping_a_load_kills_it_and_a_lifetime_bounds_it() {
        let load = Load::start(Noise::Spin, &python(), Duration::from_secs(30))
            .unwrap()
            .unwrap();
        let pgid = load.pgid();
        assert!(group_alive(pgid));
        drop(load);
        assert!(!group_alive(pgid));

        let load = Load::start(Noise::Burst, &python(), Duration::from_secs(1))
            .unwrap()
            .unwrap();
        let pgid = load.pgid();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while group_alive(pgid) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        // Gone by itself (the guard is still held, so it did not stop it),
        // or only a zombie awaiting the guard's reap.
        assert!(!group_alive(pgid), "the load outlived its 1 s lifetime");
        drop(load);
    }
}
