//! Running the instrument: `fixtures/gilprobe/gilprobe.py` in the
//! interpreter the user names, in its own process group, with every wait
//! bounded, and its one JSON document read back as data.
//!
//! The interpreter is the user's (the question is about their build of
//! their library), so everything it says is untrusted: output is capped, an
//! unparsable document is a [`RunOutcome::BadOutput`], a crash or a hang is
//! an outcome too, never a panic. Nothing here decides a verdict; that is
//! [`mod@super::judge`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::plan::GilPlan;
use crate::host::bounded::{self, CommandBounds};

/// The most stdout we keep: the document is a few tens of KiB.
const STDOUT_CAP: usize = 8 * 1024 * 1024;
/// The most stderr we keep (its tail): enough for a traceback.
const STDERR_CAP: usize = 16 * 1024;

/// How long the instrument may run, and how it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GilLimits {
    /// The whole run: interpreter start, setup, rounds, scale.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL for the instrument's process group.
    pub grace: Duration,
}

impl GilLimits {
    /// A setup may build an index (zimsearch writes a ZIM): this much on
    /// top of the rounds themselves.
    pub const SETUP_ALLOWANCE: Duration = Duration::from_secs(120);

    /// Generous bounds for `plan`: the rounds three times over (a loaded
    /// machine stretches them), each arm's round allowed one long call past
    /// its end, plus the setup allowance, plus the scale table if asked.
    pub fn for_plan(plan: &GilPlan) -> Self {
        let arms = 5; // the call, three controls, and the fallback's baseline
        let per_round_ms = u64::from(plan.round_ms) + 1_000;
        let rounds_ms = u64::from(plan.max_rounds()) * arms * per_round_ms * 3;
        let scale_ms = plan.scale.iter().map(|n| u64::from(*n)).sum::<u64>() * 60_000;
        Self {
            timeout: Self::SETUP_ALLOWANCE + Duration::from_millis(rounds_ms + scale_ms),
            grace: Duration::from_millis(500),
        }
    }
}

/// Which reading the instrument used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Instrument {
    /// The spinner's blocked share from `/proc/self/task/TID/schedstat`.
    Schedstat,
    /// The spinner's lost iterations against interleaved baseline rounds.
    Iterations,
    /// The spinner's blocked share from its run state sampled from outside
    /// (the portable witness: `--witness portable`, and macOS).
    Sampled,
}

impl Instrument {
    /// The reading's name in tables and headlines.
    pub fn reading(self) -> &'static str {
        match self {
            Instrument::Schedstat | Instrument::Sampled => "blocked",
            Instrument::Iterations => "lost",
        }
    }
}

/// The interpreter that ran the probe, as it describes itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct PythonFacts {
    pub version: String,
    pub implementation: String,
    pub executable: String,
    pub platform: String,
    pub machine: String,
    /// False on a free-threaded build running without the GIL.
    pub gil_enabled: Option<bool>,
    pub switch_interval_s: Option<f64>,
}

/// The call as the instrument resolved it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CallFacts {
    pub call: Option<String>,
    pub setup: Option<String>,
    pub args: Vec<String>,
    /// `repr` of the callable (after setup).
    pub callable: Option<String>,
    pub resolved_args: Option<String>,
}

/// One arm in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundFigure {
    pub round: u32,
    /// `call`, `releases`, `holds-half`, `holds-all` or `baseline`.
    pub arm: String,
    /// Where in the round's order this arm ran (the order rotates).
    pub position: u32,
    pub wall_s: f64,
    pub calls: u64,
    /// Time inside the call over the round, the timer's own cost taken off.
    pub busy: f64,
    pub call_us: Option<f64>,
    /// The process's CPU per call, the spinner's taken off (every thread
    /// the call keeps busy). Schedstat only.
    #[serde(default)]
    pub cpu_us: Option<f64>,
    pub calls_per_s: f64,
    pub iterations: u64,
    pub iterations_per_s: f64,
    /// The spinner asleep (waiting for the GIL), as a share of the time it
    /// was not waiting for a core. Schedstat only.
    pub blocked: Option<f64>,
    /// The spinner asleep as a share of the whole round.
    #[serde(default)]
    pub blocked_of_wall: Option<f64>,
    /// The spinner on the run queue (waiting for a core), share of the round.
    pub runqueue: Option<f64>,
    pub oncpu: Option<f64>,
    /// 1 - the spinner's iteration rate over the baseline round's rate.
    /// Iterations only.
    pub loss: Option<f64>,
    /// False when a boundary sample caught the spinner queued for a core
    /// (its wait not yet in schedstat): such a round has no reading.
    #[serde(default)]
    pub settled: Option<bool>,
    /// The round's edges on the instrument's perf_counter clock, s: where
    /// the sampled reading (`sampled.rs`) reads the spinner.
    #[serde(default)]
    pub t0: Option<f64>,
    #[serde(default)]
    pub t1: Option<f64>,
}

