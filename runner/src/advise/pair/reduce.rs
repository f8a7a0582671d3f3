//! A pair run reduced to advise's figures: each mode's witness reduced once
//! (`kernel/pairs.rs`, pairs two threads served) and the rulebook's ruling
//! on them. Pure functions of the run; no words (`words.rs`).

use schemars::JsonSchema;
use serde::Serialize;

use super::{free_core_at_most, rules, FREE_CORE_PAIRS_AT_LEAST, FREE_CORE_TURNS_AT_MOST, THREADS};
use crate::kernel::pairs::{PairPoint, PairsReading};
use crate::probe::pair_ratio::measure::PairRatioRun;
use crate::probe::pair_ratio::rulebook::{self, Medians, Ruling};
use crate::stats::{ratio_of_minima, Spread};

/// What the pair measured.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PairFigures {
    pub path: String,
    pub threads: u32,
    /// How the view's serving threads were known: named by the replies'
    /// `X-Thread-Id` (the fixture), or inferred as the two tasks of the
    /// server's group runnable longest over each pair (an app of your own).
    pub serving_threads: String,
    /// Pairs whose two requests were served by two threads and read by
    /// the witness: the ones the answer stands on.
    pub pairs: usize,
    pub pairs_measured: usize,
    /// Runnable parallelism of the serving threads per pair (E19's figure).
    pub parallelism: Spread,
    /// The same over the server's whole process group: a library's own
    /// threads count here (the serving threads only wait for them).
    pub group_parallelism: Spread,
    /// Σ on-CPU of the serving threads over each pair's wall: above 1 only
    /// when they ran on two CPUs at once.
    pub on_cpu_parallelism: Spread,
    /// The same over the whole group.
    pub group_on_cpu_parallelism: Spread,
    pub control_on_cpu_parallelism: Spread,
    pub control_group_on_cpu_parallelism: Spread,
    /// The serving threads' P for the holding control's pairs.
    pub control_parallelism: Spread,
    pub control_group_parallelism: Spread,
    /// The view's serving P with every blocked moment that other tasks'
    /// run-queue waits could explain counted as runnable (a lock holder or
    /// the server's I/O thread kept off a core): the most noise could have
    /// hidden. "Holds" must stand on this figure too.
    pub unconvoyed: Spread,
    /// The same figure for the holding control's pairs: what the convoys of
    /// this machine, now, add to work that is known to take turns. The
    /// view's unconvoyed P is read against this, never against the
    /// control's plain P (the server's own I/O threads wait for a core
    /// while a serving thread waits for the GIL, even on a quiet machine).
    pub control_unconvoyed: Spread,
    pub control_pairs: usize,
    /// KiB of each holding-control request: sized to the view's length
    /// when the view is not the fixture's `/work` (never over 24 MiB).
    pub control_kib: u32,
    /// The share of the run-state samples with both serving threads
    /// runnable at once, the view's and the holding control's, where both
    /// were sampled often enough (`rulebook::TOGETHER_AT_ONCE_AT_LEAST`).
    pub together: Option<Spread>,
    pub control_together: Option<Spread>,
    /// The host's idle cores over each pair (reported, not judged).
    pub host_idle_cores: Option<Spread>,
    pub control_host_idle_cores: Option<Spread>,
    /// Each counted pair's own figures, view and control.
    pub each: Vec<PairPoint>,
    pub control_each: Vec<PairPoint>,
    /// The serving threads' on-CPU time as a share of the pair's wall
    /// (each thread's share, averaged): near 1 computing, near 0 asleep.
    pub serving_on_cpu: Spread,
    /// The serving threads' blocked share (neither running nor waiting for
    /// a core: the GIL, a lock, a join, a syscall).
    pub serving_blocked: Spread,
    /// min(pair) / min(single), by the clock: reported, not judged.
    pub wall_ratio: Option<f64>,
    pub single_ms: Option<Spread>,
    /// The no-server control's min(pair) / min(single): about 1.0 with a
    /// free core.
    pub capacity: Option<f64>,
    /// Which rule of the rulebook answered, over every counted pair.
    pub ruling: Ruling,
    /// The view's pairs that had a free core, on which alone "holds"
    /// stands.
    pub free_core: FreeCore,
    /// The ruling on the less-loaded half of the view's pairs, on which "at
    /// once" by P or by the samples' order must stand too.
    pub less_loaded: LessLoaded,
    /// The view's pairs with a free core that took turns by their own P,
    /// which "at once" off run-queue time must not contradict.
    pub turned_with_free_core: TurnedWithFreeCore,
}

