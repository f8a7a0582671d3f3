//! The registry of probe kinds: the one list, at the bottom of this file,
//! from which the row file's shape (`probe:` and one block per kind), the
//! plan, run and figures enums (tagged by `kind` in every report) and the
//! dispatch to each kind's [`Probe`] impl are generated. Adding a kind is
//! one line there; nothing else here enumerates kinds.
//!
//! A declarative macro rather than a proc-macro crate or `dyn Probe`: the
//! kinds' associated types differ (block, plan, run, figures), which trait
//! objects cannot carry, and the list is short enough to read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Probe, ProbeCtx};
use crate::spec::check::ErrAt;
use crate::spec::{ServerSettings, SpecError, Trials};
use crate::verdict::{Judged, Stop};

/// A judgement over any kind's figures: what a gate result carries.
pub type Judgement = Judged<Figures>;

macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal => $field:ident : $ty:path ),* $(,)?) => {
        /// Which measurement a row runs; the row's block of the same name
        /// holds its parameters.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
        pub enum ProbeKind {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl ProbeKind {
            pub const ALL: &'static [ProbeKind] = &[$(ProbeKind::$variant),*];

            /// The name in rows (`probe: pair-ratio`) and reports.
            pub fn name(self) -> &'static str {
                match self { $( ProbeKind::$variant => $name, )* }
            }

            /// What a matrix cell's figure means for this kind.
            pub fn legend(self) -> &'static str {
                match self { $( ProbeKind::$variant => <$ty as Probe>::LEGEND, )* }
            }
        }

        /// A row as written in its YAML file.
        #[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct RowFile {
            pub id: String,
            pub title: String,
            pub claim: String,
            pub probe: ProbeKind,
            #[serde(default)]
            pub server: ServerSettings,
            pub trials: Trials,
            $(
                #[serde(rename = $name, default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<<$ty as Probe>::Block>,
            )*
        }

        /// The probe-specific part of a validated row.
        #[derive(Debug, Clone, Serialize)]
        #[serde(tag = "kind")]
        pub enum Plan {
            $( #[serde(rename = $name)] $variant(<$ty as Probe>::Plan), )*
        }

        /// What a probe measured, by kind.
        #[derive(Debug, Clone, Serialize, JsonSchema)]
        #[serde(tag = "kind")]
        pub enum ProbeRun {
            $( #[serde(rename = $name)] $variant(Box<<$ty as Probe>::Run>), )*
        }

        /// The judged figures, by kind.
        #[derive(Debug, Clone, Serialize, JsonSchema)]
        #[serde(tag = "kind")]
        pub enum Figures {
            $( #[serde(rename = $name)] $variant(Box<<$ty as Probe>::Figures>), )*
        }

        impl Plan {
            pub fn kind(&self) -> ProbeKind {
                match self { $( Plan::$variant(_) => ProbeKind::$variant, )* }
            }

            /// The server settings the plan runs on (none for a probe of a
            /// Python call alone), mode under test first.
            pub fn servers(&self, row_server: &ServerSettings) -> Vec<ServerSettings> {
                match self { $( Plan::$variant(p) => <$ty as Probe>::servers(p, row_server), )* }
            }

            /// Extra Python packages the plan needs, pinned.
            pub fn requires(&self) -> Vec<crate::host::requires::Requirement> {
                match self { $( Plan::$variant(p) => <$ty as Probe>::requires(p), )* }
            }

            /// The fixture app the plan serves (None: the project's app).
            pub fn app(&self) -> Option<String> {
                match self { $( Plan::$variant(p) => <$ty as Probe>::app(p), )* }
            }

            /// Measures and judges; the judgement is concluded (the budget
            /// is spent or the figures settled).
            pub async fn run(&self, ctx: &mut ProbeCtx<'_>) -> Result<(Judgement, ProbeRun), Stop> {
                match self {
                    $( Plan::$variant(p) => {
                        let run = <$ty as Probe>::measure(p, ctx).await?;
                        let judged = <$ty as Probe>::judge(p, ctx.trials, &run)
                            .concluded()
                            .map(|f| Figures::$variant(Box::new(f)));
                        Ok((judged, ProbeRun::$variant(Box::new(run))))
                    } )*
                }
            }
        }

        impl Figures {
            pub fn kind(&self) -> ProbeKind {
                match self { $( Figures::$variant(_) => ProbeKind::$variant, )* }
            }

            /// The figures as the lines of a terminal table.
            pub fn render(&self, out: &mut String) {
                match self { $( Figures::$variant(f) => <$ty as Probe>::render(f, out), )* }
            }

            /// The figures worth a spread across runs, by name.
            pub fn numbers(&self) -> Vec<(String, f64)> {
                match self { $( Figures::$variant(f) => <$ty as Probe>::numbers(f), )* }
            }
        }

        /// The row's block for its `probe:`, validated; a block for another
        /// kind, or none for its own, is an error naming the key.
        pub fn validate_block(raw: &RowFile, err: &ErrAt<'_>) -> Result<Plan, SpecError> {
            $(
                if raw.$field.is_some() && raw.probe != ProbeKind::$variant {
                    return Err(err(
                        &[$name],
                        format!(
                            "is a {} block, but the row's probe is {}; remove it or change `probe`",
                            $name,
                            raw.probe.name()
                        ),
                    ));
                }
            )*
            let missing = || {
                err(
                    &["probe"],
                    format!("is {0} but the row has no `{0}:` block", raw.probe.name()),
                )
            };
            match raw.probe {
                $( ProbeKind::$variant => {
                    let block = raw.$field.as_ref().ok_or_else(missing)?;
                    Ok(Plan::$variant(<$ty as Probe>::validate(block, &[$name], &raw.server, err)?))
                } )*
            }
        }
    };
}

registry! {
    /// One request, then two at once on two connections, per mode (E19).
    PairRatio = "pair-ratio" => pair_ratio: super::pair_ratio::PairRatio,
    /// A slow view on one kept-alive connection, a fast one on another (C5).
    KeepaliveIsolation = "keepalive-isolation" => keepalive_isolation: super::keepalive::KeepaliveIsolation,
    /// Which workers serve, and whether each one's runtime really runs (E15).
    WorkerCensus = "worker-census" => worker_census: super::census::WorkerCensus,
    /// Does a Python call release the GIL? No server (the controls and the
    /// libzim search row).
    GilProbe = "gil-probe" => gil_probe: super::gil::GilProbe,
}
