//! The keepalive-isolation probe (C5): does a slow view on one kept-alive
//! connection hold the others behind it?
//!
//! - `measure.rs`: connections A, B and a fresh C per trial.
//! - `judge.rs`: what the figures mean.
//! - `render.rs`: the terminal table.

pub mod judge;
pub mod measure;
pub mod render;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Probe, ProbeCtx};
use crate::spec::check::{key, ratio_in_range, ErrAt};
use crate::spec::mode::validate_modes;
use crate::spec::{Mode, ModeFile, ServerSettings, SpecError, Trials};
use crate::verdict::{Judged, Stop};

pub use judge::KeepaliveFigures;
pub use measure::KeepaliveRun;

/// The `keepalive-isolation:` block.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepaliveFile {
    /// How long the slow view on connection A sleeps (S).
    pub slow_ms: u64,
    /// How long after A's request the fast request goes out on B.
    pub fast_after_ms: u64,
    /// KiB of fixed work in each fast request (its digest is checked).
    pub fast_kib: u32,
    /// Modes: the ratio is B's latency over S.
    pub modes: BTreeMap<String, ModeFile>,
    /// Under test: B's warm-up request (before any slow view) over S.
    pub warmup_at_most: f64,
    /// Under test: A's slow reply arrives whole in about S.
    pub slow_at_least: f64,
    pub slow_at_most: f64,
    /// Under test: a third, fresh connection opened while A is busy, over S.
    pub third_at_most: f64,
    pub margin: f64,
    /// The slow view: `{ms}` and `{id}` are filled in per request.
    #[serde(default = "default_slow_route")]
    pub slow_route: String,
    /// What the slow view answers, `{id}` filled in: proves the reply on A
    /// answers A's own request.
    #[serde(default = "default_slow_reply")]
    pub slow_reply: String,
    /// The fast view: a fixed-work route; `kib` and `seed` are added and the
    /// reply's digest is checked.
    #[serde(default = "default_fast_route")]
    pub fast_route: String,
    /// Optional: the fixture to serve, a folder of fixtures/ with bareapp's
    /// `/slow` and `/work` (`asgiapp`, its ASGI twin); fixtures/bareapp
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
}

fn default_slow_route() -> String {
    "/slow?ms={ms}&id={id}".into()
}

fn default_slow_reply() -> String {
    "slept id={id}".into()
}

fn default_fast_route() -> String {
    "/work?mode=release".into()
}

/// A validated keepalive-isolation measurement.
#[derive(Debug, Clone, Serialize)]
pub struct KeepalivePlan {
    pub slow_ms: u64,
    pub fast_after_ms: u64,
    pub fast_kib: u32,
    pub under_test: Mode,
    pub control: Mode,
    pub warmup_at_most: f64,
    pub slow_at_least: f64,
    pub slow_at_most: f64,
    pub third_at_most: f64,
    pub margin: f64,
    pub slow_route: String,
    pub slow_reply: String,
    pub fast_route: String,
    /// The fixture served (None: fixtures/bareapp).
    pub app: Option<String>,
}

impl KeepalivePlan {
    /// The slow request of trial `id`.
    pub fn slow_url(&self, id: u64) -> String {
        self.slow_route
            .replace("{ms}", &self.slow_ms.to_string())
            .replace("{id}", &id.to_string())
    }

    /// The reply the slow request of trial `id` must get.
    pub fn slow_reply_for(&self, id: u64) -> String {
        self.slow_reply.replace("{id}", &id.to_string())
    }
}

/// The keepalive-isolation kind.
pub struct KeepaliveIsolation;

impl Probe for KeepaliveIsolation {
    type Block = KeepaliveFile;
    type Plan = KeepalivePlan;
    type Run = KeepaliveRun;
    type Figures = KeepaliveFigures;

    const LEGEND: &'static str =
        "keepalive-isolation cells: B's latency over S, worst under test / best control \
         (about 0 is isolated, about 1 pinned behind the slow view)";