/// Something the instrument reports instead of figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeErrorInfo {
    /// `import`, `args`, `setup`, `call`, `control`, `scale` or `instrument`.
    #[serde(rename = "where")]
    pub place: String,
    /// The Python exception type.
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    pub arm: Option<String>,
    pub traceback: Option<String>,
}

/// One worker count of the scale table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleRow {
    pub workers: u32,
    pub threads_calls_per_s: Vec<Option<f64>>,
    pub processes_calls_per_s: Vec<Option<f64>>,
    /// The capacity control: Python bytecode in N processes, per rep.
    #[serde(default)]
    pub capacity_calls_per_s: Vec<Option<f64>>,
    pub threads_median: Option<f64>,
    pub processes_median: Option<f64>,
    /// Peak PSS over reps, KiB: the probe's process (it holds every thread
    /// pool at once, so an upper bound for N threads) ...
    #[serde(default)]
    pub threads_pss_kib: Option<u64>,
    /// ... and the N spawned processes summed.
    #[serde(default)]
    pub processes_pss_kib: Option<u64>,
}

/// Calls/s on N threads and N processes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScaleReport {
    pub start_method: String,
    pub calls_per_worker: u64,
    pub single_call_us: f64,
    pub reps: u32,
    pub rows: Vec<ScaleRow>,
}

/// The call alone, timed before the spinner starts (the instrument's
/// spinner makes a call that drops the GIL often wait for it at every
/// return, so the rounds' time per call is the convoy's, not the call's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AloneFigures {
    pub calls: u32,
    /// Median wall per call, µs.
    pub call_us: f64,
    /// Process CPU per call (every thread: a library's own pool counts), µs.
    pub cpu_us: f64,
}

/// The instrument's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InstrumentReport {
    /// The call alone, before the rounds.
    #[serde(default)]
    pub alone: Option<AloneFigures>,
    #[serde(default)]
    pub python: PythonFacts,
    #[serde(default)]
    pub call: CallFacts,
    pub instrument: Option<Instrument>,
    #[serde(default)]
    pub instrument_note: Option<String>,
    /// Each control's arm name and what it runs.
    #[serde(default)]
    pub controls: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub arms: Vec<String>,
    #[serde(default)]
    pub timer_overhead_ns: Option<f64>,
    /// `repr` of the call's first return value (truncated).
    #[serde(default)]
    pub result_sample: Option<String>,
    /// Rounds run per arm: the planned ones plus any extra.
    #[serde(default)]
    pub rounds_run: Option<u32>,
    #[serde(default)]
    pub rounds_figures: Vec<RoundFigure>,
    #[serde(default)]
    pub scale: Option<ScaleReport>,
    #[serde(default)]
    pub error: Option<ProbeErrorInfo>,
    /// Time in the setup (or resolving the call), and in the rounds.
    #[serde(default)]
    pub setup_s: Option<f64>,
    #[serde(default)]
    pub rounds_s: Option<f64>,
    #[serde(default)]
    pub elapsed_s: Option<f64>,
    /// Every thread of the instrument's process after the rounds (Linux;
    /// None elsewhere), and the ones Python started.
    #[serde(default)]
    pub native_threads: Option<u32>,
    #[serde(default)]
    pub python_threads: Option<u32>,
    /// The spinner's id, as the instrument read it.
    #[serde(default)]
    pub spinner_tid: Option<i64>,
    /// The sampled reading's samples, between the run and their reduction
    /// (never in a report).
    #[serde(skip)]
    pub spinner_samples: Option<Vec<crate::kernel::portable::ThreadSample>>,
}

