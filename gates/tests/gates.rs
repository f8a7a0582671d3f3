//! `cargo test -p gates`: one trial per SPEC row and installed server.
//! See gates/src/harness.rs.

fn main() -> std::process::ExitCode {
    gates::harness::main()
}
