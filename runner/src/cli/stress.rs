//! `runner stress ROW --runs N [--server S] [--noise none|burst|spin]`: the
//! same gate N times, each on a fresh server, optionally under a background
//! CPU load the runner starts for each gate and kills after it, then the
//! verdict distribution and the spread of every figure.
//!
//! This is how flakiness is measured rather than guessed: a verdict that
//! changes from run to run on one machine is a gate that cannot be trusted.
//! With `--expect pass|fail`, a run that reaches the opposite verdict is
//! counted wrong (cannot judge is never wrong: it claims nothing) and any
//! wrong run makes the exit code 1.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::Value;

use runner::event::Event;
use runner::gate::request::RunPlan;
use runner::gate::result::GateResult;
use runner::gate::session::{run_jobs, Job, Progress};
use runner::gate::GateContext;
use runner::host::project::Project;
use runner::kernel::noise::{Load, Noise};
use runner::report::terminal::Terminal;
use runner::stats::Spread;
use runner::verdict::Verdict;
use runner::{host::pyenv, host::signals, spec};

use super::args::{JsonArgs, RunArgs};
use super::{unusable, Finish};

#[derive(Debug, Args)]
pub struct StressArgs {
    /// The row: an id (E19) or a path to a row file.
    #[arg(value_name = "ROW")]
    pub row: String,

    /// How many times to run the gate.
    #[arg(long, value_name = "N")]
    pub runs: u32,

    /// Server profile: a name from specs/servers/ or a path to a profile file.
    #[arg(long, default_value = "granian", value_name = "NAME|PATH")]
    pub server: String,

    /// Background CPU load the runner starts for each gate and kills after
    /// it.
    #[arg(long, default_value = "none", value_parser = noise_value())]
    pub noise: Noise,

    /// The verdict this row should get here; runs reaching the opposite one
    /// are counted wrong (cannot judge never is) and make the exit code 1.
    #[arg(long, value_enum)]
    pub expect: Option<Expect>,

    #[command(flatten)]
    pub out: JsonArgs,

    #[command(flatten)]
    pub run: RunArgs,
}

/// `--noise`: the engine's value list, offered and checked by clap.
fn noise_value() -> impl clap::builder::TypedValueParser<Value = Noise> {
    use clap::builder::TypedValueParser;
    let values = Noise::ALL.map(|n| clap::builder::PossibleValue::new(n.name()).help(n.describe()));
    clap::builder::PossibleValuesParser::new(values).try_map(|s| s.parse::<Noise>())
}

/// The verdicts `runner stress --expect` takes: the two that claim something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Expect {
    /// The claim holds here.
    Pass,
    /// The claim does not hold here.
    Fail,
}

/// The pause between runs: ten times the machine lock's retry interval.
const TURN_GAP: Duration = Duration::from_millis(200);

/// A load never outlives this, even orphaned; one gate takes well under it.
const LOAD_LIFETIME: Duration = Duration::from_secs(900);

/// Validated `stress` options.
struct StressOptions {
    noise: Noise,
    expect: Option<Verdict>,
    runs: u32,
    run: RunPlan,
}

fn options(args: &StressArgs) -> Result<StressOptions, String> {
    let expect = args.expect.map(|e| match e {
        Expect::Pass => Verdict::Pass,
        Expect::Fail => Verdict::Fail,
    });
    if !(1..=10_000).contains(&args.runs) {
        return Err(format!(
            "--runs {}: use a number from 1 to 10000",
            args.runs
        ));
    }
    let run = args.run.plan()?;
    Ok(StressOptions {
        noise: args.noise,
        expect,
        runs: args.runs,
        run,
    })
}

/// One run, as the summary keeps it.
#[derive(Debug, Clone, Serialize)]
struct RunLine {
    verdict: Verdict,
    wrong: bool,
    reason: String,
    figures: BTreeMap<String, f64>,
    /// The gate's raw trial times and samples, for working out why a run
    /// went the way it did.
    run: Value,
}

/// The whole stress run, as `--json` prints it.
#[derive(Debug, Serialize)]
struct Summary {
    row: String,
    server: String,
    noise: Noise,
    runs: usize,
    expect: Option<Verdict>,
    verdicts: BTreeMap<String, usize>,
    wrong: usize,
    figures: BTreeMap<String, Spread>,
    interrupted: Option<String>,
    /// Process groups of the loads started (all stopped by now).
    load_pgids: Vec<i32>,
    results: Vec<RunLine>,
}

/// Whether `got` contradicts `expect` (cannot judge never does).
fn is_wrong(expect: Option<Verdict>, got: Verdict) -> bool {
    matches!(
        (expect, got),
        (Some(Verdict::Pass), Verdict::Fail) | (Some(Verdict::Fail), Verdict::Pass)
    )
}

