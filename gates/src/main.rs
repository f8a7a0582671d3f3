//! The harness as a program (`cargo run -p gates --bin gates-harness --
//! --list`): the same code as the `gates` test target, so that the
//! package's tests can run it the way cargo and nextest do.

fn main() -> std::process::ExitCode {
    gates::harness::main()
}
