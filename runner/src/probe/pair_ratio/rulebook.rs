//! The one rulebook for "the pair ran at once / took turns / cannot tell",
//! read from the scheduler witness (`kernel/pairs.rs` reduces it). E19's
//! judge and advise both ask it; each brings its own [`Rules`] (E19's from
//! its row, advise's from its named constants), and every rule set obeys
//! [`Rules::check`], which is what keeps them from disagreeing: no reading
//! can say the serving threads ran at once under one set and took turns
//! under another (the test at the foot of this file feeds the same figures
//! to both). A ruling on a library's own threads (advise's, where the group
//! counts) is about other threads and claims nothing of the serving ones.
//!
//! In the order they are read:
//!
//! 1. **Asleep** (rule sets that ask): the group's P under `asleep_below`.
//! 2. **On two CPUs at once**, for every rule set: Σ on-CPU of the serving
//!    threads (or, with `library_threads`, the group, where the library's
//!    threads were on a CPU [`LIBRARY_ON_CPU_AT_LEAST`]) at least
//!    [`ON_CPU_PROVES`] while the holding control's stays at most
//!    [`GIL_ON_CPU_AT_MOST`]. Noise only takes CPU away, so it cannot fake
//!    this; the control shows the GIL bound holds here (the figure can fail).
//! 3. **The control must separate**: its P at most `control_at_most`, or the
//!    witness cannot tell turns from parallel on this machine now.
//! 4. **At once**, by P: P at least `at_once_at_least` and `gap_at_least`
//!    over the control's; or by the samples' order: the serving threads
//!    runnable together in at least [`TOGETHER_AT_ONCE_AT_LEAST`] of the
//!    samples and [`TOGETHER_GAP_AT_LEAST`] over the control, with P at
//!    least [`NEVER_TURNS_AT`] and [`TOGETHER_P_GAP_AT_LEAST`] over the
//!    control's; or, with `library_threads`, the group's P by the first
//!    rule, where the library's threads were on a CPU as in 2.
//! 5. **Took turns**: no sign of running at once (P, and where the group
//!    counts the group's P, under [`NEVER_TURNS_AT`], no on-CPU proof, the
//!    serving threads on a CPU within one GIL's [`GIL_ON_CPU_AT_MOST`]) and
//!    either the unconvoyed P at most `turns_at_most`, or the serving
//!    threads together in at most [`TOGETHER_TURNS_AT_MOST`] of the samples
//!    with P unconvoyed of third tasks at most `turns_at_most`, or every
//!    figure within `turns_within_control` of the control's.
//! 6. Otherwise between: cannot tell.
//!
//! [`rule_on_free_core`] reads pairs that each had a free core (a caller
//! picks them by their core wait): there, with `free_core_turns_at_most`,
//! a control that does not separate (3) no longer silences "took turns" at
//! a P at most that bound, since with a free core noise cannot lift a
//! pair that ran at once down to it.

use schemars::JsonSchema;
use serde::Serialize;

use super::PairRatioPlan;
use crate::kernel::pairs::PairsReading;
use crate::spec::RatioBound;

/// Σ on-CPU over the pair's wall at least this: the two requests were on
/// two CPUs at once. Quiet here: releasing 1.40, the holding control 0.98.
/// It falls silent rather than wrong under load: with one spinning process
/// in another session, the server's autogroup got one core's share and
/// both read 0.97, and the runnable P's rules decide.
pub const ON_CPU_PROVES: f64 = 1.3;
/// ... provided the holding control's Σ on-CPU stays at most this: the GIL
/// bound (one thread on a CPU at a time) holds on this machine.
pub const GIL_ON_CPU_AT_MOST: f64 = 1.1;
/// A serving or group P at or above this is never read as taking turns, by
/// any rule set: it is the lowest at-once bound any of them may use
/// ([`Rules::check`]), so "took turns" under one set can never be "at once"
/// under another.
pub const NEVER_TURNS_AT: f64 = 1.5;

/// The serving threads runnable at once in at most this share of the
/// run-state samples (taken beside either reading): they took turns (a lock's waiter sleeps
/// while its holder runs or waits for a core). Two threads computing at
/// once read 0.8-1.0 with or without a free core; the holding control,
/// whose waiter wakes every 5 ms to ask for the GIL, about 0.1-0.3.
pub const TOGETHER_TURNS_AT_MOST: f64 = 0.2;

