//! The pair-ratio probe (E19, and E15's cross-process half): per mode, one
//! request alone, then two at once on two kept-alive connections, over
//! interleaved trials; the verdict rests on the gap between the modes.
//!
//! - `measure.rs`: the connections, the trials, the capacity control.
//! - `judge/`: what the figures mean (reduction, rules, words).
//! - `rulebook.rs`: "ran at once / took turns / cannot tell" from the
//!   scheduler witness, shared with advise.
//! - `render.rs`: the terminal table.

pub mod judge;
pub mod measure;
pub mod render;
pub mod rulebook;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Probe, ProbeCtx};
use crate::digest::WorkDigest;
use crate::kernel::control::CapacityControl;
use crate::kernel::portable;
use crate::spec::check::{int_in_range, key, ratio_in_range, ErrAt};
use crate::spec::mode::validate_modes;
use crate::spec::{Mode, ModeFile, ServerSettings, SpecError, Trials};
use crate::verdict::{Judged, Stop};

pub use judge::{ModeFigures, PairRatioFigures};
pub use measure::{ModeRun, PairRatioRun};

/// The `pair-ratio:` block.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairRatioFile {
    /// KiB of fixed work per request.
    pub work_kib: u32,
    /// Untimed pairs per mode before trial 1.
    pub warmup: u32,
    pub modes: BTreeMap<String, ModeFile>,
    /// The control's ratio minus the mode under test's must reach this.
    pub gap_at_least: f64,
    /// The no-server control must read at most this, or there is no free core.
    pub capacity_at_most: f64,
    /// A figure this close to its bound is ambiguous: take more trials.
    pub margin: f64,
    /// On a server with several workers: the most connections opened to
    /// find two that land on distinct workers (default 2: one per request
    /// of the pair).
    #[serde(default = "default_connections")]
    pub connections_at_most: u32,
    /// A fail must hold over this many times `trials.min` trials with a
    /// free core (capped at `trials.max`; default 2): noise only adds time,
    /// so it can fake a fail but not a pass.
    #[serde(default = "default_fail_confirm")]
    pub fail_confirm_factor: u32,
    /// The scheduler witness (Linux) fails the claim only when the mode
    /// under test's parallelism, with every blocked moment that noise could
    /// explain counted as runnable, reads at most this: the threads
    /// provably took turns. Unset: the witness never fails a row.
    pub serialised_at_most: Option<f64>,
    /// Trials whose capacity sample found a free core that the wall figures
    /// need before they decide (default 5; never more than `trials.max`).
    /// Apart from the trial budget, so that sign-off's longer budget asks
    /// for more evidence, not for a free core in every one of its trials.
    #[serde(default = "default_free_core_trials")]
    pub free_core_trials: u32,
    /// Optional: the fixture to serve, a folder of fixtures/ with bareapp's
    /// `/work` contract (`asgiapp`, its ASGI twin); fixtures/bareapp
    /// without it. Not inside a worker-census block (the census's `app`
    /// is served there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Extra Python packages the app needs, pinned `NAME==VERSION`
    /// (optionally ` --no-deps`); `runner prepare --rows all` installs them,
    /// and without them the row is not applicable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
}

fn default_free_core_trials() -> u32 {
    5
}

fn default_connections() -> u32 {
    2
}

fn default_fail_confirm() -> u32 {
    2
}

/// A validated pair-ratio measurement.
#[derive(Debug, Clone, Serialize)]
pub struct PairRatioPlan {
    pub work_kib: u32,
    pub warmup: u32,
    pub under_test: Mode,
    pub control: Mode,
    pub gap_at_least: f64,
    pub capacity_at_most: f64,
    pub margin: f64,
    pub connections_at_most: u32,
    pub fail_confirm_factor: u32,
    pub serialised_at_most: Option<f64>,
    pub free_core_trials: u32,
    /// When a reply does not say which thread served it (no `X-Thread-Id`:
    /// a user's own app), take the two tasks of the group that were
    /// runnable longest over the pair as the serving threads. Never for a
    /// gate: its fixture always says, and a server that strips the header
    /// should leave the witness silent rather than guessed.
    pub infer_serving_threads: bool,
    /// Size the holding control's `/work` to the view's own length, where
    /// the view is not a `/work` route (advise on a user's view): each
    /// mode's pair then carries the same wake-ups and GIL handoffs per unit
    /// of work, so the control's figures are read at the view's timescale.
    /// Never for a gate: its row fixes both modes' work.
    pub control_as_long_as_view: bool,
    /// The fixture served (None: fixtures/bareapp).
    pub app: Option<String>,
    pub requires: Vec<crate::probe::gil::Requirement>,
}

impl PairRatioPlan {
    /// Trials with a free core the wall figures need before they decide.
    pub fn free_core_trials_needed(&self, trials: Trials) -> u32 {
        self.free_core_trials.min(trials.max)
    }

    /// Trials with a free core a fail needs before it is final.
    pub fn fail_needs(&self, trials: Trials) -> u32 {
        (self.fail_confirm_factor * trials.min).min(trials.max)
    }
}

/// The pair-ratio kind.
pub struct PairRatio;

impl Probe for PairRatio {
    type Block = PairRatioFile;
    type Plan = PairRatioPlan;
    type Run = PairRatioRun;
    type Figures = PairRatioFigures;

    const LEGEND: &'static str =
        "pair-ratio cells: ratio of the mode under test / ratio of the control \
         (two requests at once against one alone; about 1.0x is parallel, 2.0x serial), then on Linux \
         the scheduler witness's P for each (the serving threads' runnable time over the pair; about 2 \
         parallel, 1 serial)";

