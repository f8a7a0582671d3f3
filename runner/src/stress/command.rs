//! `runner stress ROW --runs N`: the same gate N times under an optional
//! background load ([`super::run`]), a line per run as it ends, then the
//! verdict distribution and the spread of every figure. With an expected
//! verdict, any run reaching the opposite one makes it a failure.

use super::summary::{self, figures_of};
use super::StressPlan;
use crate::console::{Console, JsonOut};
use crate::exit::Finish;
use crate::gate::input::RunPlan;
use crate::gate::result::GateResult;
use crate::kernel::noise::Noise;
use crate::session::Session;
use crate::verdict::Verdict;

/// What `runner stress` is asked.
pub struct StressCommand {
    /// The row: an id or a path to a row file.
    pub row: String,
    pub runs: u32,
    /// The server's name or profile path.
    pub server: String,
    pub noise: Noise,
    /// The verdict the row should get here.
    pub expect: Option<Verdict>,
    pub out: JsonOut,
    pub run: RunPlan,
}

impl StressCommand {
    /// Checks what the flags' own parsers cannot.
    fn check(&self) -> Result<(), String> {
        self.out.check()?;
        if !(1..=10_000).contains(&self.runs) {
            return Err(format!(
                "--runs {}: use a number from 1 to 10000",
                self.runs
            ));
        }
        Ok(())
    }
}

pub async fn run(
    session: &Session,
    asked: &StressCommand,
    console: &dyn Console,
) -> Result<Finish, String> {
    asked.check()?;
    let (rows, profile) = crate::spec::row::rows_and_profile(
        session.project(),
        std::slice::from_ref(&asked.row),
        &asked.server,
    )?;
    let Some(mut row) = rows.into_iter().next() else {
        return Err(format!("no row {:?}", asked.row));
    };
    asked.run.apply(&mut row);
    let plan = StressPlan {
        row,
        profile,
        noise: asked.noise,
        expect: asked.expect,
        runs: asked.runs,
        limits: asked.run.limits,
    };
    let mut done = 0u32;
    let mut on_run = |r: &GateResult| {
        done += 1;
        console.note(&run_line(done, plan.runs, r));
    };
    let stressed = super::run(session, &plan, &mut on_run).await?;
    asked
        .out
        .answer(console, &stressed.summary, summary::render)?;
    let verdicts = if stressed.summary.wrong > 0 {
        vec![Verdict::Fail]
    } else {
        Vec::new()
    };
    Ok(Finish::ended(stressed.signal, verdicts))
}

/// One run's line: its verdict, time, and its ratios (a pass) or reason.
fn run_line(done: u32, runs: u32, r: &GateResult) -> String {
    let figures = figures_of(r)
        .iter()
        .filter(|(k, _)| k.ends_with("ratio") || k.as_str() == "capacity")
        .map(|(k, x)| format!("{k} {x:.2}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "run {done}/{runs}: {:<14} {:>6.1} s  {}",
        r.verdict().label(),
        r.elapsed_ms / 1000.0,
        if r.verdict() == Verdict::Pass {
            figures
        } else {
            r.judgement.reason.chars().take(160).collect()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_runs_out_of_range_is_refused_naming_the_flag() {
        let asked = |runs| StressCommand {
            row: "E19".into(),
            runs,
            server: "granian".into(),
            noise: Noise::None,
            expect: None,
            out: JsonOut::default(),
            run: crate::gate::input::RunInput {
                trials: None,
                request_timeout_ms: 30_000,
                machine_wait_ms: 1000,
            }
            .plan()
            .unwrap(),
        };
        assert!(asked(3).check().is_ok());
        // Its twin: none, or too many, is refused.
        assert!(asked(0).check().unwrap_err().starts_with("--runs 0"));
        assert!(asked(10_001).check().is_err());
    }
}
