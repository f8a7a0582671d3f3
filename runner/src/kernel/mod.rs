//! What the kernel and the machine say, apart from the clock: the
//! scheduler's per-thread accounting (`schedstat`), the witness figures built
//! from it for one timed pair, the portable reading of the same figures
//! (on-CPU time, sampled run state, host idle: what macOS gives), the
//! capacity control (is a core free for two things at once?), and the
//! background noise `runner stress` starts.

pub mod control;
pub mod noise;
pub mod pairs;
pub mod portable;
pub mod pss;
pub mod quiet;
pub mod schedstat;
pub mod witness;
