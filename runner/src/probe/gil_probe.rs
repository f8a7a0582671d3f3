//! The gil-probe kind: does a Python call release the GIL? No server: the
//! instrument (`fixtures/gilprobe/gilprobe.py`, run by `runner::probe::gil`) reads
//! a spinner thread's blocked share from the kernel's scheduler accounting
//! while a worker runs the call, beside three controls in the same process.
//! This module only wraps `runner::probe::gil` behind the [`Probe`] seam; the
//! ad-hoc `runner gil-probe` command uses the same plan, measure and judge.

use super::{Probe, ProbeCtx};
use crate::probe::gil::{self, GilBlock, GilFigures, GilLimits, GilPlan, GilRun};
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
        Ok(gil::measure(
            python,
            &gil::fixture_dir(&ctx.project.root),
            plan,
            GilLimits::for_plan(plan),
        )
        .await)
    }

    fn judge(plan: &GilPlan, _: Trials, run: &GilRun) -> Judged<GilFigures> {
        let (verdict, reason, confidence, figures, headline) = gil::judge(plan, run).into_parts();
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
        out.push_str(&gil::render(figures));
    }

    fn requires(plan: &GilPlan) -> Vec<gil::Requirement> {
        plan.requires.clone()
    }
}
