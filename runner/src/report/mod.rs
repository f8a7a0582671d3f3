//! Reporters: they consume engine events and results and own all output.

pub mod bundle;
pub mod commands;
pub mod export;
pub mod fingerprint;

pub mod json;
pub mod listing;
pub mod matrix;
pub mod merge;
pub mod terminal;
