//! Which interface an app speaks, found by importing it in the venv's
//! interpreter (bounded) and looking at the object: a coroutine callable of
//! three arguments `(scope, receive, send)` (a FastAPI or Starlette
//! instance, an `async def app`) is ASGI; a plain callable of two
//! `(environ, start_response)` (a function, a Flask or Django WSGI handler)
//! is WSGI. Never guessed from names or source text.
//!
//! A fixture's answer is kept in the state folder, keyed by a hash of its
//! files and the interpreter, so a row's gate imports the app once per
//! change, not once per run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::host::bounded::{self, CommandBounds};
use crate::spec::Interface;

/// The ASGI twin of fixtures/bareapp: served when no app is given on an
/// ASGI server, and the holding control beside a user's ASGI app.
pub const ASGI_FIXTURE: &str = "asgiapp";

/// How long importing the app may take (a model app loads its weights).
pub const IMPORT_LIMIT: Duration = Duration::from_secs(180);
/// Lines of the import's traceback shown when it fails.
const TRACEBACK_LINES: usize = 12;

/// The inspection, run as `python -c SCRIPT MODULE:ATTR APP_DIR`; prints
/// one JSON line on stdout (the app's own prints go to stderr).
const SCRIPT: &str = r#"
import importlib, inspect, json, os, sys, traceback
target, app_dir = sys.argv[1], sys.argv[2]
out, sys.stdout = sys.stdout, sys.stderr
sys.path.insert(0, app_dir)
os.chdir(app_dir)
def say(**kw):
    out.write(json.dumps(kw) + "\n"); out.flush(); os._exit(0)
try:
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
except BaseException:
    say(error="import", detail=traceback.format_exc())
kind = "%s.%s" % (type(obj).__module__, type(obj).__qualname__)
if inspect.isclass(obj):
    say(interface=None, what="the class " + obj.__qualname__, why="a class, not an app instance (ASGI 2 style classes are not served)")
if not callable(obj):
    say(interface=None, what="a " + kind, why="not callable")
call = obj if (inspect.isfunction(obj) or inspect.ismethod(obj)) else type(obj).__call__
is_async = inspect.iscoroutinefunction(call) or inspect.iscoroutinefunction(getattr(call, "__func__", None))
try:
    params = [p for p in inspect.signature(obj).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    star = any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(obj).parameters.values())
    n = len(params)
except (TypeError, ValueError):
    n, star = None, True
what = "the function " + obj.__qualname__ if inspect.isfunction(obj) else "a " + kind + " instance"
if is_async and (n == 3 or star):
    say(interface="asgi", what=what, why="a coroutine callable of (scope, receive, send)")
if not is_async and (n == 2 or star):
    say(interface="wsgi", what=what, why="a callable of (environ, start_response)")
say(interface=None, what=what, why="%s callable of %s positional arguments: neither WSGI's (environ, start_response) nor ASGI's async (scope, receive, send)" % ("a coroutine" if is_async else "a plain", n))
"#;

/// What the import found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub interface: Interface,
    /// The object, in words (`a fastapi.applications.FastAPI instance`).
    pub what: String,
    /// Why it is that interface.
    pub why: String,
}

/// Imports `app` (MODULE:ATTR) from `app_dir` with `python` and says which
/// interface it speaks. The error says what went wrong and what to do.
pub async fn detect(python: &Path, app: &str, app_dir: &Path) -> Result<Found, String> {
    let mut command = Command::new(python);
    command
        .args(["-c", SCRIPT, app])
        .arg(app_dir)
        .current_dir(app_dir)
        .env("PYTHONUNBUFFERED", "1");
    let finished = bounded::run(command, CommandBounds::new(IMPORT_LIMIT))
        .await
        .map_err(|e| format!("cannot run {} to import {app}: {e}", python.display()))?;
    let stdout = finished.stdout_text();
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    let parsed: Option<serde_json::Value> = line.and_then(|l| serde_json::from_str(l).ok());
    let Some(v) = parsed else {
        let tail = tail_lines(&finished.stderr_text(), TRACEBACK_LINES);
        return Err(match finished.status() {
            None => format!(
                "importing {app} from {} took over {} s; the runner imports it to learn whether it is WSGI or ASGI (give --interface wsgi|asgi to skip that)",
                app_dir.display(),
                IMPORT_LIMIT.as_secs()
            ),
            Some(status) => format!(
                "importing {app} from {} to learn its interface ended ({status}) without an answer:\n{tail}",
                app_dir.display()
            ),
        });
    };
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    if v.get("error").is_some() {
        return Err(format!(
            "cannot import {app} from {} (fix the app, or --app/--app-dir):\n{}",
            app_dir.display(),
            tail_lines(&text("detail"), TRACEBACK_LINES)
        ));
    }
    match Interface::parse(&text("interface")) {
        Some(interface) => Ok(Found {
            interface,
            what: text("what"),
            why: text("why"),
        }),
        None => Err(format!(
            "{app} is {}: {}; serve a WSGI or ASGI app, or give --interface wsgi|asgi",
            text("what"),
            text("why")
        )),
    }
}

