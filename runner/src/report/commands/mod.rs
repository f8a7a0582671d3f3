//! The commands that run gates and report them: `gate`, `matrix` and
//! `signoff`. Each takes the session, its input (the flags, checked into
//! the engine's types) and the console, and returns how it ended.

pub mod gate;
pub mod matrix;
pub mod signoff;
