//! `--interface` and the server an app is served on, for the commands that
//! serve one app (`sweep`, `advise`): the app's interface is found by
//! importing it (`runner::server::interface`) unless given; with no
//! `--server`, the profile is the default for that interface; a profile
//! that speaks the other interface is refused before anything starts,
//! naming the profiles that would serve it.

use std::path::{Path, PathBuf};

use runner::host::project::Project;
use runner::server::interface::{self, Found};
use runner::spec::{self, Interface, Profile};

pub use runner::server::interface::ASGI_FIXTURE;

/// `--interface wsgi|asgi`, for clap.
pub fn parse_interface(text: &str) -> Result<Interface, String> {
    Interface::parse(text).ok_or_else(|| format!("{text:?}: use wsgi or asgi"))
}

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

/// Finds the app's interface (unless `given`), then checks `profile`
/// serves it: with `server_given` false, a profile of the app's interface
/// is chosen; with it true, a mismatch is the refusal (Err).
pub async fn settle(
    project: &Project,
    python: &Path,
    app: &str,
    app_dir: &Path,
    given: Option<Interface>,
    profile: &Profile,
    server_given: bool,
) -> Result<Settled, String> {
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
        assert!(parse_interface("rsgi").is_err());
    }
}