/// The serving threads runnable at once in at least this share of the
/// samples, ...
pub const TOGETHER_AT_ONCE_AT_LEAST: f64 = 0.6;
/// ... this far over the holding control's share, ...
pub const TOGETHER_GAP_AT_LEAST: f64 = 0.3;
/// ... and P at least [`NEVER_TURNS_AT`] and this far over the control's:
/// the pair ran at once, read from the samples' order. Noise keeps a
/// releasing pair's threads runnable (waiting for a core counts) but puts
/// them to sleep for the GIL they take back between chunks when its holder
/// is kept off a core, which pulls P under the at-once bound while both
/// threads stay runnable together: beside two burst loads, FastAPI's
/// releasing view read P 1.53-1.68 with the serving threads together in
/// 0.62-0.81 of the samples, the holding control in 0.15-0.37. A lock's or
/// the GIL's waiter sleeps, so a pair that took turns is together only
/// while a waiter wakes to ask (the holding control), and a server with one
/// handler thread has no second serving thread to be together.
pub const TOGETHER_P_GAP_AT_LEAST: f64 = 0.25;

/// A library's own threads count (rule sets with `library_threads`) only
/// where they were on a CPU for at least this share of the pair's wall:
/// the group's Σ on-CPU over the serving threads'. Noise lifts the group's
/// runnable P with threads that only queue for a core (a server's I/O
/// threads): beside two burst loads, advise on the fixture's releasing
/// view, which has no library threads, once read the group at P 2.02
/// against the control's 1.43 with its other threads on a CPU 0.01 of the
/// pair (serving 1.25, group 1.26), and called it a library's work. The
/// other threads of that view read 0.00-0.02 on a CPU over 30 advises beside
/// the same load; a library computing read 0.20-0.50 (libapp's `/matmul`),
/// 0.76-0.95 (the model app's BLAS pool) and 1.4-1.9 (the fixture's split
/// work).
pub const LIBRARY_ON_CPU_AT_LEAST: f64 = 0.1;

/// The medians the rules read, of one mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Medians {
    pub serving: f64,
    /// The serving figure with noise's possible convoys counted runnable.
    pub unconvoyed: f64,
    pub group: Option<f64>,
    /// Σ on-CPU over wall, the serving threads' and the group's.
    pub on_cpu: Option<f64>,
    pub group_on_cpu: Option<f64>,
    /// The run-state samples' share with both serving threads
    /// runnable at once, and its unconvoyed P by the other tasks alone.
    pub together: Option<f64>,
    pub unconvoyed_third: Option<f64>,
}

impl Medians {
    /// Every figure given (tests of the rules and of their words).
    #[cfg(test)]
    pub(crate) fn every(
        serving: f64,
        unconvoyed: f64,
        group: f64,
        on_cpu: f64,
        group_on_cpu: f64,
    ) -> Self {
        Self {
            serving,
            unconvoyed,
            group: Some(group),
            on_cpu: Some(on_cpu),
            group_on_cpu: Some(group_on_cpu),
            together: None,
            unconvoyed_third: None,
        }
    }

    pub fn of(r: &PairsReading) -> Self {
        Self {
            serving: r.parallelism.median,
            unconvoyed: r.unconvoyed.median,
            group: r.group_parallelism.map(|s| s.median),
            on_cpu: r.on_cpu_parallelism.map(|s| s.median),
            group_on_cpu: r.group_on_cpu_parallelism.map(|s| s.median),
            together: r.together.map(|s| s.median),
            unconvoyed_third: r.unconvoyed_third.map(|s| s.median),
        }
    }
}

