//! The words of question 1's pair answer: the headline of its figures and
//! the reason for the rulebook's ruling. Text only; the rules are in
//! `probe/pair_ratio/rulebook.rs`.

use super::reduce::{FreeCore, LessLoaded, PairFigures, TurnedWithFreeCore};
use super::{FREE_CORE_TURNS_AT_MOST, GAP_AT_LEAST, HOLDS_WITHIN, RELEASES_AT_LEAST, WAITS_BELOW};
use crate::probe::pair_ratio::rulebook::{
    Medians, Ruling, LIBRARY_ON_CPU_AT_LEAST, NEVER_TURNS_AT, ON_CPU_PROVES,
    TOGETHER_AT_ONCE_AT_LEAST, TOGETHER_GAP_AT_LEAST, TOGETHER_P_GAP_AT_LEAST,
};

/// One line: the figures the answer stands on.
pub fn headline(f: &PairFigures) -> String {
    let (p, c) = (f.parallelism, f.control_parallelism);
    format!(
        "P {:.2} [{:.2}-{:.2}] (group {:.2}) over {} pairs against the holding control's {:.2} (group {:.2}); serving threads on a CPU {:.0}% of the pair, blocked {:.0}%; wall ratio {}",
        p.median,
        p.min,
        p.max,
        f.group_parallelism.median,
        f.pairs,
        c.median,
        f.control_group_parallelism.median,
        f.serving_on_cpu.median * 100.0,
        f.serving_blocked.median * 100.0,
        f.wall_ratio
            .map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
    )
}