/// How a run of the instrument ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RunOutcome {
    /// It wrote its document (which may carry an `error`).
    Report { report: Box<InstrumentReport> },
    /// The interpreter or the script could not be started.
    CannotStart { problem: String },
    /// It did not finish within the limit; its group was stopped.
    Timeout { limit_ms: u64 },
    /// It ended without a document (a crash, a signal, a bad interpreter).
    Crashed { status: String },
    /// It wrote something that is not the document.
    BadOutput { problem: String },
}

/// One run of the instrument: what ran, how long, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GilRun {
    pub python: PathBuf,
    /// The instrument's arguments after the script path.
    pub argv: Vec<String>,
    pub elapsed_ms: f64,
    pub outcome: RunOutcome,
    /// The last lines the interpreter wrote to stderr (and any native
    /// library to stdout, which the instrument sends there).
    pub stderr_tail: String,
}

impl GilRun {
    /// The document, if there is one.
    pub fn report(&self) -> Option<&InstrumentReport> {
        match &self.outcome {
            RunOutcome::Report { report } => Some(report),
            _ => None,
        }
    }
}

/// The instrument's folder in a checkout.
pub fn fixture_dir(project_root: &Path) -> PathBuf {
    project_root.join("fixtures").join("gilprobe")
}

/// Runs the instrument for `plan` with `python`, from the current folder (so
/// the user's own modules import), and reads its document. A sampled run's
/// samples ride in the document ([`InstrumentReport::spinner_samples`]) for
/// `super::measure` to reduce.
pub async fn measure(
    python: &Path,
    fixture_dir: &Path,
    plan: &GilPlan,
    limits: GilLimits,
) -> GilRun {
    let mut argv = plan.instrument_args();
    let started = Instant::now();
    let sampled = argv.iter().any(|a| a == "--instrument=sampled");
    let tid_file = sampled.then(|| {
        std::env::temp_dir().join(format!(
            "gilprobe-spinner-{}-{}",
            std::process::id(),
            TID_FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ))
    });
    if let Some(path) = &tid_file {
        argv.push(format!("--tid-file={}", path.display()));
    }
    let (outcome, stderr_tail) = run(python, fixture_dir, &argv, limits, tid_file.as_deref()).await;
    if let Some(path) = &tid_file {
        let _ = std::fs::remove_file(path);
    }
    GilRun {
        python: python.to_path_buf(),
        argv,
        elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        outcome,
        stderr_tail,
    }
}

/// Tells one run's spinner-id file from another's.
static TID_FILES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Runs the instrument; with `tid_file`, samples its spinner from outside
/// meanwhile (the samples ride in the report until `measure` reduces them).
async fn run(
    python: &Path,
    fixture_dir: &Path,
    argv: &[String],
    limits: GilLimits,
    tid_file: Option<&Path>,
) -> (RunOutcome, String) {
    let script = fixture_dir.join("gilprobe.py");
    if !script.is_file() {
        return (
            RunOutcome::CannotStart {
                problem: format!(
                    "{} is missing; run from the gates checkout or pass --project-dir",
                    script.display()
                ),
            },
            String::new(),
        );
    }
    let mut command = Command::new(python);
    command
        .arg(&script)
        .args(argv)
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let bound = CommandBounds::new(limits.timeout)
        .with_grace(limits.grace)
        .with_cap(STDOUT_CAP)
        .with_stderr_tail(STDERR_CAP);
    let watched = bounded::run_watched(command, bound, |pid| {
        tid_file.map(|path| crate::kernel::portable::ThreadWatch::start(pid, path.to_path_buf()))
    })
    .await;
    let (finished, watch) = match watched {
        Ok(w) => w,
        Err(e) => {
            return (
                RunOutcome::CannotStart {
                    problem: format!(
                        "cannot run {} ({e}); pass --python PATH to a working interpreter",
                        python.display()
                    ),
                },
                String::new(),
            )
        }
    };
    let stderr_tail = finished.stderr_text().into_owned();
    let Some(status) = finished.status() else {
        return (
            RunOutcome::Timeout {
                limit_ms: limits.timeout.as_millis() as u64,
            },
            stderr_tail,
        );
    };
    let mut outcome = parse(&finished.stdout, Some(status));
    if let (Some(watch), RunOutcome::Report { report }) = (watch, &mut outcome) {
        report.spinner_samples = Some(watch.finish());
    }
    (outcome, stderr_tail)
}