/// [`detect`] for a fixture folder's `app` (`app:app`), kept in
/// `state_dir` while the folder's files and the interpreter are the same.
pub async fn of_fixture(
    python: &Path,
    app: &str,
    app_dir: &Path,
    state_dir: &Path,
) -> Result<Found, String> {
    let key = fixture_key(python, app_dir);
    let file = state_dir.join(format!("interface-{key}.json"));
    if let Some(found) = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            Some(Found {
                interface: Interface::parse(v.get("interface")?.as_str()?)?,
                what: v.get("what")?.as_str()?.to_string(),
                why: v.get("why")?.as_str()?.to_string(),
            })
        })
    {
        return Ok(found);
    }
    let found = detect(python, app, app_dir).await?;
    let json = serde_json::json!({
        "interface": found.interface.name(),
        "what": found.what,
        "why": found.why,
    });
    // A cache: failing to write it only costs the next run an import.
    let _ = std::fs::create_dir_all(state_dir);
    let _ = std::fs::write(&file, json.to_string());
    Ok(found)
}

/// A hash of the interpreter's path and every `*.py` file of `dir` (names,
/// sizes and bytes).
fn fixture_key(python: &Path, dir: &Path) -> String {
    let mut h = Sha256::new();
    h.update(python.display().to_string().as_bytes());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "py"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_default();
        h.update(f.file_name().unwrap_or_default().as_encoded_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The refusal for serving an `interface` app on `profile`, or None when
/// the profile speaks it: names the ready profiles that would serve it.
pub fn mismatch(
    profile: &crate::spec::Profile,
    interface: Interface,
    app: &str,
    servers: &[crate::spec::Profile],
) -> Option<String> {
    if profile.interface == interface {
        return None;
    }
    let mut would: Vec<&str> = servers
        .iter()
        .filter(|p| p.interface == interface && p.not_ready().is_none())
        .map(|p| p.name.as_str())
        .collect();
    // The interface's default first.
    would.sort_by_key(|n| (*n != interface.default_server(), n.to_string()));
    let article = |i: Interface| match i {
        Interface::Wsgi => "a",
        Interface::Asgi => "an",
    };
    Some(format!(
        "{app} is {} {interface} app, and {} speaks {} only; serve it with {} (or, if the app is not {interface}, say which with --interface)",
        article(interface),
        profile.name,
        profile.interface,
        match would.split_first() {
            None => format!("a profile that has `interface: {}`", interface.name()),
            Some((first, [])) => format!("--server {first}"),
            Some((first, rest)) => format!("--server {first} (or {})", rest.join(", ")),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str, interface: Interface) -> crate::spec::Profile {
        let dir = std::env::temp_dir();
        let text = format!(
            "name: {name}\ninterface: {}\nargv: [\"{{python}}\", \"{{app}}\"]\nready: {{path: /, timeout_ms: 1000}}\nstop_grace_ms: 100\n",
            interface.name()
        );
        let file = dir.join(format!(
            "gates-interface-test-{name}-{}.yaml",
            std::process::id()
        ));
        std::fs::write(&file, text).unwrap();
        let p = crate::spec::load_profile(&file).unwrap();
        let _ = std::fs::remove_file(&file);
        p
    }

    #[test]
    fn a_mismatch_names_the_profiles_that_would_serve_it() {
        let all = [
            profile("granian", Interface::Wsgi),
            profile("uvicorn", Interface::Asgi),
            profile("hypercorn", Interface::Asgi),
        ];
        let refusal = mismatch(&all[0], Interface::Asgi, "main:app", &all).unwrap();
        assert!(refusal.contains("main:app is an ASGI app"), "{refusal}");
        assert!(refusal.contains("granian speaks WSGI only"), "{refusal}");
        assert!(
            refusal.contains("--server uvicorn (or hypercorn)"),
            "{refusal}"
        );
        // The twin: a profile that speaks it is no mismatch.
        assert_eq!(mismatch(&all[1], Interface::Asgi, "main:app", &all), None);
    }
}
