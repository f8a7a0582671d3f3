//! A pair run read: the figures (`reduce.rs`), the answer the ruling gives,
//! and its words (`words.rs`).

use super::reduce::{figures, PairFigures};
use super::{words, work, Work};
use crate::kernel::pairs::{self, Counted};
use crate::probe::pair_ratio::measure::PairRatioRun;
use crate::probe::pair_ratio::rulebook::Medians;

/// The answer a run gives.
pub struct Read {
    pub work: Option<Work>,
    pub headline: String,
    pub reason: String,
    pub figures: Option<PairFigures>,
}

fn no_answer(reason: String) -> Read {
    Read {
        work: None,
        headline: String::new(),
        reason,
        figures: None,
    }
}

/// The answer from a run. `inferred`: the app does not name the thread
/// that served a reply, so the engine took the two busiest tasks of the
/// group as the serving ones.
pub fn read(path: &str, inferred: bool, run: &PairRatioRun) -> Read {
    if let Some(broken) = &run.broken {
        return no_answer(format!("the pair broke: {broken}"));
    }
    if let Some(why) = &run.witness_unavailable {
        return no_answer(format!(
            "no scheduler witness, and the clock alone cannot tell the four cases apart: {why}"
        ));
    }
    let (Some(view), Some(control)) = (
        pairs::reduce(&run.under_test.witness, Counted::TwoThreads),
        pairs::reduce(&run.control.witness, Counted::TwoThreads),
    ) else {
        return no_answer(format!(
            "too few pairs served by two threads and read by the witness (view {} of {}, control {} of {}); the server did not run the two requests on two threads",
            pairs::counted(&run.under_test.witness, Counted::TwoThreads).len(),
            run.under_test.witness.len(),
            pairs::counted(&run.control.witness, Counted::TwoThreads).len(),
            run.control.witness.len()
        ));
    };
    let Some(figures) = figures(path, inferred, run, &view, &control) else {
        return no_answer("the witness read no group or on-CPU figures".into());
    };
    let ruling = figures.ruling;
    Read {
        work: work(ruling),
        headline: words::headline(&figures),
        reason: words::reason(
            ruling,
            &Medians::of(&view),
            &Medians::of(&control),
            view.on_cpu.median,
        ),
        figures: Some(figures),
    }
}
