//! A pair run reduced to advise's figures: each mode's witness reduced once
//! (`kernel/pairs.rs`, pairs two threads served) and the rulebook's ruling
//! on them. Pure functions of the run; no words (`words.rs`).

use schemars::JsonSchema;
use serde::Serialize;

use super::{rules, THREADS};
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
    /// Which rule of the rulebook answered.
    pub ruling: Ruling,
}

/// The figures and the ruling; None without the group and on-CPU figures.
pub fn figures(
    path: &str,
    inferred: bool,
    run: &PairRatioRun,
    view: &PairsReading,
    control: &PairsReading,
) -> Option<PairFigures> {
    let m = &run.under_test;
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