/// One caller's bounds (see the module note for the order they are read in).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct Rules {
    /// P at least this: at once. Never under [`NEVER_TURNS_AT`].
    pub at_once_at_least: f64,
    /// ... and this far over the control's P.
    pub gap_at_least: f64,
    /// The control's P at most this, or the witness cannot tell.
    pub control_at_most: f64,
    /// Took turns when the unconvoyed P reads at most this (a work whose
    /// only sleep is the GIL: a gate's fixture).
    pub turns_at_most: Option<f64>,
    /// Took turns when P, the unconvoyed P and the group's P each stand at
    /// most this over the control's (a view that may also sleep).
    pub turns_within_control: Option<f64>,
    /// Count a library's own threads: the group's figures can prove at once.
    pub library_threads: bool,
    /// Asleep when the group's P is under this.
    pub asleep_below: Option<f64>,
    /// Asleep, too, when the serving threads' P is under `asleep_below` and
    /// the group's time on a CPU over the pair is under this share of the
    /// holding control's (which computes throughout, in the same minutes):
    /// on a loaded machine a sleeping view's few wake-ups queue for a core,
    /// which lifts the group's P but not its CPU time.
    #[serde(default)]
    pub asleep_on_cpu_share: Option<f64>,
    /// On pairs that each had a free core ([`rule_on_free_core`]): took
    /// turns at a serving P at most this (the group's quiet), even where the
    /// control does not separate. Under [`NEVER_TURNS_AT`] ([`Rules::check`]).
    #[serde(default)]
    pub free_core_turns_at_most: Option<f64>,
}

impl Rules {
    /// A row's rules: its mode under test's `parallelism_at_least`, its
    /// control's `parallelism_at_most` and `serialised_at_most`. None when
    /// the row sets no witness bounds of that shape (the witness is then
    /// shown, not judged).
    pub fn of_plan(plan: &PairRatioPlan) -> Option<Self> {
        let (Some(RatioBound::AtLeast(at_once)), Some(RatioBound::AtMost(control))) =
            (plan.under_test.witness_bound, plan.control.witness_bound)
        else {
            return None;
        };
        Some(Self {
            at_once_at_least: at_once,
            // The row's control bound sits below the pass bound (E19: 1.6
            // against 1.7), which is its gap.
            gap_at_least: 0.0,
            control_at_most: control,
            turns_at_most: plan.serialised_at_most,
            turns_within_control: None,
            // A gate's fixture computes on the serving threads it names.
            library_threads: false,
            // The fixture's work always computes (its digest is checked); a
            // pair that slept is read by the turns rules.
            asleep_below: None,
            asleep_on_cpu_share: None,
            // A gate confirms a fail on its own free-core trials.
            free_core_turns_at_most: None,
        })
    }

    /// Why this rule set could disagree with another; None when it cannot.
    pub fn check(&self) -> Option<String> {
        if self.at_once_at_least < NEVER_TURNS_AT {
            return Some(format!(
                "the at-once bound {:.2} is under {NEVER_TURNS_AT:.2}, where the turns rules of another rule set still apply",
                self.at_once_at_least
            ));
        }
        self.free_core_turns_at_most
            .filter(|&b| b >= NEVER_TURNS_AT)
            .map(|b| {
                format!(
                    "the free-core turns bound {b:.2} is not under {NEVER_TURNS_AT:.2}, where the at-once rules of another rule set may apply"
                )
            })
    }

    /// The control's P shows the witness can tell turns from parallel here.
    pub fn control_separates(&self, control: &Medians) -> bool {
        control.serving <= self.control_at_most
    }
}

/// Which rule decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Ruling {
    Asleep,
    /// Σ on-CPU of the serving threads past what the GIL allows.
    OnTwoCpus,
    /// The same on the group (a library's own threads).
    OnTwoCpusLibrary,
    /// The control read too parallel: cannot tell.
    ControlTooParallel,
    AtOnce,
    /// At once by the samples' order: the serving threads runnable
    /// together far more often than the control's, P past the turns bound.
    AtOnceTogether,
    /// At once on the group's figures (a library's own threads).
    AtOnceLibrary,
    /// The unconvoyed P at most `turns_at_most`.
    TookTurns,
    /// Every figure within `turns_within_control` of the control's.
    TookTurnsLikeControl,
    /// On pairs that each had a free core, P at most
    /// `free_core_turns_at_most` (the group's quiet, the serving threads
    /// within one GIL on a CPU), the control not needed.
    TookTurnsOnFreeCore,
    /// Between the bands: cannot tell.
    Between,
}

