//! A pair run read: the figures (`reduce.rs`), the answer the ruling gives,
//! and its words (`words.rs`). Where every pair reads turns, the answer is
//! the ruling on the view's pairs that waited for a core no longer than a
//! free core or the control allows (`FreeCore` in `reduce.rs`), or none
//! with too few of them; "at once" read off run-queue time answers only
//! where the less-loaded half of the pairs reads at once too
//! (`LessLoaded`) and the pairs with a free core do not read turns
//! (`TurnedWithFreeCore`). Where the holding control reads too parallel
//! to compare with, the pairs with a free core answer "holds" on their own
//! figures (`rulebook::rule_on_free_core`), or nothing.

use super::reduce::{core_wait_at_most, figures, PairFigures};
use super::{words, work, Work};
use crate::kernel::pairs::{self, Counted};
use crate::kernel::witness::Witness;
use crate::probe::pair_ratio::measure::PairRatioRun;
use crate::probe::pair_ratio::rulebook::{Medians, Ruling};

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
        return no_answer(too_few(&run.under_test.witness, &run.control.witness));
    };
    let free = pairs::reduce(
        &pairs::with_free_core(&run.under_test.witness, core_wait_at_most(&control).0),
        Counted::TwoThreads,
    );
    let half = pairs::reduce(
        &pairs::less_loaded_half(&run.under_test.witness, Counted::TwoThreads),
        Counted::TwoThreads,
    );
    let Some(figures) = figures(
        path,
        inferred,
        run,
        &view,
        &control,
        free.as_ref(),
        half.as_ref(),
    ) else {
        return no_answer("the witness read no group or on-CPU figures".into());
    };
    let control_m = Medians::of(&control);
    let every = |ruling| words::reason(ruling, &Medians::of(&view), &control_m, view.on_cpu.median);
    let (work, reason) = match (work(figures.ruling), figures.free_core.ruling, &free) {
        // Turns stand only on the pairs with a free core.
        (Some(Work::Holds), Some(ruling), Some(free)) => (
            work(ruling),
            words::on_free_core(
                &figures.free_core,
                view.pairs,
                &words::reason(ruling, &Medians::of(free), &control_m, free.on_cpu.median),
            ),
        ),
        // A control too parallel to compare with: pairs with a free core
        // that took turns by their own figures answer.
        (None, Some(ruling @ Ruling::TookTurnsOnFreeCore), Some(free))
            if figures.ruling == Ruling::ControlTooParallel =>
        {
            (
                work(ruling),
                words::on_free_core(
                    &figures.free_core,
                    view.pairs,
                    &words::reason(ruling, &Medians::of(free), &control_m, free.on_cpu.median),
                ),
            )
        }
        (Some(Work::Holds), _, _) => (
            None,
            words::no_free_core(&figures.free_core, view.pairs, &every(figures.ruling)),
        ),
        // At once off run-queue time must not be contradicted by pairs
        // that took turns with a free core ...
        (Some(Work::Releases), _, _)
            if matches!(figures.ruling, Ruling::AtOnce | Ruling::AtOnceTogether)
                && figures.turned_with_free_core.contradicts_at_once() =>
        {
            (
                None,
                words::turned_with_free_core(
                    &figures.turned_with_free_core,
                    &every(figures.ruling),
                ),
            )
        }
        // ... and stands on the less-loaded half too.
        (Some(Work::Releases), _, _)
            if matches!(figures.ruling, Ruling::AtOnce | Ruling::AtOnceTogether)
                && !figures.less_loaded.stands_at_once() =>
        {
            (
                None,
                words::not_on_less_loaded(&figures.less_loaded, &every(figures.ruling)),
            )
        }
        (w, _, _) => (w, every(figures.ruling)),
    };
    Read {
        work,
        headline: words::headline(&figures),
        reason,
        figures: Some(figures),
    }
}

/// Why a mode's pairs did not count: (counted, of, served by one thread, a
/// serving thread unread).
fn tally(witnesses: &[Option<Witness>]) -> [usize; 4] {
    let counted = pairs::counted(witnesses, Counted::TwoThreads).len();
    let read = witnesses.iter().flatten();
    let unread = read.clone().filter(|w| !w.unseen.is_empty()).count();
    let one = read
        .filter(|w| w.unseen.is_empty() && w.threads.len() < 2)
        .count();
    [counted, witnesses.len(), one, unread]
}

/// The reason when too few pairs count, naming what kept them out.
fn too_few(view: &[Option<Witness>], control: &[Option<Witness>]) -> String {
    let mode = |name: &str, [counted, of, one, unread]: [usize; 4]| {
        let mut s = format!("{name} {counted} of {of}");
        if one > 0 {
            s += &format!(", {one} served by one thread");
        }
        if unread > 0 {
            s += &format!(", {unread} with a serving thread that ended before it was read");
        }
        s
    };
    let (v, c) = (tally(view), tally(control));
    let why = if v[3] + c[3] > v[2] + c[2] {
        "the threads that served them were made for the request and gone when the pair ended, so the witness could not read their time"
    } else {
        "the server did not run the two requests on two threads"
    };
    format!(
        "too few pairs served by two threads and read by the witness ({}; {}); {why}",
        mode("view", v),
        mode("control", c)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::witness::ThreadFigures;

    fn pair(tids: &[i32], unseen: &[i32]) -> Option<Witness> {
        Some(Witness {
            wall_ns: 40_000_000,
            parallelism: Some(1.0),
            on_cpu_ns: 0,
            run_queue_ns: 0,
            threads: tids
                .iter()
                .map(|&tid| ThreadFigures {
                    tid,
                    on_cpu_ns: 20_000_000,
                    run_queue_ns: 0,
                    blocked_ns: 20_000_000,
                    others_run_queue_ns: 0,
                })
                .collect(),
            unseen: unseen.to_vec(),
            appeared: 0,
            vanished: 0,
            sampled: None,
        })
    }

    #[test]
    fn too_few_pairs_names_threads_that_ended_apart_from_one_thread() {
        let view = vec![pair(&[1, 2], &[]); 3];
        // Threads made for each request, gone before the reading.
        let ended = vec![pair(&[3], &[4]), pair(&[], &[5, 6]), pair(&[7, 8], &[])];
        let words = too_few(&view, &ended);
        assert!(
            words.contains("view 3 of 3; control 1 of 3, 2 with a serving thread that ended"),
            "{words}"
        );
        assert!(words.contains("made for the request"), "{words}");
        // Twin: one thread served both requests.
        let one = vec![pair(&[3], &[]), pair(&[3], &[]), None];
        let words = too_few(&view, &one);
        assert!(
            words.contains("control 0 of 3, 2 served by one thread"),
            "{words}"
        );
        assert!(
            words.contains("did not run the two requests on two threads"),
            "{words}"
        );
    }
}
