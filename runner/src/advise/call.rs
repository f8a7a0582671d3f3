//! Question 1 with `--call`: the GIL probe's reading of the call
//! (`runner::probe::gil`: a spinner thread beside the call, three controls, read
//! from the kernel's accounting), in the interpreter the server runs, from
//! the current folder as `runner gil-probe` runs it.

use std::path::Path;
use std::time::Duration;

use super::{GilAnswer, Work};
use crate::probe::gil::ask::ask;
use crate::probe::gil::{Expect, GilPlan};
use crate::session::Session;

/// Runs the probe on `plan` and reads its answer.
pub async fn measure(
    session: &Session,
    python: &Path,
    plan: &GilPlan,
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
    let judged = match ask(
        session,
        python,
        std::slice::from_ref(plan),
        machine_wait,
        &mut |_| {},
    )
    .await
    {
        Ok(mut asked) => match asked.pop() {
            Some(a) => a.judgement,
            None => return answer,
        },
        Err(e) => {
            answer.reason = e;
            return answer;
        }
    };
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
