//! The measurements a row can run, one module per probe kind. Probes measure
//! and return data; they never print and never decide exit codes.

pub mod census;
pub mod keepalive;
pub mod pair_ratio;
pub mod seeds;
