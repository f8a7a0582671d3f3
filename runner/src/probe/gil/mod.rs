//! The GIL probe: does one Python call release the GIL? No server; a
//! spinner thread, a worker thread running the call, and three controls in
//! the same process, read from the kernel's scheduler accounting.
//!
//! The instrument is `fixtures/gilprobe/gilprobe.py` (pure standard
//! library), run in the interpreter the user names, because the question is
//! about their build of their library. This module owns the Rust side:
//!
//! - [`plan`]: the `gil:` block ([`GilBlock`]) validated into a [`GilPlan`];
//! - [`instrument`]: [`measure`] runs the instrument in its own process
//!   group with a bounded wait and returns a [`GilRun`] (its document, or why
//!   there is none);
//! - [`judge()`]: releases / holds / cannot judge, a pure function of the plan
//!   and the run: `judge/figures.rs` reduces the instrument's report,
//!   `judge/rules.rs` decides, `judge/words.rs` says why;
//! - [`sampled`]: the portable reading (the spinner's run state sampled
//!   from outside: `--witness portable`, and macOS) reduced to round figures;
//! - [`render()`]: the terminal table;
//! - [`stages`]: the stage table (`runner gil-probe --stage`);
//! - [`ask`]: the sequence `runner gil-probe` and advise's `--call` run
//!   (the machine's turn, measure, judge).
//!
//! [`GilProbe`] puts it behind the [`Probe`] seam for rows (`probe:
//! gil-probe`); the ad-hoc `runner gil-probe` command uses the same plan,
//! measure and judge.

pub mod ask;
pub mod command;
pub mod instrument;
pub mod judge;
pub mod plan;
pub mod render;
pub mod sampled;
pub mod stages;

pub use crate::host::requires::Requirement;
pub use instrument::{fixture_dir, GilLimits, GilRun, Instrument, InstrumentReport, RunOutcome};

/// Runs the instrument for `plan` (`instrument::measure`) and, where it
/// read the spinner by samples (the portable witness), reduces them to each
/// round's figures (`sampled`).
pub async fn measure(
    python: &std::path::Path,
    fixture_dir: &std::path::Path,
    plan: &GilPlan,
    limits: GilLimits,
) -> GilRun {
    let mut run = instrument::measure(python, fixture_dir, plan, limits).await;
    if let RunOutcome::Report { report } = &mut run.outcome {
        if let Some(samples) = report.spinner_samples.take() {
            sampled::fill(report, &samples, plan.bounds.runqueue_at_most);
        }
    }
    run
}
pub use judge::{judge, ArmFigures, GilFigures, GilJudgement, ScaleFigures};
pub use plan::{Expect, GilBlock, GilBounds, GilPlan, InstrumentChoice, PlanError, Target};
pub use render::{render, render_scale};

use super::{Probe, ProbeCtx};
use crate::spec::check::{key, ErrAt};
use crate::spec::{ServerSettings, SpecError, Trials};
use crate::verdict::{Judged, Stop};

/// The gil-probe kind.
pub struct GilProbe;

impl Probe for GilProbe {
    type Block = GilBlock;
    type Plan = GilPlan;
    type Run = GilRun;
    type Figures = GilFigures;

    const LEGEND: &'static str =
        "gil-probe cells: the answer, then the spinner's blocked share while the call \
         runs against the three controls (releasing, bytecode about half, PyDLL about all)";

    fn validate(
        block: &GilBlock,
        at: &[&str],
        _: &ServerSettings,
        err: &ErrAt<'_>,
    ) -> Result<GilPlan, SpecError> {
        if block.expect.is_none() {
            return Err(err(
                &key(at, "expect"),
                "a gil-probe row states its claim: `expect: releases` or `expect: holds` \
                 (`runner gil-probe` asks without one)"
                    .into(),
            ));
        }
        block
            .validate()
            .map_err(|e| err(&key(at, e.key), e.message))
    }

    fn servers(_: &GilPlan, _: &ServerSettings) -> Vec<ServerSettings> {
        Vec::new()
    }

    async fn measure(plan: &GilPlan, ctx: &mut ProbeCtx<'_>) -> Result<GilRun, Stop> {
        let python = &ctx.python.python;
        super::require_installed(python, &plan.requires)?;
        Ok(measure(
            python,
            &fixture_dir(&ctx.project.root),
            plan,
            GilLimits::for_plan(plan),
        )
        .await)
    }

    fn judge(plan: &GilPlan, _: Trials, run: &GilRun) -> Judged<GilFigures> {
        let (verdict, reason, confidence, figures, headline) = judge(plan, run).into_parts();
        Judged {
            verdict,
            reason,
            confidence,
            figures,
            warnings: Vec::new(),
            headline,
            // The instrument runs its own rounds (more while an arm lacks
            // readings); one run is the whole measurement.
            unsettled: None,
        }
    }

    fn render(figures: &GilFigures, out: &mut String) {
        out.push_str(&render(figures));
    }

    fn numbers(f: &GilFigures) -> Vec<(String, f64)> {
        let mut out = vec![
            ("rounds".to_string(), f.rounds.into()),
            ("rounds_run".to_string(), f.rounds_run.into()),
            ("round_ms".to_string(), f.round_ms.into()),
        ];
        out.extend(f.runqueue.map(|x| ("runqueue".to_string(), x)));
        out.extend(f.elapsed_s.map(|x| ("elapsed_s".to_string(), x)));
        out
    }

    fn requires(plan: &GilPlan) -> Vec<Requirement> {
        plan.requires.clone()
    }
}
