//! `runner stress ROW --runs N [--server S] [--noise none|burst|spin]`: the
//! same gate N times under an optional background load (`runner::stress`),
//! then the verdict distribution and the spread of every figure. With
//! `--expect pass|fail`, any run reaching the opposite verdict makes the
//! exit code 1.

use clap::{Args, ValueEnum};

use runner::gate::request::RunPlan;
use runner::kernel::noise::Noise;
use runner::session::Session;
use runner::stress::summary::{self, figures_of};
use runner::stress::StressPlan;
use runner::verdict::Verdict;

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

pub async fn run(session: &Session, args: &StressArgs) -> Finish {
    if let Err(e) = args.out.check() {
        return unusable(&e);
    }
    let opts = match options(args) {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    let (rows, profile) = match super::rows_and_profile(
        session.project(),
        std::slice::from_ref(&args.row),
        &args.server,
    ) {
        Ok(r) => r,
        Err(e) => return unusable(&e),
    };
    let Some(mut row) = rows.into_iter().next() else {
        return unusable(&format!("no row {:?}", args.row));
    };
    opts.run.apply(&mut row);
    let plan = StressPlan {
        row,
        profile,
        noise: opts.noise,
        expect: opts.expect,
        runs: opts.runs,
        limits: opts.run.limits,
    };
    let mut done = 0u32;
    let mut on_run = |r: &runner::gate::result::GateResult| {
        done += 1;
        let figures = figures_of(r)
            .iter()
            .filter(|(k, _)| k.ends_with("ratio") || k.as_str() == "capacity")
            .map(|(k, x)| format!("{k} {x:.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!(
            "run {done}/{}: {:<14} {:>6.1} s  {}",
            plan.runs,
            r.verdict().label(),
            r.elapsed_ms / 1000.0,
            if r.verdict() == Verdict::Pass {
                figures
            } else {
                r.judgement.reason.chars().take(160).collect()
            }
        );
    };
    let stressed = match runner::stress::run(session, &plan, &mut on_run).await {
        Ok(s) => s,
        Err(e) => return unusable(&e),
    };
    match args.out.emit_value(&stressed.summary) {
        Ok(true) => {}
        Ok(false) => print!("{}", summary::render(&stressed.summary)),
        Err(e) => return unusable(&e),
    }
    let verdicts = if stressed.summary.wrong > 0 {
        vec![Verdict::Fail]
    } else {
        Vec::new()
    };
    Finish::ended(stressed.signal, verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

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
