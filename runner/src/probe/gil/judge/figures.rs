//! A GIL probe's report reduced to figures: each arm's reading over the
//! rounds (median and range), its busy share and rate, the spinner's
//! run-queue share, and the `--scale` table as multiples of one thread.
//! No verdict here (`judge.rs`), no words (`words.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::probe::gil::instrument::{
    AloneFigures, Instrument, InstrumentReport, PythonFacts, RoundFigure, ScaleReport,
};
use crate::probe::gil::plan::{Expect, GilBounds, GilPlan};

/// The arms in reporting order: the call, then the three controls.
pub const CALL: &str = "call";
pub const RELEASES: &str = "releases";
pub const HOLDS_HALF: &str = "holds-half";
pub const HOLDS_ALL: &str = "holds-all";

/// Median and extremes of a set of fractions or rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MedianRange {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl MedianRange {
    pub fn of(values: &[f64]) -> Option<Self> {
        let s = crate::stats::Spread::of(values)?;
        Some(Self {
            median: s.median,
            min: s.min,
            max: s.max,
        })
    }
}

/// One arm's figures over the rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArmFigures {
    pub arm: String,
    /// What the arm runs (`ctypes.PyDLL(None).usleep(25000)`, `time:sleep`).
    pub description: String,
    /// The reading (blocked or lost share), over rounds.
    pub reading: MedianRange,
    /// The reading of each round, in round order.
    pub rounds: Vec<f64>,
    /// Median share of each round the worker spent inside the call.
    pub busy: f64,
    pub calls_per_s: f64,
    pub call_us: Option<f64>,
    /// Median CPU per call over every thread of the process, the
    /// spinner's taken off (schedstat rounds only).
    #[serde(default)]
    pub cpu_us: Option<f64>,
    /// Median share of each round the spinner waited for a core.
    pub runqueue: Option<f64>,
}

/// The three controls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ControlFigures {
    pub releases: ArmFigures,
    pub holds_half: ArmFigures,
    pub holds_all: ArmFigures,
}

/// One worker count of the threads-against-processes table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleLine {
    pub workers: u32,
    pub threads_calls_per_s: Option<MedianRange>,
    pub processes_calls_per_s: Option<MedianRange>,
    /// Median over reps of calls/s over the same rep's one thread.
    pub threads_x: Option<f64>,
    pub processes_x: Option<f64>,
    /// The capacity control (bytecode in N processes) over its own N = 1,
    /// per rep: about N when the machine has N free cores.
    pub capacity_x: Option<f64>,
    /// Peak PSS, MiB: the probe's process for threads (an upper bound: it
    /// holds every thread pool), the N processes summed.
    #[serde(default)]
    pub threads_pss_mib: Option<f64>,
    #[serde(default)]
    pub processes_pss_mib: Option<f64>,
}

/// The `--scale` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleFigures {
    pub calls_per_worker: u64,
    pub single_call_us: f64,
    pub reps: u32,
    pub lines: Vec<ScaleLine>,
}

/// Everything the verdict was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GilFigures {
    /// The answer, when there is one.
    pub answer: Option<Expect>,
    /// `time:sleep` or `setup zimsearch:setup`, with its arguments.
    pub target: String,
    pub instrument: Instrument,
    pub instrument_note: String,
    /// Rounds planned per arm.
    pub rounds: u32,
    /// Rounds run per arm: more than planned when some had no reading.
    pub rounds_run: u32,
    pub round_ms: u32,
    pub call: ArmFigures,
    /// The call alone, before the spinner started (its own time and CPU).
    #[serde(default)]
    pub alone: Option<AloneFigures>,
    pub controls: ControlFigures,
    /// Median over every round of the spinner's share on the run queue.
    pub runqueue: Option<f64>,
    pub bounds: GilBounds,
    pub python: PythonFacts,
    pub result_sample: Option<String>,
    pub elapsed_s: Option<f64>,
    pub scale: Option<ScaleFigures>,
    /// Each control (releases, holds-half, holds-all) against its designed
    /// bound: the judge's reading, which the tables show (`judge.rs` sets
    /// it; empty until then).
    #[serde(default)]
    pub control_checks: Vec<ControlCheck>,
}

/// One control against the bound it is designed to read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ControlCheck {
    /// `<= 0.15` (releases) or `>= 0.40` (holds).
    pub designed: Designed,
    pub as_designed: bool,
}

/// A control's designed bound on its reading (a share, not a ratio).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Designed {
    AtMost(f64),
    AtLeast(f64),
}

impl Designed {
    pub fn holds(self, value: f64) -> bool {
        match self {
            Designed::AtMost(v) => value <= v,
            Designed::AtLeast(v) => value >= v,
        }
    }
}

impl std::fmt::Display for Designed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Designed::AtMost(v) => write!(f, "<= {v:.2}"),
            Designed::AtLeast(v) => write!(f, ">= {v:.2}"),
        }
    }
}

fn median(values: &[f64]) -> Option<f64> {
    crate::stats::Spread::of(values).map(|s| s.median)
}