impl Ruling {
    /// The claim "the pair ran at once": Some(true), Some(false) (took
    /// turns, or asleep: not computing at once), None (cannot tell).
    pub fn at_once(self) -> Option<bool> {
        match self {
            Ruling::OnTwoCpus
            | Ruling::OnTwoCpusLibrary
            | Ruling::AtOnce
            | Ruling::AtOnceTogether
            | Ruling::AtOnceLibrary => Some(true),
            Ruling::Asleep
            | Ruling::TookTurns
            | Ruling::TookTurnsLikeControl
            | Ruling::TookTurnsOnFreeCore => Some(false),
            Ruling::ControlTooParallel | Ruling::Between => None,
        }
    }

    /// The claim about the serving threads alone: as [`Self::at_once`],
    /// but None for a ruling on a library's own threads (the group), which
    /// says nothing of the serving threads. Rule sets agree on this claim.
    pub fn serving_at_once(self) -> Option<bool> {
        match self {
            Ruling::OnTwoCpusLibrary | Ruling::AtOnceLibrary => None,
            r => r.at_once(),
        }
    }

    /// Whether the ruling stands on the on-CPU proof, which noise cannot fake.
    pub fn on_cpu_proof(self) -> bool {
        matches!(self, Ruling::OnTwoCpus | Ruling::OnTwoCpusLibrary)
    }
}

/// The serving threads' Σ on-CPU over the pair's wall within what one GIL
/// allows ([`GIL_ON_CPU_AT_MOST`]), where it is read; no turns ruling
/// stands past it. Holding views read at most 0.99 over 394 advises, free
/// core or not; libapp's `/db` (sqlite releases the GIL, Python around it
/// holds it) read 1.25-1.30 on pairs with a free core and P 1.40-1.42
/// beside two burst loads, within 0.25 of a loaded control, and was read
/// as "holds" once.
fn within_one_gil(on_cpu: Option<f64>) -> bool {
    on_cpu.is_none_or(|o| o <= GIL_ON_CPU_AT_MOST)
}

fn proves(view: Option<f64>, control: Option<f64>) -> bool {
    matches!((view, control), (Some(v), Some(c)) if v >= ON_CPU_PROVES && c <= GIL_ON_CPU_AT_MOST)
}

/// At once by the samples' order ([`TOGETHER_AT_ONCE_AT_LEAST`]): the same
/// for every rule set, and never where a turns rule may apply (P at least
/// [`NEVER_TURNS_AT`]).
pub fn together_at_once(view: &Medians, control: &Medians) -> bool {
    let (Some(t), Some(ct)) = (view.together, control.together) else {
        return false;
    };
    t >= TOGETHER_AT_ONCE_AT_LEAST
        && t - ct >= TOGETHER_GAP_AT_LEAST
        && view.serving >= NEVER_TURNS_AT
        && view.serving - control.serving >= TOGETHER_P_GAP_AT_LEAST
}

/// The ruling on pairs that each had a free core: as [`rule`], but where
/// the control does not separate, the pairs took turns when their serving
/// P is at most `free_core_turns_at_most` and the group's, where it is
/// read, is quiet (under [`NEVER_TURNS_AT`]: no library computing at
/// once). The control shows what a loaded machine does to work known to
/// take turns, which a pair with a free core does not need: its threads slept for at least `2 - P` of the wall, and with a
/// free core a pair that ran at once sleeps only behind a peer kept off a
/// core, which the core-wait bound keeps small (a lock or the GIL is the
/// rest). Beside one spinning process the holding control read P 1.6-1.9
/// while a holding view's pairs with a free core read 1.06-1.29.
pub fn rule_on_free_core(view: &Medians, control: &Medians, rules: &Rules) -> Ruling {
    let ruling = rule(view, control, rules);
    match rules.free_core_turns_at_most {
        Some(b)
            if ruling == Ruling::ControlTooParallel
                && view.serving <= b
                && within_one_gil(view.on_cpu)
                && view.group.is_none_or(|g| g < NEVER_TURNS_AT) =>
        {
            Ruling::TookTurnsOnFreeCore
        }
        _ => ruling,
    }
}