/// The view's pairs that had a free core (core-wait ratio at most E19's
/// `capacity_at_most`) and how many of them read P at most
/// `FREE_CORE_TURNS_AT_MOST`: took turns by their own figures, where a pair
/// that ran at once reads about 2. "At once" read off run-queue time does
/// not stand where any did and they are at least half of those pairs. Of
/// the four advises in which the model app's holding view once read
/// "releases" beside two burst loads (`LessLoaded`), two had such pairs
/// (3 of 3 at P 1.00-1.22, 1 of 1 at 1.10); of 73 releasing advises that
/// answered "at once" off run-queue time, none had one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct TurnedWithFreeCore {
    /// The view's counted pairs with a free core.
    pub pairs: usize,
    /// Of them, those at P at most `FREE_CORE_TURNS_AT_MOST`.
    pub turns: usize,
}

impl TurnedWithFreeCore {
    fn of(view: &PairsReading) -> Self {
        let free: Vec<_> = view
            .each
            .iter()
            .filter(|p| p.core_wait.is_some_and(|c| c <= free_core_at_most()))
            .collect();
        Self {
            pairs: free.len(),
            turns: free
                .iter()
                .filter(|p| p.parallelism.is_some_and(|v| v <= FREE_CORE_TURNS_AT_MOST))
                .count(),
        }
    }

    /// The pairs with a free core contradict "at once".
    pub fn contradicts_at_once(&self) -> bool {
        self.turns >= 1 && 2 * self.turns >= self.pairs
    }
}

/// "At once" read off run-queue time (P, or the samples' order: not the
/// on-CPU proof) must hold on the less-loaded half of the view's pairs too.
/// Two serving threads woken together onto one core (a neighbour holding
/// the other) both read runnable until each gets the core, and only then
/// does a waiter find the GIL held: beside two burst loads a holding view
/// whose work (6 ms) is shorter than a scheduler slice read P 1.54-1.73,
/// under either witness, in 4 of 40 advises, its less-loaded half 1.22-1.48;
/// releasing views' less-loaded halves read 1.43-2.00 (`docs/deployment-rule.md`).
/// The half stands only when the rulebook reads it at once. Letting it
/// stand at any P out of reach of the turns rules (1.5) was tried (4ac152d)
/// and undone: a holding view's half then read P 1.4999999 under a
/// together-rule "at once" (two burst loads, portable), a wrong held back
/// by `TurnedWithFreeCore` alone.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct LessLoaded {
    /// The view's pairs in the half.
    pub pairs: usize,
    /// Their highest core-wait ratio.
    pub core_wait_at_most: Option<f64>,
    /// Their serving threads' median P.
    pub parallelism: Option<f64>,
    /// The rulebook's ruling on them against the control.
    pub ruling: Option<Ruling>,
}

impl LessLoaded {
    /// The half does not contradict "at once".
    pub fn stands_at_once(&self) -> bool {
        self.ruling.and_then(Ruling::at_once) == Some(true)
    }
}

/// "Holds" stands only on the view's pairs whose serving threads waited
/// for a core no more than a free core allows, or than the holding
/// control's median pair did: a pair that read turns while its threads
/// waited for a core longer than that cannot tell a held GIL from a busy
/// core (a GIL holder preempted by a neighbour's process leaves its peer
/// asleep on the GIL), and the control, measured in the same minutes, shows
/// what that much waiting does to work known to take turns. Where every
/// pair reads turns, the ruling on these pairs alone is the answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
pub struct FreeCore {
    /// A pair counts when its core-wait ratio (1 + its serving threads'
    /// run-queue time over its wall) is at most this: the larger of E19's
    /// `capacity_at_most` (a free core, the bound a gate's trial is read
    /// with) and `control_core_wait` where the control separates.
    pub core_wait_at_most: f64,
    /// The holding control's median core-wait ratio.
    pub control_core_wait: Option<f64>,
    /// The view's counted pairs that waited no longer.
    pub pairs: usize,
    /// Pairs "holds" needs.
    pub needed: usize,
    /// The rulebook's ruling on those pairs against the control
    /// (`rule_on_free_core`: with a free core, turns stand without a
    /// control that separates); None with fewer than `needed`.
    pub ruling: Option<Ruling>,
}

