//! What the load asks for, and how each reply proves it: the fixture's
//! `/work` gets a fresh seed per request and its SHA-256 digest compared
//! with one computed here; any other route (and every route of a user's own
//! app, whose `/work` is not the fixture's) is checked for status 200 and a
//! body as long as declared, and says the work was not verified.

use std::sync::Mutex;

use crate::digest::WorkDigest;
use crate::input::FieldError;
use crate::probe::seeds::Seeds;

/// Paths longer than this are refused (a typo, not a route).
const MAX_PATH_BYTES: usize = 2048;
/// The fixture's work size bound (`kib` in fixtures/bareapp/app.py).
const MAX_WORK_KIB: u32 = 1 << 20;

/// How a reply is checked.
#[derive(Clone)]
pub enum Check {
    /// The fixture's `/work`: every reply's digest is compared.
    Digest(WorkDigest),
    /// Any other route: status 200 and a body as long as declared.
    StatusAndLength,
}

/// One route under load.
pub struct Route {
    /// As given (`/work?mode=release&kib=8192`), without a seed.
    pub path: String,
    pub check: Check,
    /// Distinct for every request of the load, across connections.
    seeds: Mutex<Seeds>,
}

/// One request: its URL and, for `/work`, the seed in it.
pub struct Request {
    pub url: String,
    pub seed: Option<u64>,
}