/// The ruling on `view` against the holding `control`.
pub fn rule(view: &Medians, control: &Medians, rules: &Rules) -> Ruling {
    if let (Some(below), Some(g)) = (rules.asleep_below, view.group) {
        if g < below {
            return Ruling::Asleep;
        }
    }
    if let (Some(share), Some(v), Some(c)) = (
        rules.asleep_on_cpu_share,
        view.group_on_cpu,
        control.group_on_cpu,
    ) {
        // The serving threads themselves must read asleep too.
        let serving_asleep = rules.asleep_below.is_some_and(|b| view.serving < b);
        if serving_asleep && c > 0.0 && v < share * c {
            return Ruling::Asleep;
        }
    }
    if proves(view.on_cpu, control.on_cpu) {
        return Ruling::OnTwoCpus;
    }
    let library_computed = rules.library_threads
        && matches!((view.group_on_cpu, view.on_cpu), (Some(g), Some(s)) if g - s >= LIBRARY_ON_CPU_AT_LEAST);
    if library_computed && proves(view.group_on_cpu, control.group_on_cpu) {
        return Ruling::OnTwoCpusLibrary;
    }
    if !rules.control_separates(control) {
        return Ruling::ControlTooParallel;
    }
    let clears = |v: f64, c: f64| v >= rules.at_once_at_least && v - c >= rules.gap_at_least;
    if clears(view.serving, control.serving) {
        return Ruling::AtOnce;
    }
    if together_at_once(view, control) {
        return Ruling::AtOnceTogether;
    }
    if library_computed {
        if let (Some(v), Some(c)) = (view.group, control.group) {
            if clears(v, c) {
                return Ruling::AtOnceLibrary;
            }
        }
    }
    // No sign of the serving threads running at once under any rule set
    // (nor, where the group counts, of the group). A gate reads only the
    // serving threads: its fixture computes on them, and the rest of the
    // server's group (I/O threads queueing under noise) must not silence
    // the witness's veto of a wall pass (measured: under burst, a
    // serialised server passed once in five when the group's P did).
    // The group reads quiet under the bound, or, where the rule set reads
    // against the control, no higher than the holding control's own group
    // allows: the control is served by the same server, whose other
    // threads (an ASGI server's event loop) queue for a core beside the
    // pool's on a loaded machine and lift both groups alike (measured:
    // FastAPI's holding def view on uvicorn, group 1.53-1.61 against the
    // control's 1.49-1.71 at load 4-6, read "between" in 3 of 8 advises).
    let group_quiet = |g: f64| {
        g < NEVER_TURNS_AT
            || matches!(
                (rules.turns_within_control, control.group),
                (Some(within), Some(c)) if g - c <= within
            )
    };
    // Nor were the serving threads on a CPU for more than one GIL allows:
    // a pair on a CPU past it ran at once for part of the work.
    let quiet = view.serving < NEVER_TURNS_AT
        && within_one_gil(view.on_cpu)
        && (!rules.library_threads
            || (view.group.is_none_or(group_quiet)
                && !proves(view.group_on_cpu, control.group_on_cpu)));
    if !quiet {
        return Ruling::Between;
    }
    if rules.turns_at_most.is_some_and(|t| view.unconvoyed <= t) {
        return Ruling::TookTurns;
    }
    // The samples' order: the serving threads were hardly ever
    // runnable at once, so neither's sleep was a convoy behind the other
    // waiting for a core; only a third task's core wait is left to explain.
    if let (Some(t), Some(u)) = (view.together, view.unconvoyed_third) {
        if t <= TOGETHER_TURNS_AT_MOST && rules.turns_at_most.is_some_and(|b| u <= b) {
            return Ruling::TookTurns;
        }
    }
    if let Some(within) = rules.turns_within_control {
        let group_within = match (view.group, control.group) {
            (Some(v), Some(c)) => v - c <= within,
            _ => false,
        };
        if view.serving - control.serving <= within
            && view.unconvoyed - control.unconvoyed <= within
            && group_within
        {
            return Ruling::TookTurnsLikeControl;
        }
    }
    Ruling::Between
}

#[cfg(test)]
mod tests {
    use super::*;

    /// E19's rules, from the row itself.
    pub(crate) fn e19() -> Rules {
        let row = crate::spec::row::parse_row(
            std::path::Path::new("specs/E19.yaml"),
            include_str!("../../../../specs/E19.yaml"),
        )
        .unwrap();
        match row.plan {
            crate::probe::Plan::PairRatio(p) => Rules::of_plan(&p).unwrap(),
            _ => unreachable!("E19 is a pair-ratio row"),
        }
    }

