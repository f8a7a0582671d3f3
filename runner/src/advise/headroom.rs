//! Question 2, is there headroom? A short sweep (the sweep engine: a fresh
//! server per setting, closed-loop load, every `/work` digest checked) over
//! 1, 2 and 4 handler threads, read as: the cores one request in flight asks
//! for (on-CPU plus run-queue time of the server's process group at one
//! thread: waiting for a core still counts, so a busy machine cannot make
//! a parallel library look serial), the machine's cores, and req/s scaling
//! against one thread.
//!
//! The settings are swept one after another, so a neighbour's burst can
//! land on one setting and not the next: beside two burst loads one thread
//! of a view that already fills both cores read 1.63x slower than two. When
//! the figures disagree with question 1, the sweep is repeated (at most
//! [`SWEEPS_AT_MOST`] times, or [`SWEEPS_AT_MOST_FILLS`] for a library that
//! fills the machine, its order rotated, so every setting meets more of the
//! machine's moments) and each setting keeps the figures least
//! touched by noise, which only takes away: its best req/s and its least
//! run-queue wait (on-CPU: the median). `sweeps` says how many there were.

use schemars::JsonSchema;
use serde::Serialize;

use super::NEAR_BEST;
use crate::session::Session;
use crate::stats::Spread;
use crate::sweep::{self, SettingResult, Status, SweepPlan};

/// The settings swept.
pub const THREADS: [u32; 3] = [1, 2, 4];
/// Sweeps at most, while the figures disagree with question 1.
pub const SWEEPS_AT_MOST: u32 = 3;
/// Sweeps at most where one request already fills the machine: such a
/// library's pool thrashes while a neighbour holds a core, for stretches
/// longer than a sweep (beside two burst loads the model app's one-thread
/// step fell from 13-34 req/s to 2.7-10 in 14 of 45 readings, in runs of
/// up to 40 s, at 0.99-1.13 cores of CPU), so three sweeps could all meet
/// it.
pub const SWEEPS_AT_MOST_FILLS: u32 = 6;

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
    /// Sweeps whose figures these are (more than one when the first
    /// disagreed with question 1).
    pub sweeps: u32,
}

impl HeadroomFigures {
    /// Cores one request in flight asks for: (on-CPU + run-queue) at one
    /// thread, in cores.
    pub fn one_thread_demand(&self) -> f64 {
        (self.one_thread_cpu_pct + self.one_thread_run_queue_pct) / 100.0
    }

    /// Cores the server's group asked for at `threads` handler threads:
    /// (on-CPU + run-queue) over the window, in cores; None where unread.
    pub fn demand_at(&self, threads: u32) -> Option<f64> {
        let p = self.points.iter().find(|p| p.threads == threads)?;
        Some((p.cpu_pct? + p.run_queue_pct?) / 100.0)
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
    measure_in(session, plan, THREADS).await
}

/// Question 2's figures: a sweep, then, while `again` says the figures so
/// far (and how many sweeps they are) want another, another in a rotated
/// order, read together by [`least_touched`]. A sweep that gives no figures
/// ends it with its reason; Err when the session's Python could not be
/// prepared.
pub async fn answer(
    session: &Session,
    plan: &SweepPlan,
    cores: usize,
    again: &dyn Fn(&Headroom, u32) -> bool,
) -> Result<Headroom, String> {
    let mut sweeps: Vec<HeadroomFigures> = Vec::new();
    loop {
        let mut order = THREADS;
        order.rotate_left(sweeps.len() % THREADS.len());
        let one = read(&measure_in(session, plan, order).await?, cores);
        let Some(figures) = one.figures else {
            return Ok(one);
        };
        sweeps.push(figures);
        let combined = Headroom {
            figures: Some(least_touched(&sweeps)),
            reason: String::new(),
        };
        if !again(&combined, sweeps.len() as u32) {
            return Ok(combined);
        }
    }
}

/// `sweeps` (each with one point per entry of [`THREADS`], in order) as
/// one: per setting the best req/s, the least run-queue wait and the median
/// on-CPU share; scaling against the best one-thread req/s.
pub fn least_touched(sweeps: &[HeadroomFigures]) -> HeadroomFigures {
    let spread = |v: Vec<f64>| {
        Spread::of(&v).unwrap_or(Spread {
            median: 0.0,
            min: 0.0,
            max: 0.0,
        })
    };
    let spread_opt = |v: Vec<Option<f64>>| -> Option<Spread> {
        let v: Vec<f64> = v.into_iter().collect::<Option<_>>()?;
        Spread::of(&v)
    };
    let first = &sweeps[0];
    let mut points: Vec<Point> = first
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at = |f: &dyn Fn(&Point) -> f64| -> Vec<f64> {
                sweeps.iter().map(|s| f(&s.points[i])).collect()
            };
            let at_opt = |f: &dyn Fn(&Point) -> Option<f64>| -> Vec<Option<f64>> {
                sweeps.iter().map(|s| f(&s.points[i])).collect()
            };
            Point {
                threads: p.threads,
                requests_per_s: spread(at(&|p| p.requests_per_s)).max,
                scaling: 0.0,
                cpu_pct: spread_opt(at_opt(&|p| p.cpu_pct)).map(|s| s.median),
                run_queue_pct: spread_opt(at_opt(&|p| p.run_queue_pct)).map(|s| s.min),
                window_s: at(&|p| p.window_s).iter().sum(),
                warmup_s: p.warmup_s,
                threads_reached: sweeps
                    .iter()
                    .filter_map(|s| s.points[i].threads_reached)
                    .min(),
            }
        })
        .collect();
    let base = points
        .iter()
        .find(|p| p.threads == 1)
        .map_or(0.0, |p| p.requests_per_s);
    for p in &mut points {
        p.scaling = if base > 0.0 {
            p.requests_per_s / base
        } else {
            0.0
        };
    }
    HeadroomFigures {
        cores: first.cores,
        one_thread_cpu_pct: spread(sweeps.iter().map(|s| s.one_thread_cpu_pct).collect()).median,
        one_thread_run_queue_pct: spread(
            sweeps.iter().map(|s| s.one_thread_run_queue_pct).collect(),
        )
        .min,
        points,
        sweeps: sweeps.len() as u32,
    }
}

/// [`measure`], the settings swept in `order` and returned in [`THREADS`]'
/// order.
async fn measure_in(
    session: &Session,
    plan: &SweepPlan,
    order: [u32; 3],
) -> Result<Vec<SettingResult>, String> {
    let mut out = Vec::new();
    for threads in order {
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
    out.sort_by_key(|r| r.setting.threads);
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
            sweeps: 1,
        }),
        reason: String::new(),
    }
}
