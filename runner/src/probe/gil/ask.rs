//! The GIL sequence, written once: take the machine's turn, run the
//! instrument on each plan in turn, judge each. `runner gil-probe` (one plan,
//! or one per stage of its stage table) and advise's `--call` use it; a
//! gil-probe row runs inside a gate, which holds the turn already.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::plan::{PlanError, PyLiteral};
use super::stages::{self, StageInput, StageTable};
use super::{fixture_dir, judge, measure, Expect, GilBlock, GilFigures, GilJudgement};
use super::{GilLimits, GilPlan, GilRun};
use crate::session::Session;
use crate::verdict::Verdict;

/// One plan's run and judgement.
pub struct Asked {
    pub run: GilRun,
    pub judgement: GilJudgement,
}

/// Runs and judges each of `plans` in `python`, holding the machine's turn
/// (waiting at most `wait` for it) until the last is done; `before` is told
/// each plan's index as it starts. Err: the turn was not had.
pub async fn ask(
    session: &Session,
    python: &Path,
    plans: &[GilPlan],
    wait: Duration,
    before: &mut dyn FnMut(usize),
) -> Result<Vec<Asked>, String> {
    let lock = session.lock(wait).await?;
    let fixtures = fixture_dir(&session.project().root);
    let mut out = Vec::new();
    for (i, plan) in plans.iter().enumerate() {
        before(i);
        let run = measure(python, &fixtures, plan, GilLimits::for_plan(plan)).await;
        let judgement = judge(plan, &run);
        out.push(Asked { run, judgement });
    }
    drop(lock);
    Ok(out)
}

/// The stage table of `asked` (one per stage, named by `names`), on this
/// machine's cores; Err names the stage that could not be judged, or says
/// no stage has a time per call.
pub fn stage_table(names: &[String], asked: &[Asked]) -> Result<StageTable, String> {
    let mut inputs = Vec::new();
    for (name, a) in names.iter().zip(asked) {
        match &a.judgement.figures {
            Some(f) => inputs.push(StageInput::from_figures(name, f)),
            None => return Err(format!("stage {name}: {}", a.judgement.reason)),
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    stages::table(&inputs, cores).ok_or_else(|| "no stage has a time per call".to_string())
}

/// The `--json` document of one probe.
#[derive(Serialize)]
pub struct Report<'a> {
    verdict: Verdict,
    answer: Option<Expect>,
    reason: &'a str,
    confidence: &'a str,
    headline: &'a str,
    figures: Option<&'a GilFigures>,
    run: &'a GilRun,
}

impl<'a> Report<'a> {
    pub fn of(j: &'a GilJudgement, run: &'a GilRun) -> Self {
        Self {
            verdict: j.verdict,
            answer: j.figures.as_ref().and_then(|f| f.answer),
            reason: &j.reason,
            confidence: &j.confidence,
            headline: &j.headline,
            figures: j.figures.as_ref(),
            run,
        }
    }
}

/// Why a stage table cannot be planned.
#[derive(Debug)]
pub enum StageError {
    /// A stage's name is not one (`"x y": a stage is a name ...`).
    Name(String),
    /// The block, with the stage's name as its first argument, is not valid.
    Plan(PlanError),
}

/// One plan per stage: `block`'s setup called with the stage's name first.
pub fn stage_plans(block: &GilBlock, names: &[String]) -> Result<Vec<GilPlan>, StageError> {
    let mut plans = Vec::new();
    for name in names {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(StageError::Name(format!(
                "{name:?}: a stage is a name (letters, digits, _)"
            )));
        }
        let mut one = block.clone();
        one.args.insert(0, PyLiteral::Source(format!("'{name}'")));
        plans.push(one.validate().map_err(StageError::Plan)?);
    }
    Ok(plans)
}
