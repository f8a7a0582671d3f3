//! The trial budget every row carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The trial budget: at least `min`, then more while the verdict is
/// ambiguous, up to `max`; still ambiguous at `max` means "cannot judge".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    pub min: u32,
    pub max: u32,
}