/// The figures of one result worth a spread: each number at the top of
/// `figures` and each mode's `ratio` (bounds from the row are constants and
/// left out), plus trials spent, time to ready and time in all. Read from the
/// serialised result so that it follows the report's own names.
fn figures_of(result: &GateResult) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Ok(v) = serde_json::to_value(result) else {
        return out;
    };
    if let Some(f) = v.get("figures").and_then(Value::as_object) {
        for (key, value) in f {
            if key.ends_with("_at_least") || key.ends_with("_at_most") {
                continue;
            }
            if let Some(x) = value.as_f64() {
                out.insert(key.clone(), x);
            } else if let Some(ratio) = value.get("ratio").and_then(Value::as_f64) {
                let name = value
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(key.as_str());
                out.insert(format!("{name} ratio"), ratio);
                if let Some(p) = value
                    .pointer("/witness/parallelism/median")
                    .and_then(Value::as_f64)
                {
                    out.insert(format!("{name} P"), p);
                }
            }
        }
    }
    if let Some(x) = v.pointer("/servers/0/ready_ms").and_then(Value::as_f64) {
        out.insert("ready ms".into(), x);
    }
    if let Some(x) = v.get("elapsed_ms").and_then(Value::as_f64) {
        out.insert("gate ms".into(), x);
    }
    out
}

fn summarise(
    row: &str,
    server: &str,
    opts: &StressOptions,
    results: &[GateResult],
    interrupted: Option<String>,
    load_pgids: Vec<i32>,
) -> Summary {
    let mut verdicts = BTreeMap::new();
    let mut series: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut lines = Vec::new();
    for r in results {
        let verdict = r.verdict();
        *verdicts.entry(verdict.name().to_string()).or_insert(0) += 1;
        let figures = figures_of(r);
        for (k, x) in &figures {
            series.entry(k.clone()).or_default().push(*x);
        }
        lines.push(RunLine {
            verdict,
            wrong: is_wrong(opts.expect, verdict),
            reason: r.judgement.reason.clone(),
            figures,
            run: serde_json::to_value(&r.run).unwrap_or(Value::Null),
        });
    }
    Summary {
        row: row.into(),
        server: server.into(),
        noise: opts.noise,
        runs: results.len(),
        expect: opts.expect,
        wrong: lines.iter().filter(|l| l.wrong).count(),
        verdicts,
        figures: series
            .iter()
            .filter_map(|(k, xs)| Spread::of(xs).map(|s| (k.clone(), s)))
            .collect(),
        interrupted,
        load_pgids,
        results: lines,
    }
}

fn render(s: &Summary) -> String {
    let mut out = format!(
        "{} on {}: {} run(s), noise {}\n  verdicts:",
        s.row,
        s.server,
        s.runs,
        s.noise.name()
    );
    for (v, n) in &s.verdicts {
        out.push_str(&format!(" {v} {n}"));
    }
    out.push('\n');
    if let Some(e) = s.expect {
        out.push_str(&format!(
            "  wrong: {} of {} (expected {}; cannot judge is never wrong)\n",
            s.wrong,
            s.runs,
            e.name()
        ));
    }
    if !s.figures.is_empty() {
        let mut grid = runner::text::table::Grid::new(["figure", "median", "min", "max"]);
        for (k, sp) in &s.figures {
            grid.row([
                k.to_string(),
                format!("{:.2}", sp.median),
                format!("{:.2}", sp.min),
                format!("{:.2}", sp.max),
            ]);
        }
        out.push_str(&grid.right(&[1, 2, 3]).render("  "));
    }
    if let Some(i) = &s.interrupted {
        out.push_str(&format!("  interrupted by {i}\n"));
    }
    out
}

