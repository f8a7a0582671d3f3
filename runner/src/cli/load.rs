//! The flags of `runner load`; the run is `runner::sweep::load_once`.

use clap::Args;

use runner::host::limits::Limits;
use runner::sweep::input::{DEFAULT_CONNECTIONS, DEFAULT_DURATION, DEFAULT_PATH};
use runner::sweep::load_once::{self, LoadCommand};

use super::args::{sweep_flag, JsonArgs};
use super::console::Std;
use super::{or_unusable, Finish};

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The server: a loopback address and port (127.0.0.1:8000).
    #[arg(long, value_name = "IP:PORT")]
    pub addr: String,

    /// The route to load. `/work` is taken to be the fixture's (a fresh seed
    /// per request, every digest checked) unless --no-digest.
    #[arg(
        long,
        default_value = DEFAULT_PATH,
        value_name = "PATH"
    )]
    pub path: String,

    /// Check status and body length only, for a `/work` that is not the
    /// fixture's.
    #[arg(long)]
    pub no_digest: bool,

    #[arg(long, default_value_t = DEFAULT_CONNECTIONS, value_name = "N")]
    pub connections: u32,

    #[arg(long, default_value = DEFAULT_DURATION, value_name = "TIME")]
    pub duration: String,

    #[arg(long, default_value = "0s", value_name = "TIME")]
    pub warmup: String,

    /// Bound on any one request (and on opening a connection).
    #[arg(long, default_value_t = Limits::DEFAULT_REQUEST_MS, value_name = "MS")]
    pub request_timeout_ms: u64,

    #[command(flatten)]
    pub out: JsonArgs,
}

pub async fn run(args: &LoadArgs) -> Finish {
    let input = LoadCommand {
        addr: args.addr.clone(),
        path: args.path.clone(),
        no_digest: args.no_digest,
        connections: args.connections,
        duration: args.duration.clone(),
        warmup: args.warmup.clone(),
        request_timeout_ms: args.request_timeout_ms,
        out: args.out.out(),
        name: |e| e.named(sweep_flag(e.field)),
    };
    or_unusable(load_once::run(&input, &Std).await)
}