fn num(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// Why `ruling` answers as it does, with the figures it read (`on_cpu`:
/// the serving threads' on-CPU share of the pair).
pub fn reason(ruling: Ruling, view: &Medians, control: &Medians, on_cpu: f64) -> String {
    let (p, c) = (view.serving, control.serving);
    let (vg, cg) = (num(view.group), num(control.group));
    match ruling {
        Ruling::Asleep => format!(
            "the threads were asleep, not on a CPU: P {vg:.2} (group) < {WAITS_BELOW:.2} (on-CPU {:.0}% of the pair)",
            on_cpu * 100.0
        ),
        Ruling::OnTwoCpus => format!(
            "the two requests were on two CPUs at once: the serving threads' on-CPU time was {:.2}x the pair's wall (>= {ON_CPU_PROVES:.2}), which work holding the GIL cannot exceed 1 (the holding control read {:.2}); noise only takes CPU away",
            num(view.on_cpu),
            num(control.on_cpu)
        ),
        Ruling::OnTwoCpusLibrary => format!(
            "the two requests were on two CPUs at once on threads of the library's own: the group's on-CPU time was {:.2}x the pair's wall (>= {ON_CPU_PROVES:.2}; the holding control read {:.2}); noise only takes CPU away",
            num(view.group_on_cpu),
            num(control.group_on_cpu)
        ),
        Ruling::ControlTooParallel => format!(
            "the holding control read P {c:.2} (> {:.2}): on this machine now the witness cannot tell taking turns from running at once; run it again on a quieter machine",
            super::rules().control_at_most
        ),
        Ruling::AtOnce => format!(
            "the two requests computed at once: P {p:.2} >= {RELEASES_AT_LEAST:.2}, {:.2} over the holding control (needs >= {GAP_AT_LEAST:.2})",
            p - c
        ),
        Ruling::AtOnceTogether => format!(
            "the two requests computed at once: the serving threads were runnable together in {:.0}% of the samples against the holding control's {:.0}% (needs >= {:.0}% and {:.0} points over), with P {p:.2}, {:.2} over the control's (>= {NEVER_TURNS_AT:.2} and {TOGETHER_P_GAP_AT_LEAST:.2} over)",
            view.together.unwrap_or(0.0) * 100.0,
            control.together.unwrap_or(0.0) * 100.0,
            TOGETHER_AT_ONCE_AT_LEAST * 100.0,
            TOGETHER_GAP_AT_LEAST * 100.0,
            p - c
        ),
        Ruling::AtOnceLibrary => format!(
            "the two requests computed at once on threads of the library's own: group P {vg:.2} >= {RELEASES_AT_LEAST:.2}, {:.2} over the holding control's (needs >= {GAP_AT_LEAST:.2}), the library's threads on a CPU {:.2}x the pair's wall (>= {LIBRARY_ON_CPU_AT_LEAST:.2}); the serving threads waited for them (P {p:.2})",
            vg - cg,
            num(view.group_on_cpu) - num(view.on_cpu)
        ),
        Ruling::TookTurns | Ruling::TookTurnsLikeControl => format!(
            "the two requests took turns: P {p:.2} (unconvoyed {:.2}), within {HOLDS_WITHIN:.2} of the holding control's {c:.2} (unconvoyed {:.2}; group {vg:.2} against {cg:.2})",
            view.unconvoyed, control.unconvoyed
        ),
        Ruling::TookTurnsOnFreeCore => format!(
            "the two requests took turns: P {p:.2} <= {FREE_CORE_TURNS_AT_MOST:.2} (group {vg:.2}) with a free core, where two requests computing at once keep both threads runnable and read about 2; the holding control's {c:.2} is past its bound, which matters only where the threads waited for a core",
        ),
        Ruling::Between => format!(
            "P {p:.2} (unconvoyed {:.2}, group {vg:.2}) stands between the holding control's {c:.2} (unconvoyed {:.2}, group {cg:.2}) and running at once (>= {RELEASES_AT_LEAST:.2} and {GAP_AT_LEAST:.2} over the control); run it again on a quieter machine, or probe the call with --call",
            view.unconvoyed, control.unconvoyed
        ),
    }
}

/// The bound a pair's core wait was held to, in words.
fn bound(free: &FreeCore) -> String {
    match free.control_core_wait {
        // The control read too parallel to widen the bound.
        Some(c) if c > free.core_wait_at_most => format!(
            "core-wait ratio <= {:.2}, a free core: the holding control's median pair waited {c:.2}, but it read too parallel to stand as the bound",
            free.core_wait_at_most
        ),
        Some(c) => format!(
            "core-wait ratio <= {:.2}, a free core or the holding control's median pair ({c:.2})",
            free.core_wait_at_most
        ),
        None => format!("core-wait ratio <= {:.2}", free.core_wait_at_most),
    }
}

/// A ruling read on the `free.pairs` of `pairs` that waited for a core no
/// longer than `free` allows.
pub fn on_free_core(free: &FreeCore, pairs: usize, reason: &str) -> String {
    format!(
        "on the {} of {pairs} pairs whose serving threads waited for a core no longer than a free core or the control allows ({}): {reason}",
        free.pairs,
        bound(free)
    )
}

/// Every pair read turns, but too few waited for a core briefly enough to
/// tell a held GIL from a busy core.
pub fn no_free_core(free: &FreeCore, pairs: usize, turns: &str) -> String {
    format!(
        "no free core: {turns}, but only {} of {pairs} pairs waited for a core no longer than a free core or the control allows ({}; needs {}), and turns read while the threads waited for a core cannot tell a held GIL from a busy one (a GIL holder kept off a core leaves its peer asleep); run it again on a quieter machine",
        free.pairs,
        bound(free),
        free.needed
    )
}

/// At once over every pair, but the pairs with a free core took turns.
pub fn turned_with_free_core(free: &TurnedWithFreeCore, at_once: &str) -> String {
    format!(
        "no free core: {at_once}, but {} of the {} pairs that had a free core (core-wait ratio <= {:.2}) read P <= {FREE_CORE_TURNS_AT_MOST:.2}, taking turns, where two requests computing at once read about 2: the at-once reading came from threads queued for a core; run it again on a quieter machine",
        free.turns,
        free.pairs,
        super::free_core_at_most()
    )
}

/// At once over every pair, but not on the less-loaded half.
pub fn not_on_less_loaded(half: &LessLoaded, at_once: &str) -> String {
    format!(
        "no free core: {at_once}, but the less-loaded half of the pairs ({}, core-wait ratio <= {:.2}) read P {:.2}, not at once: two threads queued on one core both read runnable before the one that would wait for the GIL finds it held; run it again on a quieter machine",
        half.pairs,
        num(half.core_wait_at_most),
        num(half.parallelism)
    )
}

#[cfg(test)]
mod tests {
    use super::super::{rules, work, Work};
    use super::*;
    use crate::probe::pair_ratio::rulebook::rule;

    /// The answer and its words, as `read` gives them.
    fn classify(view: Medians, control: Medians, on_cpu: f64) -> (Option<Work>, String) {
        let ruling = rule(&view, &control, &rules());
        (work(ruling), reason(ruling, &view, &control, on_cpu))
    }

    fn m(serving: f64, group: f64, unconvoyed: f64, on_cpu: f64, group_on_cpu: f64) -> Medians {
        Medians::every(serving, unconvoyed, group, on_cpu, group_on_cpu)
    }

    #[test]
    fn the_bands_against_the_control() {
        let r = |serving, group| m(serving, group, serving, 0.9, 0.9);
        let hold = r(1.0, 1.05);
        assert_eq!(classify(r(2.0, 2.05), hold, 0.9).0, Some(Work::Releases));
        // Convoys at the view's GIL acquires: still clear of the control.
        assert_eq!(classify(r(1.6, 1.7), hold, 0.8).0, Some(Work::Releases));
        // A library's own threads: the serving threads wait on a join
        // while the library's compute (on a CPU 1.2 of the pair's wall).
        let (w, why) = classify(m(0.05, 3.3, 0.05, 0.02, 1.22), hold, 0.02);
        assert_eq!(w, Some(Work::Releases), "{why}");
        assert!(why.contains("library"), "{why}");
        // Twin: a group lifted by threads that only queued for a core (a
        // server's I/O threads beside two burst loads; serving P 1.62
        // against 1.31): no library computed, so no answer from the group.
        let served = m(1.62, 2.02, 2.0, 1.25, 1.26);
        let (w, why) = classify(served, m(1.31, 1.43, 1.88, 0.97, 0.97), 0.6);
        assert!(w.is_none() && why.contains("between"), "{why}");
        // ... and the same with the library on a CPU is the library's.
        let computed = Medians {
            group_on_cpu: Some(1.45),
            ..served
        };
        let (w, why) = classify(computed, m(1.31, 1.43, 1.88, 0.97, 0.97), 0.6);
        assert_eq!(w, Some(Work::Releases), "{why}");
        assert!(why.contains("library"), "{why}");
        assert_eq!(classify(r(1.02, 1.1), hold, 0.5).0, Some(Work::Holds));
        assert_eq!(classify(r(0.03, 0.05), hold, 0.01).0, Some(Work::Waits));
        let (w, why) = classify(r(1.4, 1.4), hold, 0.5);
        assert!(w.is_none() && why.contains("between"), "{why}");
        // Releasing, but less than the gap over a control that crept up.
        assert_eq!(classify(r(1.9, 1.9), r(1.5, 1.5), 0.5).0, None);
        // Reads serialised, but noise could explain it (a convoy): no answer.
        let convoyed = m(1.05, 1.1, 1.8, 0.95, 1.0);
        let (w, why) = classify(convoyed, hold, 0.5);
        assert!(w.is_none() && why.contains("between"), "{why}");
        // The same view against a control that the same convoys lift as
        // much (the server's I/O threads queue while a thread waits for
        // the GIL): the gap is what counts, so it holds.
        let lifted = m(1.0, 1.05, 1.7, 0.95, 1.0);
        let (w, why) = classify(convoyed, lifted, 0.5);
        assert_eq!(w, Some(Work::Holds), "{why}");
        // Within the gap of a crept control, yet reading at once by E19's
        // bound: never "holds" (the rulebook's floor), so advise cannot say
        // turns where the gate says parallel.
        let (w, why) = classify(r(1.75, 1.8), r(1.55, 1.6), 0.9);
        assert!(w.is_none() && why.contains("between"), "{why}");
        // A busy machine: the control's runnable P lifted past its bound,
        // yet the view was on two CPUs at once, which the GIL forbids.
        let on_two = m(1.97, 2.0, 2.0, 1.42, 1.45);
        let busy_control = m(1.62, 1.7, 2.0, 0.97, 1.05);
        let (w, why) = classify(on_two, busy_control, 0.7);
        assert_eq!(w, Some(Work::Releases), "{why}");
        assert!(why.contains("two CPUs at once"), "{why}");
        // Its twins: a control whose on-CPU time also passed 1 (the GIL
        // bound does not hold here, so the figure cannot fail) gives no
        // answer; so does a view whose on-CPU time stayed near 1.
        let (w, why) = classify(
            on_two,
            Medians {
                on_cpu: Some(1.2),
                group_on_cpu: Some(1.2),
                ..busy_control
            },
            0.7,
        );
        assert!(w.is_none() && why.contains("holding control"), "{why}");
        let (w, why) = classify(
            Medians {
                on_cpu: Some(1.1),
                group_on_cpu: Some(1.15),
                ..on_two
            },
            busy_control,
            0.55,
        );
        assert!(w.is_none(), "{why}");
        // A control that reads parallel: no answer, whatever the view read.
        let (w, why) = classify(r(1.92, 1.95), r(1.7, 1.7), 0.5);
        assert!(w.is_none() && why.contains("holding control"), "{why}");
    }
}