    fn m(serving: f64, unconvoyed: f64, group: f64, on_cpu: f64, group_on_cpu: f64) -> Medians {
        Medians::every(serving, unconvoyed, group, on_cpu, group_on_cpu)
    }

    #[test]
    fn e19_reads_its_row() {
        let r = e19();
        assert_eq!(
            (r.at_once_at_least, r.control_at_most, r.turns_at_most),
            (1.7, 1.6, Some(1.4))
        );
        assert_eq!(r.check(), None);
    }

    #[test]
    fn at_once_needs_the_bound_and_a_separating_control() {
        let r = e19();
        let hold = m(1.0, 1.1, 1.05, 0.98, 1.0);
        assert_eq!(
            rule(&m(1.95, 1.97, 2.0, 1.2, 1.25), &hold, &r),
            Ruling::AtOnce
        );
        // Twins: under the bound (between), and against a control that
        // crept past its own bound (cannot tell).
        assert_eq!(
            rule(&m(1.65, 1.7, 1.7, 1.2, 1.25), &hold, &r),
            Ruling::Between
        );
        let crept = m(1.65, 1.9, 1.7, 1.0, 1.05);
        assert_eq!(
            rule(&m(1.95, 1.97, 2.0, 1.2, 1.25), &crept, &r),
            Ruling::ControlTooParallel
        );
    }

    #[test]
    fn the_on_cpu_proof_stands_without_the_runnable_control() {
        let r = e19();
        let crept = m(1.65, 1.9, 1.7, 0.97, 1.05);
        let on_two = m(1.97, 2.0, 2.0, 1.42, 1.45);
        assert_eq!(rule(&on_two, &crept, &r), Ruling::OnTwoCpus);
        // Twins: a control whose on-CPU time also passed 1.1 (the GIL bound
        // does not hold here), and a view near 1 on a CPU.
        let busy = Medians {
            on_cpu: Some(1.2),
            ..crept
        };
        assert_eq!(rule(&on_two, &busy, &r), Ruling::ControlTooParallel);
        let near_one = Medians {
            on_cpu: Some(1.1),
            ..on_two
        };
        assert_eq!(rule(&near_one, &crept, &r), Ruling::ControlTooParallel);
    }

    fn with_together(mut m: Medians, together: f64) -> Medians {
        m.together = Some(together);
        m
    }

    #[test]
    fn threads_runnable_together_far_more_than_the_control_ran_at_once() {
        // Beside two burst loads (FastAPI's releasing def view on uvicorn):
        // P 1.61 under the row's 1.70, together 0.72 against 0.37.
        let view = with_together(m(1.61, 1.99, 1.7, 0.64, 0.7), 0.72);
        let hold = with_together(m(1.26, 1.79, 1.3, 0.47, 0.5), 0.37);
        for rules in [e19(), crate::advise::pair::rules()] {
            assert_eq!(rule(&view, &hold, &rules), Ruling::AtOnceTogether);
        }
        // Twins, one figure short each: together under its bound, too
        // close to the control's, P under the turns bound, P too close to
        // the control's, and no samples at all.
        let short = [
            with_together(m(1.61, 1.99, 1.7, 0.64, 0.7), 0.55),
            with_together(m(1.61, 1.99, 1.7, 0.64, 0.7), 0.62),
            with_together(m(1.45, 1.99, 1.7, 0.64, 0.7), 0.72),
            with_together(m(1.5, 1.99, 1.7, 0.64, 0.7), 0.72),
            m(1.61, 1.99, 1.7, 0.64, 0.7),
        ];
        let hold_at = |t: f64| with_together(m(1.3, 1.79, 1.3, 0.47, 0.5), t);
        let controls = [
            hold_at(0.3),
            hold_at(0.37),
            hold_at(0.3),
            hold_at(0.3),
            hold_at(0.3),
        ];
        for (v, c) in short.iter().zip(&controls) {
            assert_ne!(rule(v, c, &e19()), Ruling::AtOnceTogether, "{v:?} {c:?}");
            assert!(!together_at_once(v, c), "{v:?} {c:?}");
        }
        // A server that serialises behind a lock: its waiter sleeps, so the
        // threads are hardly ever runnable together, and it took turns.
        let lock = with_together(m(1.05, 1.1, 1.1, 0.95, 1.0), 0.05);
        assert_eq!(rule(&lock, &hold_at(0.3), &e19()), Ruling::TookTurns);
    }

