//! `runner prepare`: the Python environment, made ready ahead of any gate.

use std::path::Path;

use runner::event::Event;
use runner::project::Project;
use runner::pyenv;
use runner::report::terminal::Terminal;

use super::{unusable, Finish};

pub fn run(project: &Project, python: Option<&Path>) -> Finish {
    let mut terminal = Terminal::new(std::io::stdout());
    let env = match pyenv::prepare(project, python, &mut |p| terminal.event(&Event::Env(p))) {
        Ok(env) => env,
        Err(e) => return unusable(&e.to_string()),
    };
    println!("python: {}", env.python.display());
    match pyenv::installed_versions(&env) {
        Ok(lines) => print!("{lines}"),
        Err(e) => return unusable(&e.to_string()),
    }
    Finish::ok()
}
