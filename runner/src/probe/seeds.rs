//! Per-request seeds for `/work`: distinct for every request of a run, so no
//! response cache can answer for the work. Not cryptographic; splitmix64
//! seeded from the clock and the process id.

use std::time::{SystemTime, UNIX_EPOCH};

pub struct Seeds(u64);

impl Seeds {
    pub fn new() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Self(nanos ^ (u64::from(std::process::id()) << 32))
    }
}

impl Default for Seeds {
    fn default() -> Self {
        Self::new()
    }
}

impl Iterator for Seeds {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Some(z ^ (z >> 31))
    }
}