/// The control's median core-wait ratio, and the bound a view pair's must
/// be within for its turns to count (`FreeCore`). A control that reads too
/// parallel shows no turns to compare with, so it does not widen the bound.
pub fn core_wait_at_most(control: &PairsReading) -> (f64, Option<f64>) {
    let waits: Vec<f64> = control.each.iter().filter_map(|p| p.core_wait).collect();
    let median = Spread::of(&waits).map(|s| s.median);
    let widens = rules().control_separates(&Medians::of(control));
    let at_most = match median {
        Some(m) if widens => free_core_at_most().max(m),
        _ => free_core_at_most(),
    };
    (at_most, median)
}

/// The figures and the ruling; None without the group and on-CPU figures.
pub fn figures(
    path: &str,
    inferred: bool,
    run: &PairRatioRun,
    view: &PairsReading,
    control: &PairsReading,
    free: Option<&PairsReading>,
    half: Option<&PairsReading>,
) -> Option<PairFigures> {
    let m = &run.under_test;
    let pairs_free = free.map_or(0, |f| f.pairs);
    let (at_most, control_core_wait) = core_wait_at_most(control);
    let free_core = FreeCore {
        core_wait_at_most: at_most,
        control_core_wait,
        pairs: pairs_free,
        needed: FREE_CORE_PAIRS_AT_LEAST,
        ruling: free
            .filter(|_| pairs_free >= FREE_CORE_PAIRS_AT_LEAST)
            .map(|f| rulebook::rule_on_free_core(&Medians::of(f), &Medians::of(control), &rules())),
    };
    Some(PairFigures {
        path: path.to_string(),
        threads: THREADS,
        serving_threads: if inferred {
            "inferred: the two tasks runnable longest over each pair (the app sends no X-Thread-Id)"
                .into()
        } else {
            "named by X-Thread-Id".into()
        },
        pairs: view.pairs,
        pairs_measured: m.pair_ms.len(),
        parallelism: view.parallelism,
        group_parallelism: view.group_parallelism?,
        on_cpu_parallelism: view.on_cpu_parallelism?,
        group_on_cpu_parallelism: view.group_on_cpu_parallelism?,
        control_on_cpu_parallelism: control.on_cpu_parallelism?,
        control_group_on_cpu_parallelism: control.group_on_cpu_parallelism?,
        control_parallelism: control.parallelism,
        control_group_parallelism: control.group_parallelism?,
        unconvoyed: view.unconvoyed,
        control_unconvoyed: control.unconvoyed,
        control_pairs: control.pairs,
        control_kib: run.control_kib,
        together: view.together,
        control_together: control.together,
        host_idle_cores: view.host_idle_cores,
        control_host_idle_cores: control.host_idle_cores,
        each: view.each.clone(),
        control_each: control.each.clone(),
        serving_on_cpu: view.on_cpu,
        serving_blocked: view.blocked,
        wall_ratio: ratio_of_minima(&m.pair_ms, &m.single_ms),
        single_ms: Spread::of(&m.single_ms),
        capacity: ratio_of_minima(
            &run.capacity.iter().map(|c| c.pair_ms).collect::<Vec<_>>(),
            &run.capacity.iter().map(|c| c.single_ms).collect::<Vec<_>>(),
        ),
        ruling: rulebook::rule(&Medians::of(view), &Medians::of(control), &rules()),
        free_core,
        less_loaded: LessLoaded {
            pairs: half.map_or(0, |h| h.pairs),
            core_wait_at_most: half
                .and_then(|h| h.each.iter().filter_map(|p| p.core_wait).reduce(f64::max)),
            parallelism: half.map(|h| h.parallelism.median),
            ruling: half.map(|h| rulebook::rule(&Medians::of(h), &Medians::of(control), &rules())),
        },
        turned_with_free_core: TurnedWithFreeCore::of(view),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advise::pair::{read, Work};
    use crate::kernel::control::ControlSample;
    use crate::kernel::witness::{ThreadFigures, Witness};
    use crate::probe::pair_ratio::judge;
    use crate::probe::pair_ratio::measure::ModeRun;
    use crate::probe::Plan;
    use crate::spec::Trials;
    use crate::verdict::Verdict;

    const MS: u64 = 1_000_000;

    /// A recorded pair over 40 ms: each serving thread's (on-CPU ms,
    /// run-queue ms), plus an I/O thread on a CPU for 1 ms.
    fn pair(threads: &[(u64, u64)]) -> Witness {
        let wall = 40 * MS;
        let rq: u64 = threads.iter().map(|t| t.1 * MS).sum();
        let on: u64 = threads.iter().map(|t| t.0 * MS).sum::<u64>() + MS;
        Witness {
            wall_ns: wall,
            parallelism: Some((on + rq) as f64 / wall as f64),
            on_cpu_ns: on,
            run_queue_ns: rq,
            threads: threads
                .iter()
                .enumerate()
                .map(|(i, &(on, q))| ThreadFigures {
                    tid: i as i32 + 1,
                    on_cpu_ns: on * MS,
                    run_queue_ns: q * MS,
                    blocked_ns: wall.saturating_sub((on + q) * MS),
                    others_run_queue_ns: rq - q * MS,
                })
                .collect(),
            unseen: Vec::new(),
            appeared: 0,
            vanished: 0,
            sampled: None,
        }
    }

    /// Pairs as this machine recorded them (the figures the rulebook's
    /// constants cite): two CPUs at once; both runnable, one core busy;
    /// taking turns; taking turns with a convoy; one creeping under load;
    /// asleep.
    fn recorded() -> Vec<(&'static str, Witness)> {
        vec![
            ("on two CPUs", pair(&[(28, 10), (28, 11)])),
            ("runnable, one core", pair(&[(20, 19), (20, 20)])),
            ("turns", pair(&[(20, 0), (20, 0)])),
            ("turns, convoyed", pair(&[(20, 0), (20, 12)])),
            ("crept", pair(&[(20, 6), (20, 9)])),
            ("asleep", pair(&[(1, 0), (1, 0)])),
        ]
    }

    fn e19() -> crate::probe::pair_ratio::PairRatioPlan {
        let row = crate::spec::row::parse_row(
            std::path::Path::new("specs/E19.yaml"),
            include_str!("../../../../specs/E19.yaml"),
        )
        .unwrap();
        match row.plan {
            Plan::PairRatio(p) => p,
            _ => unreachable!(),
        }
    }

    /// Five trials of `view` against `control` with no free core, so the
    /// gate's verdict is the witness's alone.
    fn run(view: &Witness, control: &Witness) -> PairRatioRun {
        let mode = |name: &str, path: &str, w: &Witness| ModeRun {
            name: name.into(),
            path: path.into(),
            digest_checked: true,
            single_ms: vec![20.0; 5],
            pair_ms: vec![40.0; 5],
            pair_threads: 2,
            pair_pids: 1,
            connection_ports: [1, 2],
            witness: vec![Some(w.clone()); 5],
        };
        PairRatioRun {
            under_test: mode("releasing", "/work?mode=release", view),
            control: mode("holding", "/work?mode=hold", control),
            capacity: vec![
                ControlSample {
                    single_ms: 20.0,
                    pair_ms: 40.0
                };
                5
            ],
            connection_ports: [1, 2],
            trials_done: 5,
            broken: None,
            peer_port_byte_swapped: false,
            witness_unavailable: None,
            quiet: Default::default(),
            control_kib: 24576,
        }
    }

    /// The gate and advise contradict each other: one says the pair ran at
    /// once, the other that it did not.
    fn contradict(gate: Verdict, advise: Option<Work>) -> bool {
        matches!(
            (gate, advise),
            (Verdict::Pass, Some(Work::Holds | Work::Waits))
                | (Verdict::Fail, Some(Work::Releases))
        )
    }

    #[test]
    fn turns_stand_only_on_pairs_with_a_free_core() {
        // Turns like the control's, every pair with its serving threads
        // waiting for a core 0.4 of the wall (core-wait ratio 1.4): a busy
        // core and a held GIL read alike here, so no answer.
        let control = pair(&[(20, 6), (20, 6)]);
        let busy = pair(&[(20, 8), (20, 8)]);
        let r = read("/embed", true, &run(&busy, &control));
        let f = r.figures.as_ref().unwrap();
        assert_eq!(f.ruling, Ruling::TookTurnsLikeControl);
        assert_eq!((f.free_core.pairs, f.free_core.ruling), (0, None));
        assert_eq!(r.work, None);
        assert!(r.reason.starts_with("no free core: "), "{}", r.reason);
        // A holding control that waited as long (a steady load on one of
        // the cores lifts both alike): the same pairs count against it.
        let r = read("/embed", true, &run(&busy, &busy));
        let f = r.figures.as_ref().unwrap();
        assert_eq!(f.free_core.pairs, 5);
        assert!((f.free_core.core_wait_at_most - 1.4).abs() < 1e-9);
        assert_eq!(r.work, Some(Work::Holds), "{}", r.reason);
        // Twin: the same turns with a free core (ratio 1.25) hold.
        let free = pair(&[(20, 5), (20, 5)]);
        let r = read("/embed", true, &run(&free, &control));
        let f = r.figures.as_ref().unwrap();
        assert_eq!(f.free_core.pairs, 5);
        assert_eq!(f.free_core.ruling, Some(Ruling::TookTurnsLikeControl));
        assert_eq!(r.work, Some(Work::Holds), "{}", r.reason);
        assert!(r.reason.starts_with("on the 5 of 5 pairs"), "{}", r.reason);
    }

    #[test]
    fn a_control_too_parallel_leaves_holds_to_the_pairs_with_a_free_core() {
        // Beside one spinning process: the holding control's waiter queues
        // for a core at each wake-up (P 1.75, core wait 1.8), the view's
        // pairs had a free core (core wait 1.15) and took turns (P 1.1).
        let crept = pair(&[(19, 16), (19, 16)]);
        let turns = pair(&[(19, 3), (19, 3)]);
        let r = read("/embed/hold", true, &run(&turns, &crept));
        let f = r.figures.as_ref().unwrap();
        assert_eq!(f.ruling, Ruling::ControlTooParallel);
        assert_eq!(f.free_core.ruling, Some(Ruling::TookTurnsOnFreeCore));
        assert_eq!(r.work, Some(Work::Holds), "{}", r.reason);
        assert!(r.reason.starts_with("on the 5 of 5 pairs"), "{}", r.reason);
        // Twin: pairs that waited for a core (1.35): the control's 1.8 does
        // not widen the bound, so none counts and nothing is answered.
        let waited = pair(&[(12, 7), (12, 7)]);
        let r = read("/embed/hold", true, &run(&waited, &crept));
        let f = r.figures.as_ref().unwrap();
        assert!((f.free_core.core_wait_at_most - 1.3).abs() < 1e-9);
        assert_eq!((f.free_core.pairs, r.work), (0, None), "{}", r.reason);
        assert!(
            r.reason.starts_with("the holding control read P 1.75"),
            "{}",
            r.reason
        );
        // Twin: free-core pairs at P 1.48 (a releasing view's least) stay
        // unanswered against that control.
        let higher = pair(&[(24, 5), (24, 6)]);
        let r = read("/embed", true, &run(&higher, &crept));
        let f = r.figures.as_ref().unwrap();
        assert_eq!(f.free_core.pairs, 5);
        assert_eq!(f.free_core.ruling, Some(Ruling::ControlTooParallel));
        assert_eq!(r.work, None, "{}", r.reason);
    }

    #[test]
    fn pairs_with_a_free_core_answer_for_the_run_when_every_pair_reads_turns() {
        // Two pairs read at once with a free core, three read turns with
        // none: the median of all five reads turns, the free ones do not
        // hold (too few to answer at all).
        let control = pair(&[(20, 6), (20, 6)]);
        let mut r = run(&pair(&[(20, 8), (20, 8)]), &control);
        let at_once = pair(&[(38, 0), (38, 0)]);
        for w in r.under_test.witness.iter_mut().take(2) {
            *w = Some(at_once.clone());
        }
        let read_ = read("/embed", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(f.ruling, Ruling::TookTurnsLikeControl);
        assert_eq!(f.free_core.pairs, 2);
        assert_eq!(read_.work, None, "{}", read_.reason);
        // Twin: with a third (of seven, the median still turns), the free
        // pairs answer: at once.
        r.under_test.witness.insert(0, Some(at_once));
        r.under_test.witness.push(r.under_test.witness[4].clone());
        let read_ = read("/embed", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(
            (f.ruling, f.free_core.pairs),
            (Ruling::TookTurnsLikeControl, 3)
        );
        assert_eq!(read_.work, Some(Work::Releases), "{}", read_.reason);
    }

    #[test]
    fn at_once_off_the_run_queue_stands_on_the_less_loaded_half_too() {
        // Three pairs stacked on one core (both threads runnable nearly all
        // along, on a CPU one GIL's worth) read at once by P; the two
        // least loaded took turns, without a free core (core wait 1.35 and
        // 1.4, so `TurnedWithFreeCore` has nothing to say).
        let control = pair(&[(20, 2), (20, 2)]);
        let stacked = |rq| pair(&[(19, rq), (19, rq)]);
        let mut r = run(&stacked(20), &control);
        r.under_test.witness[0] = Some(pair(&[(20, 7), (20, 7)]));
        r.under_test.witness[1] = Some(pair(&[(20, 8), (20, 8)]));
        r.under_test.witness[2] = Some(stacked(18));
        r.under_test.witness[3] = Some(stacked(19));
        let read_ = read("/embed", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(f.ruling, Ruling::AtOnce);
        assert_eq!(f.less_loaded.pairs, 3);
        assert_eq!(read_.work, None, "{}", read_.reason);
        assert!(
            read_.reason.contains("less-loaded half"),
            "{}",
            read_.reason
        );
        // Twin: the least loaded pairs ran on two CPUs: at once stands.
        let two_cpus = pair(&[(36, 2), (36, 2)]);
        r.under_test.witness[0] = Some(two_cpus.clone());
        r.under_test.witness[1] = Some(two_cpus);
        let read_ = read("/embed", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(f.ruling, Ruling::AtOnce);
        assert_eq!(f.less_loaded.ruling.and_then(Ruling::at_once), Some(true));
        assert_eq!(read_.work, Some(Work::Releases), "{}", read_.reason);
        // Twin: a half that reads "between" (P 1.55, 0.45 over the
        // control) does not stand, though no turns rule reaches it.
        r.under_test.witness[0] = Some(pair(&[(20, 10), (20, 10)]));
        r.under_test.witness[1] = Some(pair(&[(20, 11), (20, 11)]));
        let read_ = read("/embed", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(f.less_loaded.ruling, Some(Ruling::Between));
        assert!((f.less_loaded.parallelism.unwrap() - 1.55).abs() < 0.01);
        assert_eq!(read_.work, None, "{}", read_.reason);
    }

    #[test]
    fn at_once_off_the_run_queue_falls_where_pairs_with_a_free_core_took_turns() {
        // Three pairs stacked on one core read at once by P; the two with
        // a free core (core wait 1.15) took turns (P 1.1).
        let control = pair(&[(20, 2), (20, 2)]);
        let stacked = pair(&[(19, 20), (19, 20)]);
        let turns = pair(&[(19, 3), (19, 3)]);
        let mut r = run(&stacked, &control);
        r.under_test.witness[0] = Some(turns.clone());
        r.under_test.witness[1] = Some(turns.clone());
        let read_ = read("/embed/hold", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(f.ruling, Ruling::AtOnce);
        assert_eq!(
            f.turned_with_free_core,
            TurnedWithFreeCore { pairs: 2, turns: 2 }
        );
        assert_eq!(read_.work, None, "{}", read_.reason);
        assert!(
            read_
                .reason
                .contains("2 of the 2 pairs that had a free core"),
            "{}",
            read_.reason
        );
        // Twin: two of the three pairs with a free core ran on two CPUs,
        // one took turns (under half): at once stands.
        let two_cpus = pair(&[(36, 2), (36, 2)]);
        r.under_test.witness[0] = Some(two_cpus.clone());
        r.under_test.witness[1] = Some(two_cpus);
        r.under_test.witness[2] = Some(turns);
        let read_ = read("/embed", true, &r);
        let f = read_.figures.as_ref().unwrap();
        assert_eq!(
            f.turned_with_free_core,
            TurnedWithFreeCore { pairs: 3, turns: 1 }
        );
        assert_eq!(read_.work, Some(Work::Releases), "{}", read_.reason);
    }

    #[test]
    fn the_gate_and_advise_read_the_same_figures_alike() {
        let plan = e19();
        let trials = Trials { min: 5, max: 15 };
        let mut decided = (0, 0);
        for (vn, view) in recorded() {
            for (cn, control) in recorded() {
                let r = run(&view, &control);
                let gate = judge::judge(&plan, trials, &r).concluded().verdict;
                let advise = read("/work?mode=release", false, &r).work;
                assert!(
                    !contradict(gate, advise),
                    "view {vn}, control {cn}: gate {gate:?}, advise {advise:?}"
                );
                decided.0 += usize::from(gate != Verdict::CannotJudge);
                decided.1 += usize::from(advise.is_some());
            }
        }
        // Both decide some of them (the check is not vacuous).
        assert!(decided.0 >= 3 && decided.1 >= 3, "{decided:?}");
        // Twin: the check fails on a contradiction.
        assert!(contradict(Verdict::Pass, Some(Work::Holds)));
        assert!(!contradict(Verdict::Pass, None));
    }
}
