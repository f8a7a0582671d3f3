//! The flags of `runner stress`; the run is `runner::stress::command`.

use clap::{Args, ValueEnum};

use runner::kernel::noise::Noise;
use runner::session::Session;
use runner::stress::command::{self, StressCommand};
use runner::verdict::Verdict;

use super::args::{JsonArgs, RunArgs};
use super::console::Std;
use super::{or_unusable, unusable, Finish};

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

pub async fn run(session: &Session, args: &StressArgs) -> Finish {
    let input = match args.run.plan() {
        Ok(run) => StressCommand {
            row: args.row.clone(),
            runs: args.runs,
            server: args.server.clone(),
            noise: args.noise,
            expect: args.expect.map(|e| match e {
                Expect::Pass => Verdict::Pass,
                Expect::Fail => Verdict::Fail,
            }),
            out: args.out.out(),
            run,
        },
        Err(e) => return unusable(&e),
    };
    or_unusable(command::run(session, &input, &Std).await)
}
