//! The server an app is served on, for the commands that serve one app
//! (`sweep`, `advise`) and the gates of a row: the app's interface is
//! found by importing it ([`super::interface`]) unless given; with no
//! server named, the profile is the default for that interface; a profile
//! that speaks the other interface is refused before anything starts,
//! naming the profiles that would serve it.

use std::path::{Path, PathBuf};

use crate::console::Console;
use crate::host::project::Project;
use crate::server::interface::{self, Found, ASGI_FIXTURE};
use crate::spec::{self, Interface, Profile};

/// The server asked for: `--server`, else the default for the interface
/// given with `--interface` (WSGI's when neither is given).
pub fn server_name(server: Option<&str>, interface: Option<Interface>) -> String {
    server.map_or_else(
        || {
            interface
                .unwrap_or(Interface::Wsgi)
                .default_server()
                .to_string()
        },
        String::from,
    )
}

/// The fixture served when no `--app` is given: bareapp for a WSGI
/// profile, its ASGI twin for an ASGI one (an unknown profile: bareapp;
/// the plan reports the profile's error).
pub fn fixture_dir(project: &Project, server: &str) -> PathBuf {
    match spec::resolve_profile(&project.servers_dir(), server) {
        Ok(p) if p.interface == Interface::Asgi => project.fixture_dir(ASGI_FIXTURE),
        _ => project.app_dir(),
    }
}

/// Every profile of specs/servers/ that loads.
pub fn all_profiles(project: &Project) -> Vec<Profile> {
    spec::row_files(&project.servers_dir())
        .unwrap_or_default()
        .iter()
        .filter_map(|f| spec::load_profile(f).ok())
        .collect()
}

/// What serving a user's app needs settled before any server starts.
pub struct Settled {
    /// The interface, and how it was learned (`None`: given).
    pub interface: Interface,
    pub found: Option<Found>,
    /// Another profile to serve it on, when `--server` was not given and
    /// the default one speaks the other interface.
    pub profile: Option<Profile>,
}

/// A user's app to serve, and the server asked for.
pub struct UserApp<'a> {
    /// MODULE:ATTR.
    pub app: &'a str,
    pub app_dir: &'a Path,
    /// The interface given (`--interface`), if any.
    pub given: Option<Interface>,
    /// The profile planned.
    pub profile: &'a Profile,
    /// Whether the user named the server.
    pub server_given: bool,
}

/// Finds the app's interface (unless given), then checks the profile
/// serves it: with no server given, a profile of the app's interface is
/// chosen; with one given, a mismatch is the refusal (Err).
pub async fn settle(
    project: &Project,
    python: &Path,
    user: &UserApp<'_>,
) -> Result<Settled, String> {
    let UserApp {
        app,
        app_dir,
        given,
        profile,
        server_given,
    } = *user;
    let (interface, found) = match given {
        Some(i) => (i, None),
        None => {
            // Our own fixtures (the model app loads its weights at import)
            // are imported once per change of their files.
            let ours = project
                .root
                .join("fixtures")
                .canonicalize()
                .is_ok_and(|f| app_dir.starts_with(f));
            let found = if ours {
                interface::of_fixture(python, app, app_dir, &project.state_dir()).await?
            } else {
                interface::detect(python, app, app_dir).await?
            };
            (found.interface, Some(found))
        }
    };
    if profile.interface == interface {
        return Ok(Settled {
            interface,
            found,
            profile: None,
        });
    }
    if !server_given {
        let other = spec::resolve_profile(&project.servers_dir(), interface.default_server())
            .map_err(|e| e.to_string())?;
        return Ok(Settled {
            interface,
            found,
            profile: Some(other),
        });
    }
    let how = match &found {
        Some(f) => format!(" ({}: {})", f.what, f.why),
        None => " (--interface)".to_string(),
    };
    let refusal =
        interface::mismatch(profile, interface, app, &all_profiles(project)).unwrap_or_default();
    Err(format!("--server {}: {refusal}{how}", profile.name))
}

/// [`settle`], telling `console` what the app was found to be and which
/// server serves it instead (as `command`, "sweep" or "advise"): the
/// profile to serve it on instead of the planned one, if any.
pub async fn settle_told(
    project: &Project,
    python: &Path,
    user: &UserApp<'_>,
    command: &str,
    console: &dyn Console,
) -> Result<Option<Profile>, String> {
    let settled = settle(project, python, user).await?;
    if let Some(found) = &settled.found {
        console.note(&format!(
            "{command}: {} is {} ({}): {}",
            user.app, found.what, found.why, settled.interface
        ));
    }
    if let Some(other) = &settled.profile {
        console.note(&format!(
            "{command}: serving it on {} (no --server given; the {} default)",
            other.name, settled.interface
        ));
    }
    Ok(settled.profile)
}

/// The names of every profile in specs/servers/, sorted.
pub fn profile_names(project: &Project) -> Result<Vec<String>, String> {
    let files = spec::row_files(&project.servers_dir()).map_err(|e| e.to_string())?;
    Ok(files
        .iter()
        .filter_map(|f| f.file_stem().and_then(|s| s.to_str()).map(String::from))
        .collect())
}

/// The profiles `names` give, or every profile of specs/servers/ when none.
pub fn profiles_named(project: &Project, names: &[String]) -> Result<Vec<Profile>, String> {
    let names = if names.is_empty() {
        profile_names(project)?
    } else {
        names.iter().map(|s| s.trim().to_string()).collect()
    };
    names
        .iter()
        .map(|n| spec::resolve_profile(&project.servers_dir(), n).map_err(|e| e.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_server_follows_the_interface() {
        assert_eq!(server_name(None, None), "granian");
        assert_eq!(server_name(None, Some(Interface::Asgi)), "uvicorn");
        // Its twin: a server given is kept whatever the interface.
        assert_eq!(
            server_name(Some("hypercorn"), Some(Interface::Wsgi)),
            "hypercorn"
        );
    }
}
