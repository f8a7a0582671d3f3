//! The worker-census probe (E15): which worker processes serve, does the
//! app's runtime really run in each, and (where the row asks) does a
//! GIL-holding view run in parallel across them.
//!
//! - `measure.rs`: the fork control and the census passes.
//! - `judge.rs`: what the figures mean.
//! - `render.rs`: the terminal table.
//!
//! The cross-process half is a pair-ratio measurement, run through that
//! kind's own [`Probe`] impl.

pub mod judge;
pub mod measure;
pub mod render;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::pair_ratio::measure::busy_request;
use super::pair_ratio::{PairRatio, PairRatioFile, PairRatioPlan};
use super::{Probe, ProbeCtx};
use crate::host::requires::Requirement;
use crate::kernel::portable;
use crate::kernel::pss::PeakTracker;
use crate::spec::check::{int_in_range, key, ErrAt};
use crate::spec::{ServerSettings, SpecError, Trials};
use crate::verdict::{Judged, Stop};

pub use judge::CensusFigures;
pub use measure::CensusRun;

/// The `worker-census:` block.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CensusFile {
    /// The route that reports whether this worker's runtime runs.
    pub runtime_path: String,
    /// Census requests, spread over fresh connections.
    pub requests: u32,
    /// Distinct worker pids the census must see.
    pub workers_at_least: u32,
    /// The most connections opened to find two distinct workers for a pair.
    pub connections_at_most: u32,
    /// Optional: the same work in parallel across processes.
    #[serde(rename = "pair-ratio")]
    pub pair_ratio: Option<PairRatioFile>,
    /// Optional: the fixture app to serve, a folder of fixtures/ holding
    /// app.py, the `runtime_path` route and forkcheck.py (`modelapp`);
    /// fixtures/bareapp without it.
    #[serde(default)]
    pub app: Option<String>,
    /// Extra Python packages the app needs, pinned `NAME==VERSION`
    /// (optionally ` --no-deps`); `runner prepare --rows all` installs them,
    /// and without them the row is not applicable.
    #[serde(default)]
    pub requires: Vec<String>,
}

/// A validated worker census.
#[derive(Debug, Clone, Serialize)]
pub struct CensusPlan {
    pub runtime_path: String,
    pub requests: u32,
    pub workers_at_least: u32,
    pub connections_at_most: u32,
    pub pair_ratio: Option<PairRatioPlan>,
    pub app: Option<String>,
    pub requires: Vec<Requirement>,
}

/// The worker-census kind.
pub struct WorkerCensus;

impl Probe for WorkerCensus {
    type Block = CensusFile;
    type Plan = CensusPlan;
    type Run = CensusRun;
    type Figures = CensusFigures;

    const LEGEND: &'static str =
        "worker-census cells: workers seen, then the cross-process pair ratios \
         (mode under test / control)";

    fn validate(
        block: &CensusFile,
        at: &[&str],
        row_server: &ServerSettings,
        err: &ErrAt<'_>,
    ) -> Result<CensusPlan, SpecError> {
        if !block.runtime_path.starts_with('/') {
            return Err(err(
                &key(at, "runtime_path"),
                format!("{:?} must start with /", block.runtime_path),
            ));
        }
        int_in_range(&key(at, "requests"), block.requests, 1..=1000, err)?;
        let workers = row_server.workers.unwrap_or(1);
        if block.workers_at_least < 2 || block.workers_at_least > workers {
            return Err(err(
                &key(at, "workers_at_least"),
                format!(
                    "is {}; it must be at least 2 and at most the row's server.workers ({workers})",
                    block.workers_at_least
                ),
            ));
        }
        int_in_range(
            &key(at, "connections_at_most"),
            block.connections_at_most,
            2..=256,
            err,
        )?;
        let pair_ratio = match &block.pair_ratio {
            Some(p) if p.app.is_some() => {
                return Err(err(
                    &key(&key(at, "pair-ratio"), "app"),
                    "the census serves its own `app:` (set it on the worker-census block)".into(),
                ))
            }
            Some(p) => {
                let mut plan = PairRatio::validate(p, &key(at, "pair-ratio"), row_server, err)?;
                plan.connections_at_most = block.connections_at_most;
                Some(plan)
            }
            None => None,
        };
        if let Some(app) = &block.app {
            let plain = !app.is_empty()
                && app
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !plain {
                return Err(err(
                    &key(at, "app"),
                    format!("{app:?} must name a folder of fixtures/ (letters, digits, _ and -), such as modelapp"),
                ));
            }
            if pair_ratio.is_some() && !super::WORK_APPS.contains(&app.as_str()) {
                return Err(err(
                    &key(at, "pair-ratio"),
                    format!(
                        "needs bareapp's /work route and capacity control ({}); app {app:?} has neither",
                        super::WORK_APPS.join(", ")
                    ),
                ));
            }
        }
        let mut requires = Vec::with_capacity(block.requires.len());
        for r in &block.requires {
            requires.push(Requirement::parse(r).map_err(|m| err(&key(at, "requires"), m))?);
        }
        Ok(CensusPlan {
            runtime_path: block.runtime_path.clone(),
            app: block.app.clone(),
            requires,
            requests: block.requests,
            workers_at_least: block.workers_at_least,
            connections_at_most: block.connections_at_most,
            pair_ratio,
        })
    }

