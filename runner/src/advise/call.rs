//! Question 1 with `--call`: the GIL probe's reading of the call
//! (`runner::probe::gil`: a spinner thread beside the call, three controls, read
//! from the kernel's accounting), in the interpreter the server runs, from
//! the current folder as `runner gil-probe` runs it.

use std::path::Path;
use std::time::Duration;

use super::{GilAnswer, Work};
use crate::host::machine_lock::MachineLock;
use crate::probe::gil::{self, Expect, GilPlan};

/// Runs the probe on `plan` and reads its answer.
pub async fn measure(
    python: &Path,
    project_root: &Path,
    plan: &GilPlan,
    lock_path: &Path,
    machine_wait: Duration,
) -> GilAnswer {
    let mut answer = GilAnswer {
        work: None,
        source: format!("gil-probe {}", plan.target.describe()),
        headline: String::new(),
        reason: String::new(),
        pair: None,
        call: None,
    };
    let lock = match MachineLock::take(lock_path, machine_wait).await {
        Ok(lock) => lock,
        Err(e) => {
            answer.reason = e;
            return answer;
        }
    };
    let limits = gil::GilLimits::for_plan(plan);
    let run = gil::measure(python, &gil::fixture_dir(project_root), plan, limits).await;
    drop(lock);
    let judged = gil::judge(plan, &run);
    answer.work = judged
        .figures
        .as_ref()
        .and_then(|f| f.answer)
        .map(|a| match a {
            Expect::Releases => Work::Releases,
            Expect::Holds => Work::Holds,
        });
    answer.headline = judged.headline;
    answer.reason = judged.reason;
    answer.call = judged.figures;
    answer
}