/// The document from stdout, or why there is none.
fn parse(stdout: &[u8], status: Option<std::process::ExitStatus>) -> RunOutcome {
    let text = String::from_utf8_lossy(stdout);
    let Some(line) = text.lines().rev().find(|l| !l.trim().is_empty()) else {
        return RunOutcome::Crashed {
            status: status.map_or("no exit status".into(), describe_status),
        };
    };
    match serde_json::from_str::<InstrumentReport>(line) {
        Ok(report) => RunOutcome::Report {
            report: Box::new(report),
        },
        Err(e) => RunOutcome::BadOutput {
            problem: format!(
                "{e}; the line began {:?}",
                line.chars().take(120).collect::<String>()
            ),
        },
    }
}

fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}{}", signal_name(sig)),
        _ => status.to_string(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => " (SIGSEGV: the call crashed the interpreter?)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGKILL => " (SIGKILL: out of memory?)",
        libc::SIGBUS => " (SIGBUS)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_bad_output_and_silence_is_a_crash() {
        assert!(matches!(
            parse(b"not json\n", None),
            RunOutcome::BadOutput { .. }
        ));
        assert!(matches!(
            parse(b"\xff\xfe{\"python\": 3}\n", None),
            RunOutcome::BadOutput { .. }
        ));
        assert!(matches!(parse(b"", None), RunOutcome::Crashed { .. }));
        // The last non-empty line is the document; noise before it is not.
        let ok = parse(b"noise\n{\"instrument\": null}\n\n", None);
        assert!(matches!(ok, RunOutcome::Report { .. }), "{ok:?}");
    }

    /// Pids whose command line holds `needle`.
    #[cfg(target_os = "linux")]
    fn processes_with(needle: &str) -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(needle))
                    .unwrap_or(false)
            })
            .collect()
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_call_that_never_returns_is_stopped_at_the_limit() {
        use super::super::plan::PyLiteral;
        // A marker no other process has, to find survivors by.
        let marker = "1000.0123456";
        let plan = super::super::GilBlock {
            call: Some("time:sleep".into()),
            args: vec![PyLiteral::Source(marker.into())],
            ..Default::default()
        }
        .validate()
        .unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let limits = GilLimits {
            timeout: Duration::from_millis(1500),
            grace: Duration::from_millis(200),
        };
        let started = Instant::now();
        let run = measure(Path::new("python3"), &fixture_dir(root), &plan, limits).await;
        assert_eq!(run.outcome, RunOutcome::Timeout { limit_ms: 1500 });
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(processes_with(marker), Vec::<i32>::new(), "survivors");
    }

    #[tokio::test]
    async fn a_missing_interpreter_or_script_cannot_start() {
        let plan = super::super::GilBlock {
            call: Some("time:sleep".into()),
            ..Default::default()
        }
        .validate()
        .unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let limits = GilLimits::for_plan(&plan);
        let run = measure(
            Path::new("/nonexistent/python"),
            &fixture_dir(root),
            &plan,
            limits,
        )
        .await;
        assert!(
            matches!(&run.outcome, RunOutcome::CannotStart { problem } if problem.contains("--python")),
            "{run:?}"
        );
        let run = measure(
            Path::new("python3"),
            Path::new("/nonexistent"),
            &plan,
            limits,
        )
        .await;
        assert!(
            matches!(run.outcome, RunOutcome::CannotStart { .. }),
            "{run:?}"
        );
    }

    #[test]
    fn limits_grow_with_the_plan() {
        let small = super::super::GilBlock {
            call: Some("m:f".into()),
            ..Default::default()
        }
        .validate()
        .unwrap();
        let mut big = small.clone();
        big.rounds = 50;
        big.scale = vec![1, 2, 4];
        assert!(GilLimits::for_plan(&big).timeout > GilLimits::for_plan(&small).timeout);
        assert!(GilLimits::for_plan(&small).timeout >= GilLimits::SETUP_ALLOWANCE);
    }
}