    fn servers(plan: &CensusPlan, row_server: &ServerSettings) -> Vec<ServerSettings> {
        let mut out = vec![row_server.clone()];
        if let Some(p) = &plan.pair_ratio {
            for s in PairRatio::servers(p, row_server) {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    async fn measure(plan: &CensusPlan, ctx: &mut ProbeCtx<'_>) -> Result<CensusRun, Stop> {
        super::require_installed(&ctx.python.python, &plan.requires)?;
        let target = ctx.server(ctx.row_server).await?;
        let mut pss = PeakTracker::default();
        pss.sample(target.pgid);
        let fork_control = measure::fork_control(&ctx.python.python, &ctx.app_dir).await;
        let up_bound = measure::workers_up_bound(target.ready_after);
        let reach = measure::Reach {
            addr: target.addr,
            workers: target.workers,
            busy: plan
                .pair_ratio
                .as_ref()
                .map(|p| busy_request(&p.under_test.path, p.work_kib)),
            limits: ctx.limits,
        };
        let workers_up_ms =
            measure::await_workers(&reach, &plan.runtime_path, plan.workers_at_least, up_bound)
                .await;
        let members_at_start = portable::group_members(target.pgid);
        let before = measure::census(&reach, &plan.runtime_path, plan.requests).await;
        pss.sample(target.pgid);
        let pair_ratio = match &plan.pair_ratio {
            Some(p) => Some(PairRatio::measure(p, ctx).await?),
            None => None,
        };
        pss.sample(target.pgid);
        let after = measure::census(&reach, &plan.runtime_path, plan.requests).await;
        pss.sample(target.pgid);
        Ok(CensusRun {
            fork_control,
            pss: pss.finish(),
            workers_up_ms,
            workers_up_bound_ms: up_bound.as_millis() as u64,
            members_at_start,
            before,
            after,
            pair_ratio,
        })
    }

    fn judge(plan: &CensusPlan, trials: Trials, run: &CensusRun) -> Judged<CensusFigures> {
        judge::judge(plan, trials, run)
    }

    fn render(figures: &CensusFigures, out: &mut String) {
        render::table(figures, out)
    }

    fn numbers(f: &CensusFigures) -> Vec<(String, f64)> {
        let mut out = vec![("replies".to_string(), f.replies as f64)];
        out.extend(
            f.workers_up_ms
                .map(|ms| ("workers_up_ms".to_string(), ms as f64)),
        );
        out
    }

    fn requires(plan: &CensusPlan) -> Vec<Requirement> {
        plan.requires.clone()
    }

    fn app(plan: &CensusPlan) -> Option<String> {
        plan.app.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::spec::row::parse_row;

    const ROW: &str = "id: E15-x\ntitle: t\nclaim: c\nprobe: worker-census\nserver: {workers: 2, threads: 1, preload: false}\ntrials: {min: 1, max: 1}\nworker-census:\n  app: modelapp\n  runtime_path: /runtime\n  requests: 4\n  workers_at_least: 2\n  connections_at_most: 8\n  requires: [tokenizers==0.23.3]\n";

    #[test]
    fn a_census_serves_the_named_fixture_app_with_its_pins() {
        let row = parse_row(Path::new("E15-x.yaml"), ROW).unwrap();
        assert_eq!(row.plan.app().as_deref(), Some("modelapp"));
        assert_eq!(row.plan.requires()[0].pin(), "tokenizers==0.23.3");
    }

    #[test]
    fn an_app_that_is_a_path_a_loose_pin_or_a_pair_ratio_off_bareapp_is_refused() {
        for (from, to, key) in [
            ("app: modelapp", "app: ../modelapp", "worker-census.app"),
            ("tokenizers==0.23.3", "tokenizers", "worker-census.requires"),
            (
                "  requires: [tokenizers==0.23.3]\n",
                "  pair-ratio: {work_kib: 1, modes: {}}\n",
                "worker-census.pair-ratio",
            ),
        ] {
            let e = parse_row(Path::new("E15-x.yaml"), &ROW.replace(from, to))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{to}: {e}");
        }
    }
}