    #[test]
    fn took_turns_by_the_unconvoyed_bound_or_like_the_control() {
        let hold = m(1.0, 1.1, 1.05, 0.98, 1.0);
        assert_eq!(
            rule(&m(1.0, 1.2, 1.1, 0.98, 1.0), &hold, &e19()),
            Ruling::TookTurns
        );
        // Twin: a convoy the unconvoyed figure cannot rule out.
        assert_eq!(
            rule(&m(1.05, 1.8, 1.1, 0.95, 1.0), &hold, &e19()),
            Ruling::Between
        );
        // The same convoy against a control the same convoys lift: like it.
        let lifted = m(1.0, 1.7, 1.05, 0.95, 1.0);
        let a = crate::advise::pair::rules();
        assert_eq!(
            rule(&m(1.05, 1.8, 1.1, 0.95, 1.0), &lifted, &a),
            Ruling::TookTurnsLikeControl
        );
        // Its twin: where the group counts (advise), a group reading at
        // once is never turns, however close the serving threads read to
        // the control; a gate reads its serving threads alone, and their
        // turns stand (the witness's veto of a wall pass).
        let a = crate::advise::pair::rules();
        let busy_group = m(1.05, 1.1, 1.55, 0.95, 1.0);
        assert_ne!(rule(&busy_group, &hold, &a).at_once(), Some(false));
        assert_eq!(rule(&busy_group, &hold, &e19()), Ruling::TookTurns);
        // The same busy group against a control whose own group the same
        // server threads lift as high: like the control.
        let busy_hold = m(1.0, 1.1, 1.5, 0.98, 1.0);
        assert_eq!(
            rule(&busy_group, &busy_hold, &a),
            Ruling::TookTurnsLikeControl
        );
    }

    #[test]
    fn asleep_only_where_the_rule_set_asks() {
        let hold = m(1.0, 1.1, 1.05, 0.98, 1.0);
        let asleep = m(0.03, 0.05, 0.05, 0.01, 0.02);
        assert_eq!(
            rule(&asleep, &hold, &crate::advise::pair::rules()),
            Ruling::Asleep
        );
        assert_eq!(rule(&asleep, &hold, &e19()), Ruling::TookTurns);
    }

    /// Every reading on a grid of serving P, unconvoyed lift, group lift and
    /// on-CPU figures, for view and control.
    fn grid() -> Vec<Medians> {
        let mut out = Vec::new();
        for s in 0..=22 {
            let serving = f64::from(s) * 0.1;
            for lift in [0.0, 0.15, 0.3, 0.6] {
                for group in [0.0, 0.1, 0.4, 1.5] {
                    for on_cpu in [0.5_f64, 0.98, 1.2, 1.35, 1.5] {
                        out.push(m(
                            serving,
                            serving + lift,
                            serving + group,
                            on_cpu.min(serving),
                            (on_cpu + group).min(serving + group),
                        ));
                    }
                }
            }
        }
        out
    }

    /// The first reading where `a` says at once and `b` took turns (or
    /// the other way round).
    fn disagreement(a: &Rules, b: &Rules) -> Option<(Medians, Medians, Ruling, Ruling)> {
        let g = grid();
        let controls: Vec<&Medians> = g.iter().step_by(7).collect();
        let readers: [fn(&Medians, &Medians, &Rules) -> Ruling; 2] = [rule, rule_on_free_core];
        for view in &g {
            for control in &controls {
                for (ra, rb) in readers
                    .iter()
                    .flat_map(|x| readers.iter().map(move |y| (x, y)))
                {
                    let (x, y) = (ra(view, control, a), rb(view, control, b));
                    if let (Some(p), Some(q)) = (x.serving_at_once(), y.serving_at_once()) {
                        if p != q {
                            return Some((*view, **control, x, y));
                        }
                    }
                }
            }
        }
        None
    }