    fn validate(
        block: &KeepaliveFile,
        at: &[&str],
        row_server: &ServerSettings,
        err: &ErrAt<'_>,
    ) -> Result<KeepalivePlan, SpecError> {
        if !(50..=60_000).contains(&block.slow_ms) {
            return Err(err(
                &key(at, "slow_ms"),
                format!("is {}; it must be between 50 and 60000", block.slow_ms),
            ));
        }
        if block.fast_after_ms >= block.slow_ms / 2 {
            return Err(err(
                &key(at, "fast_after_ms"),
                format!(
                    "is {}; it must be under half of slow_ms ({})",
                    block.fast_after_ms, block.slow_ms
                ),
            ));
        }
        if block.fast_kib == 0 || block.fast_kib % 64 != 0 || block.fast_kib > 1 << 16 {
            return Err(err(
                &key(at, "fast_kib"),
                format!(
                    "is {}; it must be a multiple of 64 between 64 and 65536",
                    block.fast_kib
                ),
            ));
        }
        for (k, v) in [
            ("warmup_at_most", block.warmup_at_most),
            ("slow_at_least", block.slow_at_least),
            ("slow_at_most", block.slow_at_most),
            ("third_at_most", block.third_at_most),
            ("margin", block.margin),
        ] {
            ratio_in_range(&key(at, k), v, err)?;
        }
        if block.slow_at_least > block.slow_at_most {
            return Err(err(
                &key(at, "slow_at_least"),
                "is above slow_at_most".into(),
            ));
        }
        for (k, v) in [
            ("slow_route", &block.slow_route),
            ("fast_route", &block.fast_route),
        ] {
            if !v.starts_with('/') || v.contains(char::is_whitespace) {
                return Err(err(
                    &key(at, k),
                    format!("{v:?} must be a route starting with / and without spaces"),
                ));
            }
        }
        if !block.slow_route.contains("{id}") || !block.slow_reply.contains("{id}") {
            return Err(err(
                &key(at, "slow_reply"),
                "slow_route and slow_reply must both carry {id}, so a reply is matched to its request".into(),
            ));
        }
        let (under_test, control) = validate_modes(
            "keepalive-isolation",
            at,
            &block.modes,
            row_server,
            false,
            false,
            err,
        )?;
        Ok(KeepalivePlan {
            slow_ms: block.slow_ms,
            fast_after_ms: block.fast_after_ms,
            fast_kib: block.fast_kib,
            under_test,
            control,
            warmup_at_most: block.warmup_at_most,
            slow_at_least: block.slow_at_least,
            slow_at_most: block.slow_at_most,
            third_at_most: block.third_at_most,
            margin: block.margin,
            slow_route: block.slow_route.clone(),
            slow_reply: block.slow_reply.clone(),
            fast_route: block.fast_route.clone(),
            app: super::work_app(block.app.as_ref(), at, err)?,
        })
    }

    fn servers(plan: &KeepalivePlan, _: &ServerSettings) -> Vec<ServerSettings> {
        vec![plan.under_test.server.clone(), plan.control.server.clone()]
    }

    fn app(plan: &KeepalivePlan) -> Option<String> {
        plan.app.clone()
    }

    async fn measure(plan: &KeepalivePlan, ctx: &mut ProbeCtx<'_>) -> Result<KeepaliveRun, Stop> {
        let under_test = ctx.server(&plan.under_test.server).await?;
        let control = ctx.server(&plan.control.server).await?;
        let trials = ctx.trials;
        Ok(measure::run(
            [under_test.addr, control.addr],
            plan,
            trials,
            ctx.limits,
            &|run| judge::judge(plan, run).settled(),
            &mut *ctx.emit,
        )
        .await)
    }

    fn judge(plan: &KeepalivePlan, _: Trials, run: &KeepaliveRun) -> Judged<KeepaliveFigures> {
        judge::judge(plan, run)
    }

    fn render(figures: &KeepaliveFigures, out: &mut String) {
        render::table(figures, out)
    }

    fn numbers(f: &KeepaliveFigures) -> Vec<(String, f64)> {
        vec![
            ("slow_ms".to_string(), f.slow_ms as f64),
            ("under_test_ratio".to_string(), f.under_test_ratio),
            ("control_ratio".to_string(), f.control_ratio),
            ("trials".to_string(), f.trials.into()),
        ]
    }
}
