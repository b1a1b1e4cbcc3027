//! The `dar` binary: see the `dar_cli` crate.

fn main() -> std::process::ExitCode {
    dar_cli::main()
}