    #[test]
    fn a_pair_whose_threads_barely_ran_against_a_computing_control_is_asleep() {
        let advise = crate::advise::pair::rules();
        let with =
            |group: f64, group_on_cpu: f64| Medians::every(0.1, 1.2, group, 0.005, group_on_cpu);
        let control = Medians::every(1.2, 2.0, 1.44, 0.37, 0.4);
        // Group P 0.62 (wake-ups queued on a loaded machine), yet 2% of a
        // CPU against the control's 40%: asleep.
        assert_eq!(rule(&with(0.62, 0.02), &control, &advise), Ruling::Asleep);
        // The twin: a view on a CPU as much as the control is not asleep.
        assert_ne!(rule(&with(0.62, 0.35), &control, &advise), Ruling::Asleep);
        // And a gate's rules never ask.
        assert_ne!(rule(&with(0.62, 0.02), &control, &e19()), Ruling::Asleep);
    }

    #[test]
    fn no_turns_past_what_one_gil_allows_on_a_cpu() {
        let advise = crate::advise::pair::rules();
        // libapp's /db beside two burst loads, on the pairs with a free
        // core: P 1.41 within 0.25 of a loaded control's 1.33, but its
        // serving threads on a CPU 1.27x the wall.
        let control = m(1.33, 1.98, 1.45, 0.96, 0.98);
        let db = m(1.41, 1.73, 1.51, 1.27, 1.3);
        assert_eq!(rule(&db, &control, &advise), Ruling::Between);
        // Twin: the same figures within one GIL on a CPU took turns.
        let held = Medians {
            on_cpu: Some(0.98),
            group_on_cpu: Some(1.0),
            ..db
        };
        assert_eq!(rule(&held, &control, &advise), Ruling::TookTurnsLikeControl);
    }

    #[test]
    fn free_core_pairs_took_turns_without_a_separating_control() {
        let advise = crate::advise::pair::rules();
        // Beside one spinning process: the holding control read P 1.72, a
        // holding view's pairs with a free core 1.16 (group 1.20).
        let crept = m(1.72, 2.0, 1.74, 0.94, 0.95);
        let free = m(1.16, 1.45, 1.20, 0.91, 0.93);
        assert_eq!(rule(&free, &crept, &advise), Ruling::ControlTooParallel);
        assert_eq!(
            rule_on_free_core(&free, &crept, &advise),
            Ruling::TookTurnsOnFreeCore
        );
        // Twins: a P past the bound (a releasing pair with a free core
        // read 1.43 at the least), a group past it (a library computing),
        // and a gate's rules, which do not ask, still cannot tell.
        let higher = m(1.43, 1.78, 1.55, 1.1, 1.15);
        assert_eq!(
            rule_on_free_core(&higher, &crept, &advise),
            Ruling::ControlTooParallel
        );
        let library = m(1.16, 1.45, 1.9, 0.91, 1.0);
        assert_eq!(
            rule_on_free_core(&library, &crept, &advise),
            Ruling::ControlTooParallel
        );
        assert_eq!(
            rule_on_free_core(&free, &crept, &e19()),
            Ruling::ControlTooParallel
        );
        // Where the control separates, the reading is `rule`'s.
        let hold = m(1.1, 1.3, 1.12, 0.95, 0.96);
        assert_eq!(
            rule_on_free_core(&free, &hold, &advise),
            rule(&free, &hold, &advise)
        );
        // A bound at the floor would let a turns ruling stand where an
        // at-once rule may apply: `check` says so.
        let loose = Rules {
            free_core_turns_at_most: Some(NEVER_TURNS_AT),
            ..advise
        };
        assert!(loose.check().is_some());
    }

    #[test]
    fn e19_and_advise_cannot_disagree() {
        let (gate, advise) = (e19(), crate::advise::pair::rules());
        assert_eq!(advise.check(), None);
        assert_eq!(disagreement(&gate, &advise), None);
        // Twin: a rule set whose at-once bound sits under the floor (the
        // bands advise had, 1.2 here) disagrees with E19 somewhere, and
        // `check` says why.
        let loose = Rules {
            at_once_at_least: 1.2,
            gap_at_least: 0.0,
            ..advise
        };
        assert!(loose.check().is_some());
        let found = disagreement(&gate, &loose);
        assert!(found.is_some());
    }
}