    fn validate(
        block: &PairRatioFile,
        at: &[&str],
        row_server: &ServerSettings,
        err: &ErrAt<'_>,
    ) -> Result<PairRatioPlan, SpecError> {
        // 64 KiB is the releasing buffer (fixtures/bareapp/work.py); the
        // work must be whole buffers.
        if block.work_kib == 0 || block.work_kib % 64 != 0 || block.work_kib > 1 << 20 {
            return Err(err(
                &key(at, "work_kib"),
                format!(
                    "is {}; it must be a multiple of 64 between 64 and 1048576",
                    block.work_kib
                ),
            ));
        }
        if block.warmup > 100 {
            return Err(err(
                &key(at, "warmup"),
                format!("is {}; at most 100", block.warmup),
            ));
        }
        ratio_in_range(&key(at, "gap_at_least"), block.gap_at_least, err)?;
        ratio_in_range(&key(at, "capacity_at_most"), block.capacity_at_most, err)?;
        ratio_in_range(&key(at, "margin"), block.margin, err)?;
        int_in_range(
            &key(at, "connections_at_most"),
            block.connections_at_most,
            2..=256,
            err,
        )?;
        int_in_range(
            &key(at, "fail_confirm_factor"),
            block.fail_confirm_factor,
            1..=10,
            err,
        )?;
        int_in_range(
            &key(at, "free_core_trials"),
            block.free_core_trials,
            1..=1000,
            err,
        )?;
        if let Some(v) = block.serialised_at_most {
            ratio_in_range(&key(at, "serialised_at_most"), v, err)?;
        }
        let (under_test, control) =
            validate_modes("pair-ratio", at, &block.modes, row_server, true, true, err)?;
        let app = super::work_app(block.app.as_ref(), at, err)?;
        let mut requires = Vec::with_capacity(block.requires.len());
        for r in &block.requires {
            requires.push(
                crate::probe::gil::Requirement::parse(r)
                    .map_err(|m| err(&key(at, "requires"), m))?,
            );
        }
        Ok(PairRatioPlan {
            work_kib: block.work_kib,
            warmup: block.warmup,
            under_test,
            control,
            gap_at_least: block.gap_at_least,
            capacity_at_most: block.capacity_at_most,
            margin: block.margin,
            connections_at_most: block.connections_at_most,
            fail_confirm_factor: block.fail_confirm_factor,
            serialised_at_most: block.serialised_at_most,
            free_core_trials: block.free_core_trials,
            infer_serving_threads: false,
            control_as_long_as_view: false,
            app,
            requires,
        })
    }

    fn servers(plan: &PairRatioPlan, _: &ServerSettings) -> Vec<ServerSettings> {
        vec![plan.under_test.server.clone(), plan.control.server.clone()]
    }

    fn app(plan: &PairRatioPlan) -> Option<String> {
        plan.app.clone()
    }

    fn requires(plan: &PairRatioPlan) -> Vec<crate::probe::gil::Requirement> {
        plan.requires.clone()
    }

    async fn measure(plan: &PairRatioPlan, ctx: &mut ProbeCtx<'_>) -> Result<PairRatioRun, Stop> {
        super::require_installed(&ctx.python.python, &plan.requires)?;
        // Both waits overlap the servers' boot: the witness's self-check
        // (about 30 ms of spinning, once per process) and, where the kernel
        // keeps no per-thread accounting, the capacity control's start.
        // With the witness, its run-queue figures tell each trial whether a
        // core was free, and no control process runs.
        let checked = tokio::task::spawn_blocking(portable::reading);
        // The work's digest, hashed once (about 16 ms for 24 MiB), meanwhile.
        let kib = plan.work_kib;
        let hashed = tokio::task::spawn_blocking(move || WorkDigest::cached(kib));
        let early = (!portable::may_be_available())
            .then(|| CapacityControl::start(&ctx.python.python, &ctx.app_dir));
        let under_test = ctx.server(&plan.under_test.server).await?;
        let control_target = ctx.server(&plan.control.server).await?;
        let witnessed = matches!(checked.await, Ok(Ok(_)));
        let _ = hashed.await;
        let mut control = match (witnessed, early) {
            (true, _) => None,
            (false, Some(started)) => Some(started),
            (false, None) => Some(CapacityControl::start(&ctx.python.python, &ctx.app_dir)),
        }
        .transpose()
        .map_err(|e| Stop::cannot_judge(e.to_string()))?;
        let trials = ctx.trials;
        Ok(measure::run(
            [under_test, control_target],
            plan,
            trials,
            control.as_mut(),
            ctx.limits,
            &|run| judge::judge(plan, trials, run).settled(),
            &mut *ctx.emit,
        )
        .await)
    }

    fn judge(plan: &PairRatioPlan, trials: Trials, run: &PairRatioRun) -> Judged<PairRatioFigures> {
        judge::judge(plan, trials, run)
    }

    fn render(figures: &PairRatioFigures, out: &mut String) {
        render::table(figures, out)
    }

    fn numbers(f: &PairRatioFigures) -> Vec<(String, f64)> {
        let mut out = vec![
            ("gap".to_string(), f.gap),
            ("capacity".to_string(), f.capacity),
            ("trials".to_string(), f.trials.into()),
            ("valid_trials".to_string(), f.valid_trials.into()),
        ];
        for m in [&f.under_test, &f.control] {
            out.push((format!("{} ratio", m.name), m.ratio));
            if let Some(w) = &m.witness {
                out.push((format!("{} P", m.name), w.reading.parallelism.median));
            }
        }
        out
    }
}