/// The figures of `report`, or why there are none.
pub fn figures(plan: &GilPlan, report: &InstrumentReport) -> Result<GilFigures, String> {
    let instrument = report
        .instrument
        .ok_or_else(|| "the probe's document names no instrument".to_string())?;
    let arm = |name: &str, description: String| -> Result<ArmFigures, String> {
        let rows: Vec<&RoundFigure> = report
            .rounds_figures
            .iter()
            .filter(|r| r.arm == name)
            .collect();
        let readings: Vec<f64> = rows
            .iter()
            .filter_map(|r| match instrument {
                Instrument::Schedstat => r.blocked,
                Instrument::Iterations => r.loss,
            })
            .filter(|v| v.is_finite())
            .collect();
        if rows.len() < plan.rounds as usize || readings.is_empty() {
            return Err(format!(
                "the probe returned {} rounds of arm {name} ({} with a reading), expected {} (a \
                 broken instrument, or a spinner that never ran)",
                rows.len(),
                readings.len(),
                plan.rounds
            ));
        }
        let finite = |f: fn(&RoundFigure) -> f64| -> Vec<f64> {
            rows.iter()
                .map(|r| f(r))
                .filter(|v| v.is_finite())
                .collect()
        };
        let call_us: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.call_us)
            .filter(|v| v.is_finite())
            .collect();
        let cpu_us: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.cpu_us)
            .filter(|v| v.is_finite())
            .collect();
        let runqueue: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.runqueue)
            .filter(|v| v.is_finite())
            .collect();
        Ok(ArmFigures {
            arm: name.to_string(),
            description,
            reading: MedianRange::of(&readings).expect("non-empty"),
            rounds: readings,
            busy: median(&finite(|r| r.busy)).unwrap_or(0.0),
            calls_per_s: median(&finite(|r| r.calls_per_s)).unwrap_or(0.0),
            call_us: median(&call_us),
            cpu_us: median(&cpu_us),
            runqueue: median(&runqueue),
        })
    };
    let control = |name: &str| {
        report
            .controls
            .as_ref()
            .and_then(|c| c.get(name))
            .cloned()
            .unwrap_or_else(|| name.to_string())
    };
    let target = format!(
        "{}{}",
        plan.target.describe(),
        if plan.args.is_empty() {
            String::new()
        } else {
            format!("({})", plan.args.join(", "))
        }
    );
    let call = arm(CALL, target.clone())?;
    let controls = ControlFigures {
        releases: arm(RELEASES, control(RELEASES))?,
        holds_half: arm(HOLDS_HALF, control(HOLDS_HALF))?,
        holds_all: arm(HOLDS_ALL, control(HOLDS_ALL))?,
    };
    let all_rq: Vec<f64> = report
        .rounds_figures
        .iter()
        .filter_map(|r| r.runqueue)
        .filter(|v| v.is_finite())
        .collect();
    Ok(GilFigures {
        answer: None,
        target,
        instrument,
        instrument_note: report.instrument_note.clone().unwrap_or_default(),
        rounds: plan.rounds,
        rounds_run: report.rounds_run.unwrap_or(plan.rounds).max(plan.rounds),
        round_ms: plan.round_ms,
        call,
        alone: report.alone.clone(),
        controls,
        runqueue: median(&all_rq),
        bounds: plan.bounds,
        python: report.python.clone(),
        result_sample: report.result_sample.clone(),
        elapsed_s: report.elapsed_s,
        scale: report.scale.as_ref().map(scale_figures),
        control_checks: Vec::new(),
    })
}

/// The scale table, as multiples of one thread's calls/s.
pub fn scale_figures(s: &ScaleReport) -> ScaleFigures {
    let spread = |v: &[Option<f64>]| {
        let vals: Vec<f64> = v
            .iter()
            .flatten()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        MedianRange::of(&vals)
    };
    // One thread's calls/s in each rep: the reference for that rep.
    let one: Vec<Option<f64>> = s
        .rows
        .iter()
        .find(|r| r.workers == 1)
        .map(|r| r.threads_calls_per_s.clone())
        .unwrap_or_default();
    let capacity_one: Vec<Option<f64>> = s
        .rows
        .iter()
        .find(|r| r.workers == 1)
        .map(|r| r.capacity_calls_per_s.clone())
        .unwrap_or_default();
    // The median over reps of each rep's rate over that rep's reference.
    let multiple = |rates: &[Option<f64>], one: &[Option<f64>]| {
        let ratios: Vec<f64> = rates
            .iter()
            .zip(one)
            .filter_map(|(r, o)| match (r, o) {
                (Some(r), Some(o)) if *o > 0.0 && r.is_finite() && o.is_finite() => Some(r / o),
                _ => None,
            })
            .collect();
        median(&ratios)
    };
    let lines = s
        .rows
        .iter()
        .map(|r| ScaleLine {
            workers: r.workers,
            threads_x: multiple(&r.threads_calls_per_s, &one),
            processes_x: multiple(&r.processes_calls_per_s, &one),
            capacity_x: multiple(&r.capacity_calls_per_s, &capacity_one),
            threads_pss_mib: r.threads_pss_kib.map(|k| k as f64 / 1024.0),
            processes_pss_mib: r.processes_pss_kib.map(|k| k as f64 / 1024.0),
            threads_calls_per_s: spread(&r.threads_calls_per_s),
            processes_calls_per_s: spread(&r.processes_calls_per_s),
        })
        .collect();
    ScaleFigures {
        calls_per_worker: s.calls_per_worker,
        single_call_us: s.single_call_us,
        reps: s.reps,
        lines,
    }
}
