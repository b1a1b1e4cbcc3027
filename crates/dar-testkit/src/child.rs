//! A test run again in a child process with its address space bounded, so
//! that a reader which aborts (an allocation sized by a hostile length
//! fails, Rust aborts the process with SIGABRT; no `catch_unwind` helps)
//! fails that one test instead of killing the whole test binary, and
//! fails the same way on any machine (the bound makes a huge allocation
//! fail even where memory overcommit would let it through).
//!
//! ```no_run
//! #[test]
//! fn hostile_footers_are_errors() {
//!     if let Some(outcome) =
//!         dar_testkit::child::isolated(module_path!(), "hostile_footers_are_errors")
//!     {
//!         return outcome.unwrap(); // the parent: did the child pass?
//!     }
//!     // The child: the test's body.
//! }
//! ```

use std::path::Path;
use std::process::Command;

use crate::error::{Result, TestkitError};

/// The environment variable naming the test a child process runs.
pub const CHILD_ENV: &str = "DAR_TESTKIT_CHILD";

/// The address space a child gets (8 GiB): room for a test, far below
/// what a claimed length of 2^31-1 of anything asks for.
pub const CHILD_ADDRESS_SPACE: u64 = 8 << 30;

/// `program` run by `sh` under `ulimit -v` of `bytes`: a command whose
/// allocations beyond the bound fail.
pub fn bounded_command(program: &Path, bytes: u64) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"ulimit -v "$1" && shift && exec "$@""#)
        .arg("sh")
        .arg((bytes / 1024).to_string())
        .arg(program);
    cmd
}

/// In the test process: runs test `test` of the module `module` (give
/// `module_path!()`) again in a child process of the same test binary,
/// bounded to [`CHILD_ADDRESS_SPACE`], and returns `Some` of whether it
/// passed (a failure names the exit status, a signal included, and the
/// child's output). In that child: `None`, run the body.
pub fn isolated(module: &str, test: &str) -> Option<Result<()>> {
    // libtest names a test by its path below the crate.
    let name = match module.split_once("::") {
        Some((_, below)) => format!("{below}::{test}"),
        None => test.to_owned(),
    };
    if std::env::var(CHILD_ENV).is_ok_and(|v| v == name) {
        return None;
    }
    let fail = |reason: String| TestkitError::Child {
        test: name.clone(),
        reason,
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Some(Err(fail(format!("no test binary: {e}")))),
    };
    let output = bounded_command(&exe, CHILD_ADDRESS_SPACE)
        .args([&name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &name)
        .env("RUST_BACKTRACE", "0")
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => return Some(Err(fail(format!("cannot start the child: {e}")))),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && stdout.contains("1 passed") {
        return Some(Ok(()));
    }
    let text = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    let tail: Vec<&str> = text.lines().rev().take(40).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Some(Err(fail(format!(
        "the child ended with {} (a signal is an abort or a crash):\n{}",
        describe(output.status),
        tail.join("\n")
    ))))
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (_, Some(6)) => "signal 6 (SIGABRT)".into(),
        (_, Some(sig)) => format!("signal {sig}"),
        (Some(code), None) => format!("exit code {code}"),
        (None, None) => status.to_string(),
    }
}
