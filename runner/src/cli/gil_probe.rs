//! The flags of `runner gil-probe`; the run is `runner::probe::gil::command`.

use clap::Args;

use runner::host::limits::Limits;
use runner::probe::gil::command::{self, GilProbeCommand};
use runner::session::Session;

use super::args::JsonArgs;
use super::console::Std;
use super::{or_unusable, Finish};

#[derive(Debug, Args)]
pub struct GilProbeArgs {
    /// The call under test (time:sleep, package.module:Class.method); or
    /// give --setup instead.
    #[arg(value_name = "MODULE:FUNCTION")]
    pub call: Option<String>,

    /// An argument as a Python literal, repeatable: --arg 0.005 --arg "'text'".
    /// With --setup, the setup's arguments.
    #[arg(long = "arg", value_name = "LITERAL", allow_hyphen_values = true)]
    pub args: Vec<String>,

    /// A function run once per worker thread that returns (callable, args),
    /// so a per-thread handle can be opened there (zimsearch:setup).
    #[arg(long, value_name = "MODULE:FUNCTION")]
    pub setup: Option<String>,

    /// Make it a gate: exit 1 when the call does the other thing.
    #[arg(long, value_name = "releases|holds")]
    pub expect: Option<String>,

    /// Rounds per arm (the call and each control), interleaved.
    #[arg(long, value_name = "N")]
    pub rounds: Option<u32>,

    /// Length of one round of one arm.
    #[arg(long, value_name = "MS")]
    pub round_ms: Option<u32>,

    /// Also measure calls/s on N threads and on N processes, for each N.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub scale: Vec<u32>,

    /// The stage table: probe the setup once per stage, the stage's name
    /// given as its first argument (--setup minilmstages:stage --stage
    /// tokenize,to_numpy,forward,tolist,dumps), then each stage's ms,
    /// share, releases or holds, the held share and the ceilings.
    #[arg(long, value_delimiter = ',', value_name = "NAME,NAME,...")]
    pub stage: Vec<String>,

    /// auto (schedstat where the kernel has it; sampled on macOS and with
    /// --witness portable; iterations with --witness off), schedstat,
    /// iterations (the lost-iteration fallback), or sampled (the spinner's
    /// run state sampled from outside: the portable witness).
    #[arg(
        long,
        default_value = "auto",
        value_name = "auto|schedstat|iterations|sampled"
    )]
    pub instrument: String,

    #[command(flatten)]
    pub out: JsonArgs,

    /// How long to wait for a gate running on this machine (they take turns).
    #[arg(long, default_value_t = Limits::DEFAULT_MACHINE_WAIT_MS, value_name = "MS")]
    pub machine_wait_ms: u64,
}

pub async fn run(session: &Session, args: &GilProbeArgs) -> Finish {
    let input = GilProbeCommand {
        call: args.call.clone(),
        args: args.args.clone(),
        setup: args.setup.clone(),
        expect: args.expect.clone(),
        rounds: args.rounds,
        round_ms: args.round_ms,
        scale: args.scale.clone(),
        stage: args.stage.clone(),
        instrument: args.instrument.clone(),
        out: args.out.out(),
        machine_wait_ms: args.machine_wait_ms,
    };
    or_unusable(command::run(session, &input, &Std).await)
}
