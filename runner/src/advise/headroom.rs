//! Question 2, is there headroom? A short sweep (the sweep engine: a fresh
//! server per setting, closed-loop load, every `/work` digest checked) over
//! 1, 2 and 4 handler threads, read as: the cores one request in flight asks
//! for (on-CPU plus run-queue time of the server's process group at one
//! thread: waiting for a core still counts, so a busy machine cannot make
//! a parallel library look serial), the machine's cores, and req/s scaling
//! against one thread.

use schemars::JsonSchema;
use serde::Serialize;

use super::NEAR_BEST;
use crate::session::Session;
use crate::sweep::{self, SettingResult, Status, SweepPlan};

/// The settings swept.
pub const THREADS: [u32; 3] = [1, 2, 4];

/// A setting with fewer good replies than this cannot be read: its window
/// is doubled, up to [`SWEEP_DURATION_MAX`], before advise gives up.
pub const SWEEP_REPLIES_AT_LEAST: u64 = 20;
pub const SWEEP_DURATION_MAX: std::time::Duration = std::time::Duration::from_secs(6);

/// One setting's figures.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Point {
    pub threads: u32,
    pub requests_per_s: f64,
    /// req/s against one thread.
    pub scaling: f64,
    pub cpu_pct: Option<f64>,
    pub run_queue_pct: Option<f64>,
    /// The measured window (lengthened when a setting had too few replies).
    pub window_s: f64,
    /// The warm-up before it, and the handler threads it reached.
    pub warmup_s: Option<f64>,
    pub threads_reached: Option<u32>,
}

/// The figures question 2 stands on.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HeadroomFigures {
    /// Cores this process may run on.
    pub cores: usize,
    /// The server's on-CPU time at one handler thread, as % of one core.
    pub one_thread_cpu_pct: f64,
    /// Its run-queue wait at one thread, as % of one core.
    pub one_thread_run_queue_pct: f64,
    pub points: Vec<Point>,
}

impl HeadroomFigures {
    /// Cores one request in flight asks for: (on-CPU + run-queue) at one
    /// thread, in cores.
    pub fn one_thread_demand(&self) -> f64 {
        (self.one_thread_cpu_pct + self.one_thread_run_queue_pct) / 100.0
    }

    pub fn scaling_at(&self, threads: u32) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.threads == threads)
            .map(|p| p.scaling)
    }

    fn best(&self) -> Option<&Point> {
        self.points
            .iter()
            .max_by(|a, b| a.requests_per_s.total_cmp(&b.requests_per_s))
    }

    pub fn best_scaling(&self) -> Option<f64> {
        self.best().map(|p| p.scaling)
    }

    /// The fewest threads that reach [`NEAR_BEST`] of the best req/s: more
    /// than that only adds run-queue wait.
    pub fn enough_threads(&self) -> u32 {
        let best = self.best().map_or(0.0, |p| p.requests_per_s);
        self.points
            .iter()
            .filter(|p| p.requests_per_s >= NEAR_BEST * best)
            .map(|p| p.threads)
            .min()
            .unwrap_or(1)
    }
}

/// Question 2's answer: the figures, or why there are none.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Headroom {
    pub figures: Option<HeadroomFigures>,
    /// Why there are no figures (empty when there are).
    pub reason: String,
}

/// Cores this process may run on (its affinity mask where the platform has
/// one).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sweeps `plan` at each of [`THREADS`], one setting at a time: a setting
/// that is slow (no reply in the window, none failed) or has fewer than
/// [`SWEEP_REPLIES_AT_LEAST`] good replies is measured again with its window
/// doubled, up to [`SWEEP_DURATION_MAX`]; then it is read as it is.
/// Err when the session's Python could not be prepared.
pub async fn measure(session: &Session, plan: &SweepPlan) -> Result<Vec<SettingResult>, String> {
    let mut out = Vec::new();
    for threads in THREADS {
        let mut plan = SweepPlan {
            threads: vec![threads],
            ..plan.clone()
        };
        loop {
            let mut one = Vec::new();
            sweep::run(session, &plan, &mut one, &mut |_| {}).await?;
            let Some(result) = one.pop() else { break };
            let too_few = match result.status {
                Status::Slow => true,
                Status::Clean => result
                    .load
                    .as_ref()
                    .is_some_and(|l| l.requests < SWEEP_REPLIES_AT_LEAST),
                _ => false,
            };
            if too_few && plan.duration * 2 <= SWEEP_DURATION_MAX {
                plan.duration *= 2;
                continue;
            }
            out.push(result);
            break;
        }
    }
    sweep::scale(&mut out);
    Ok(out)
}

/// Reads the sweep's settings (one per entry of [`THREADS`], in order).
pub fn read(settings: &[SettingResult], cores: usize) -> Headroom {
    let none = |reason: String| Headroom {
        figures: None,
        reason,
    };
    let mut points = Vec::new();
    let mut one = None;
    for s in settings {
        let threads = s.setting.threads.unwrap_or(0);
        if s.status != Status::Clean {
            return none(format!(
                "the sweep at {threads} thread(s) was {}: {}",
                s.status.label(),
                s.reason.as_deref().unwrap_or("no reason given")
            ));
        }
        let Some(rps) = s.requests_per_s().filter(|r| *r > 0.0) else {
            return none(format!(
                "the sweep at {threads} thread(s) had no good reply"
            ));
        };
        if threads == 1 {
            match &s.cpu {
                Some(c) => one = Some(*c),
                None => {
                    return none(format!(
                        "no CPU figures at one thread: {}",
                        s.cpu_note
                            .as_deref()
                            .unwrap_or("the accounting could not be read")
                    ))
                }
            }
        }
        points.push(Point {
            threads,
            requests_per_s: rps,
            scaling: s.scaling.unwrap_or(0.0),
            cpu_pct: s.cpu.map(|c| c.cpu_pct),
            run_queue_pct: s.cpu.map(|c| c.run_queue_pct),
            window_s: s.load.as_ref().map_or(0.0, |l| l.window_s),
            warmup_s: s.warmup.as_ref().map(|w| w.elapsed_s),
            threads_reached: s.warmup.as_ref().map(|w| w.threads_reached),
        });
    }
    let Some(one) = one else {
        return none("the sweep did not measure one thread".into());
    };
    if points.len() != THREADS.len() {
        return none(format!(
            "the sweep measured {} of {} settings",
            points.len(),
            THREADS.len()
        ));
    }
    Headroom {
        figures: Some(HeadroomFigures {
            cores,
            one_thread_cpu_pct: one.cpu_pct,
            one_thread_run_queue_pct: one.run_queue_pct,
            points,
        }),
        reason: String::new(),
    }
}
