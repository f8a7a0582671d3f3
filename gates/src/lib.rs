//! The SPEC rows as `cargo test` trials: one libtest-mimic trial per row and
//! installed server (`E19::granian`), built from specs/ and the server
//! profiles at run time, each running its gate through the `runner`
//! library. `cargo test -p gates` and `cargo nextest run -p gates` run
//! them; README.md ("In CI") says how CI reads the verdicts.

pub mod config;
pub mod discover;
pub mod harness;
pub mod outcome;
pub mod run;
pub mod workflow;
