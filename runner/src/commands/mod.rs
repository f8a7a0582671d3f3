//! One module per subcommand. Each returns a [`Finish`]; `main` turns it
//! into the exit code.

pub mod advise;
pub mod check;
pub mod gate;
pub mod gil_probe;
pub mod list;
pub mod load;
pub mod matrix;
pub mod prepare;
pub mod servers;
pub mod signoff;
pub mod stress;
pub mod sweep;

use runner::exit::Outcome;
use runner::verdict::Verdict;

/// How a command ended.
pub struct Finish {
    pub outcome: Outcome,
    pub verdicts: Vec<Verdict>,
}

impl Finish {
    pub fn verdicts(verdicts: Vec<Verdict>) -> Self {
        Self {
            outcome: Outcome::Verdicts,
            verdicts,
        }
    }

    pub fn ok() -> Self {
        Self::verdicts(Vec::new())
    }
}

/// Prints `message` as an error; the input could not be used.
pub fn unusable(message: &str) -> Finish {
    eprintln!("error: {message}");
    Finish {
        outcome: Outcome::Unusable,
        verdicts: Vec::new(),
    }
}

/// Prepares Python, then runs `jobs` one after another until they finish or
/// SIGINT/SIGTERM stops them (every server stopped first). `on_env` sees the
/// interpreter before the first gate. Ok(Some(signal)) when interrupted;
/// Err with a message when the environment could not be prepared.
pub async fn run_jobs_interruptible(
    project: &runner::host::project::Project,
    python: Option<&std::path::Path>,
    limits: runner::host::limits::Limits,
    jobs: &[runner::gate::session::Job],
    progress: &std::cell::RefCell<runner::gate::session::Progress>,
    emit: &mut dyn FnMut(runner::event::Event<'_>),
    on_env: &mut dyn FnMut(&runner::host::pyenv::PythonEnv),
) -> Result<Option<i32>, String> {
    use runner::event::Event;
    let work = async {
        let env = runner::host::pyenv::prepare(project, python, &mut |p| emit(Event::Env(p)))
            .map_err(|e| e.to_string())?;
        on_env(&env);
        let ctx = runner::gate::GateContext {
            project,
            python: &env,
            limits,
        };
        runner::gate::session::run_jobs(&ctx, jobs, progress, emit).await;
        Ok::<(), String>(())
    };
    match runner::host::signals::until_signal(work).await {
        Ok(Ok(())) => Ok(None),
        Ok(Err(e)) => Err(e),
        Err(signal) => Ok(Some(signal)),
    }
}

/// The note an interrupted run's report carries, from where it was.
pub fn interrupted_note(
    signal: Option<i32>,
    progress: &runner::gate::session::Progress,
) -> Option<runner::report::json::Interrupted> {
    signal.map(|signal| runner::report::json::Interrupted {
        signal: runner::host::signals::name(signal).into(),
        during: progress.current.clone(),
        server_pgid: progress.current_pgid,
    })
}