pub async fn run(project: &Project, python: Option<&Path>, args: &StressArgs) -> Finish {
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let rows = match runner::spec::row::resolve_rows(
        &project.specs_dir(),
        std::slice::from_ref(&args.row),
    ) {
        Ok(r) => r,
        Err(e) => return unusable(&e.to_string()),
    };
    let profile = match spec::resolve_profile(&project.servers_dir(), &args.server) {
        Ok(p) => p,
        Err(e) => return unusable(&e.to_string()),
    };
    let Some(mut row) = rows.into_iter().next() else {
        return unusable(&format!("no row {:?}", args.row));
    };
    opts.run.apply(&mut row);
    let row_id = row.id.clone();
    let jobs: Vec<Job> = (0..opts.runs)
        .map(|_| Job {
            row: row.clone(),
            profile: profile.clone(),
        })
        .collect();

    let progress = RefCell::new(Progress::default());
    let terminal = RefCell::new(Terminal::new(std::io::stderr()));
    let load: RefCell<Option<Load>> = RefCell::new(None);
    let load_error: RefCell<Option<String>> = RefCell::new(None);
    let load_pgids: RefCell<Vec<i32>> = RefCell::new(Vec::new());
    let runs = opts.runs;
    let work = async {
        let env = pyenv::prepare(project, python, &mut |p| {
            terminal.borrow_mut().event(&Event::Env(p))
        })
        .map_err(|e| e.to_string())?;
        let ctx = GateContext {
            project,
            python: &env,
            limits: opts.run.limits,
        };
        let mut done = 0u32;
        let mut emit = |e: Event<'_>| match &e {
            // The load runs while the gate holds the machine lock and its
            // server is up: it disturbs this gate's measurement only, never
            // another gate waiting its turn.
            // A row whose modes need two servers reports two; one load.
            Event::ServerReady { .. } if load.borrow().is_none() => {
                match Load::start(opts.noise, &env.python, LOAD_LIFETIME) {
                    Ok(l) => {
                        load_pgids.borrow_mut().extend(l.as_ref().map(Load::pgid));
                        *load.borrow_mut() = l;
                    }
                    Err(err) => {
                        *load_error.borrow_mut() = Some(format!(
                            "cannot start the --noise {} load with {}: {err}",
                            opts.noise.name(),
                            env.python.display()
                        ))
                    }
                }
            }
            Event::GateFinished(r) => {
                if let Some(mut l) = load.borrow_mut().take() {
                    l.stop();
                }
                done += 1;
                let figures = figures_of(r)
                    .iter()
                    .filter(|(k, _)| k.ends_with("ratio") || k.as_str() == "capacity")
                    .map(|(k, x)| format!("{k} {x:.2}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                eprintln!(
                    "run {done}/{runs}: {:<14} {:>6.1} s  {}",
                    r.verdict().label(),
                    r.elapsed_ms / 1000.0,
                    if r.verdict() == Verdict::Pass {
                        figures
                    } else {
                        r.judgement.reason.chars().take(160).collect()
                    }
                );
            }
            _ => {}
        };
        for (i, job) in jobs.iter().enumerate() {
            if i > 0 {
                // Gates take turns on the machine lock by polling it; a
                // pause between runs lets a gate that is waiting (another
                // terminal, a test) have its turn instead of waiting out
                // the whole stress run.
                tokio::time::sleep(TURN_GAP).await;
            }
            run_jobs(&ctx, std::slice::from_ref(job), &progress, &mut emit).await;
        }
        Ok::<(), String>(())
    };
    let interrupted = match signals::until_signal(work).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => return unusable(&e),
        Err(signal) => Some(signal),
    };
    // Dropping the load stops it on every path; do it before reporting.
    load.borrow_mut().take();
    if let Some(e) = load_error.borrow().as_ref() {
        return unusable(e);
    }

    let progress = progress.borrow();
    let summary = summarise(
        &row_id,
        &profile.name,
        &opts,
        &progress.results,
        interrupted.map(|s| signals::name(s).to_string()),
        load_pgids.take(),
    );
    match args.out.emit_value(&summary) {
        Ok(true) => {}
        Ok(false) => print!("{}", render(&summary)),
        Err(e) => return unusable(&e),
    }
    let verdicts = if summary.wrong > 0 {
        vec![Verdict::Fail]
    } else {
        Vec::new()
    };
    Finish::ended(interrupted, verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_opposite_verdict_is_wrong() {
        use Verdict::*;
        assert!(is_wrong(Some(Pass), Fail));
        assert!(is_wrong(Some(Fail), Pass));
        assert!(!is_wrong(Some(Pass), Pass));
        assert!(!is_wrong(Some(Pass), CannotJudge));
        assert!(!is_wrong(Some(Fail), CannotJudge));
        assert!(!is_wrong(None, Fail));
    }

    #[test]
    fn bad_flags_name_the_flag() {
        let base = || StressArgs {
            row: "E19".into(),
            runs: 3,
            server: "granian".into(),
            noise: Noise::None,
            expect: None,
            out: JsonArgs::default(),
            run: RunArgs {
                trials: None,
                request_timeout_ms: 30_000,
                machine_wait_ms: 1000,
            },
        };
        assert!(options(&base()).is_ok());
        // Unknown --noise and --expect values never get here: clap refuses
        // them (runner/tests/stress.rs).
        let e = |a: StressArgs| options(&a).err().unwrap();
        assert!(e(StressArgs { runs: 0, ..base() }).starts_with("--runs 0"));
        let o = options(&StressArgs {
            noise: Noise::Spin,
            expect: Some(Expect::Fail),
            ..base()
        })
        .unwrap();
        assert_eq!((o.noise, o.expect), (Noise::Spin, Some(Verdict::Fail)));
    }
}