impl Route {
    /// Parses a route (`--path`, a sweep row's `paths`). `fixture` says
    /// whether the app is the fixture, whose `/work` digests the runner can
    /// compute. The error names the value, and the caller the field.
    pub fn parse(path: &str, fixture: bool) -> Result<Self, FieldError<()>> {
        let bad = |message: String| FieldError::new((), message).value(format!("{path:?}"));
        if !path.starts_with('/') {
            return Err(bad(
                "give a path on the server, starting with / (the runner picks the address)".into(),
            ));
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(FieldError::new(
                (),
                format!("longer than {MAX_PATH_BYTES} bytes"),
            ));
        }
        if path.contains('#') || path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad(
                "no spaces, control characters or #; percent-encode them".into(),
            ));
        }
        if hyper::Uri::try_from(path).is_err() {
            return Err(bad("not a valid request target".into()));
        }
        let (route, query) = path.split_once('?').unwrap_or((path, ""));
        let check = if fixture && route == "/work" {
            let param = |name: &str| {
                query
                    .split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .filter(|(k, _)| *k == name)
                    .map(|(_, v)| v)
                    .next_back()
            };
            if param("seed").is_some() {
                return Err(bad("leave `seed` out; the runner gives every request its own seed so no cache can answer for the work".into()));
            }
            let kib = param("kib").and_then(|v| v.parse::<u32>().ok());
            let Some(kib) = kib.filter(|k| (1..=MAX_WORK_KIB).contains(k)) else {
                return Err(bad(format!(
                    "/work needs kib=N (1 to {MAX_WORK_KIB}), the KiB each request hashes"
                )));
            };
            let mode = match param("mode") {
                Some(m @ ("release" | "hold")) => m,
                Some("split") if kib % 128 == 0 => "split",
                Some("split") => return Err(bad(
                    "mode=split needs kib a multiple of 128 (two halves of whole 64 KiB buffers)"
                        .into(),
                )),
                _ => {
                    return Err(bad(
                        "/work needs mode=release, mode=hold or mode=split".into()
                    ))
                }
            };
            Check::Digest(WorkDigest::for_mode(mode, kib))
        } else {
            Check::StatusAndLength
        };
        Ok(Self {
            path: path.to_string(),
            check,
            seeds: Mutex::new(Seeds::new()),
        })
    }

    /// Parses `--path` for the model app (fixtures/modelapp), whose `/embed`,
    /// `/embed/hold` and `/embed/nogil` replies carry the embedding's digest.
    pub fn parse_model(path: &str) -> Result<Self, FieldError<()>> {
        let mut route = Self::parse(path, false)?;
        let (base, query) = path.split_once('?').unwrap_or((path, ""));
        if matches!(base, "/embed" | "/embed/hold" | "/embed/nogil") {
            if query.split('&').any(|kv| kv.starts_with("seed=")) {
                return Err(FieldError::new(
                    (),
                    "leave `seed` out; the runner gives every request its own seed so no cache can answer for the work".to_string(),
                )
                .value(format!("{path:?}")));
            }
            route.check = Check::Digest(WorkDigest::minilm_embed());
        }
        Ok(route)
    }

    /// Whether every reply's work is verified (a digest), not only its shape.
    pub fn verified(&self) -> bool {
        matches!(self.check, Check::Digest(_))
    }

    /// A short name for tables and plots: the fixture's modes by what they
    /// do to the GIL, any other route by its path.
    pub fn label(&self) -> String {
        let (route, query) = self.path.split_once('?').unwrap_or((&self.path, ""));
        if self.verified() && route == "/work" {
            for kv in query.split('&') {
                match kv {
                    "mode=release" => return "releasing".into(),
                    "mode=hold" => return "holding".into(),
                    "mode=split" => return "already parallel".into(),
                    _ => {}
                }
            }
        }
        if self.verified() && route == "/embed" {
            return "embedding".into();
        }
        if self.verified() && route == "/embed/hold" {
            return "holding embedding".into();
        }
        if self.verified() && route == "/embed/nogil" {
            return "nogil embedding".into();
        }
        self.path.clone()
    }

    /// The next request: `/work` with a fresh seed, any other route as is.
    pub fn next_request(&self) -> Request {
        match self.check {
            Check::Digest(_) => {
                // A poisoned lock only means another connection panicked
                // mid-draw; the generator itself is still sound.
                let seed = self
                    .seeds
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .next()
                    .unwrap_or_default();
                let sep = if self.path.contains('?') { '&' } else { '?' };
                Request {
                    url: format!("{}{sep}seed={seed}", self.path),
                    seed: Some(seed),
                }
            }
            Check::StatusAndLength => Request {
                url: self.path.clone(),
                seed: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_gets_a_fresh_seed_and_a_digest() {
        let r = Route::parse("/work?mode=release&kib=64", true).unwrap();
        assert!(r.verified());
        assert_eq!(r.label(), "releasing");
        let a = r.next_request();
        let b = r.next_request();
        assert!(a.url.starts_with("/work?mode=release&kib=64&seed="));
        assert_ne!(a.seed, b.seed);
        assert_eq!(
            a.url,
            format!("/work?mode=release&kib=64&seed={}", a.seed.unwrap())
        );
        assert_eq!(
            Route::parse("/work?mode=hold&kib=8", true).unwrap().label(),
            "holding"
        );
    }

    #[test]
    fn other_routes_and_user_apps_are_not_verified() {
        let r = Route::parse("/", true).unwrap();
        assert!(!r.verified());
        assert_eq!(r.next_request().url, "/");
        assert_eq!(r.label(), "/");
        // A user's own /work is not the fixture's: no digest to compare.
        let r = Route::parse("/work?mode=release&kib=64", false).unwrap();
        assert!(!r.verified());
        assert_eq!(r.next_request().url, "/work?mode=release&kib=64");
    }

    #[test]
    fn the_model_apps_embed_routes_are_verified_and_others_not() {
        let r = Route::parse_model("/embed").unwrap();
        assert!(r.verified());
        assert_eq!(r.label(), "embedding");
        let q = r.next_request();
        assert_eq!(q.url, format!("/embed?seed={}", q.seed.unwrap()));
        assert!(Route::parse_model("/embed/hold").unwrap().verified());
        let nogil = Route::parse_model("/embed/nogil").unwrap();
        assert!(nogil.verified());
        assert_eq!(nogil.label(), "nogil embedding");
        assert!(!Route::parse_model("/embed/other").unwrap().verified());
        assert!(!Route::parse_model("/similarity").unwrap().verified());
        assert!(!Route::parse_model("/work?mode=hold&kib=8")
            .unwrap()
            .verified());
        assert!(Route::parse_model("/embed?seed=3").is_err());
        assert!(!Route::parse("/embed", true).unwrap().verified());
    }

    #[test]
    fn bad_paths_name_the_flag() {
        for bad in [
            "work",
            "/work?mode=release",
            "/work?mode=release&kib=0",
            "/work?mode=release&kib=64&seed=3",
            "/work?mode=fast&kib=64",
            "/a b",
            "/x#y",
        ] {
            let e = Route::parse(bad, true).err().unwrap();
            assert!(e.named("--path").starts_with("--path"), "{bad}: {e:?}");
            assert!(!e.message.is_empty(), "{bad}: {e:?}");
        }
    }
}
