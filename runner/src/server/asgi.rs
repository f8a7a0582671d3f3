//! The runner's ASGI wrapper (`gates_asgi.py`, beside this file): every
//! server whose profile speaks ASGI serves `gates_asgi:app`, which imports
//! the user's app, sizes anyio's threadpool from the `threads` knob, stamps
//! each reply with the loop's thread, and answers [`LOOP_PROBE`] itself on
//! the loop (the file's docstring says how). The file is written into a folder the
//! server owns for its lifetime, so nothing of the user's is touched.

use std::collections::BTreeMap;
use std::path::Path;

/// The wrapper's source.
pub const SOURCE: &str = include_str!("gates_asgi.py");
/// What an ASGI server is told to serve.
pub const APP: &str = "gates_asgi:app";
/// The variable naming the user's app to the wrapper.
pub const APP_VAR: &str = "GATES_ASGI_APP";
/// The variable asking the wrapper to run each request on a pool thread.
pub const OFFLOAD_VAR: &str = "GATES_ASGI_OFFLOAD";

/// The route the wrapper answers on the loop, without the app: at once
/// while the loop is free, late while a view blocks it.
pub const LOOP_PROBE: &str = "/.gates/loop";

/// The wrapper written into a fresh folder, and the environment that makes
/// the server import it and it import `app` from `app_dir`.
pub fn install(
    app: &str,
    app_dir: &Path,
) -> std::io::Result<(tempfile::TempDir, BTreeMap<String, String>)> {
    let dir = tempfile::Builder::new().prefix("gates-asgi-").tempdir()?;
    std::fs::write(dir.path().join("gates_asgi.py"), SOURCE)?;
    let mut path = dir.path().display().to_string();
    if let Some(old) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        path = format!("{path}:{}", old.to_string_lossy());
    }
    let env = BTreeMap::from([
        ("PYTHONPATH".to_string(), path),
        (APP_VAR.to_string(), app.to_string()),
        (
            "GATES_ASGI_APP_DIR".to_string(),
            app_dir.display().to_string(),
        ),
    ]);
    Ok((dir, env))
}
