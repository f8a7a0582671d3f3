//! The GIL probe: does one Python call release the GIL? No server; a
//! spinner thread, a worker thread running the call, and three controls in
//! the same process, read from the kernel's scheduler accounting.
//!
//! The instrument is `fixtures/gilprobe/gilprobe.py` (pure standard
//! library), run in the interpreter the user names, because the question is
//! about their build of their library. This module owns the Rust side:
//!
//! - [`plan`]: the `gil:` block ([`GilBlock`]) validated into a [`GilPlan`];
//! - [`instrument`]: [`measure`] runs the instrument in its own process
//!   group with a bounded wait and returns a [`GilRun`] (its document, or why
//!   there is none);
//! - [`sampled`]: the portable reading (the spinner's run state sampled
//!   from outside, `--witness portable` and macOS) reduced to round figures;
//! - [`figures`]: the instrument's report reduced to figures;
//! - [`judge()`]: releases / holds / cannot judge, a pure function of the plan
//!   and the run (the rules; their words beside them, the run's own
//!   failures' words in `words.rs`);
//! - [`render()`]: the terminal table;
//! - [`requires`]: the pinned extra packages a probe needs.

pub mod figures;
pub mod instrument;
pub mod judge;
pub mod plan;
pub mod render;
pub mod requires;
pub mod sampled;
pub mod stages;
mod words;

pub use instrument::{
    fixture_dir, measure, GilLimits, GilRun, Instrument, InstrumentReport, RunOutcome,
};
pub use judge::{judge, ArmFigures, GilFigures, GilJudgement, ScaleFigures};
pub use plan::{Expect, GilBlock, GilBounds, GilPlan, InstrumentChoice, PlanError, Target};
pub use render::{render, render_scale};
pub use requires::Requirement;
