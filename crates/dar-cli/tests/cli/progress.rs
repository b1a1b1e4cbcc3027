//! The progress bar, through a real terminal: `script` runs `dar` on a
//! pseudo-terminal. Skipped where `script` (util-linux) is missing.

use std::path::Path;
use std::process::Command;

use crate::{arg, sample};

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs `shell_command` on a pseudo-terminal, the bar shown at once;
/// returns what the terminal received, or `None` without `script`.
fn on_terminal(shell_command: &str) -> Option<String> {
    let out = Command::new("script")
        .args(["-q", "-e", "-c", shell_command, "/dev/null"])
        .env("DAR_PROGRESS_AFTER_MS", "0")
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{shell_command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn dar_command(args: &[&str]) -> String {
    let bin = assert_cmd::cargo::cargo_bin("dar");
    let mut parts = vec![quote(&arg(&bin))];
    parts.extend(args.iter().map(|a| quote(a)));
    parts.join(" ")
}

#[test]
fn bar_only_on_a_terminal_and_only_with_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = arg(&dir.path().join("rows.csv"));
    let s = arg(&sample());
    let with_file = dar_command(&["scan", &s, "--format", "csv", "--output", &out]);
    let Some(screen) = on_terminal(&with_file) else {
        eprintln!("SKIPPED: `script` not found; progress bar not tested");
        return;
    };
    assert!(screen.contains("/300 rows"), "bar expected: {screen:?}");
    assert!(screen.contains("files "), "{screen:?}");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 301);

    // Rows to the terminal itself: no bar.
    let to_stdout = dar_command(&["scan", &s, "--format", "csv"]);
    let screen = on_terminal(&to_stdout).unwrap();
    assert!(screen.contains("trip_id,pickup_ts"));
    assert!(!screen.contains("/300 rows"), "{screen:?}");

    // Standard error not a terminal: no bar.
    let err_file = dir.path().join("err.txt");
    let redirected = format!("{with_file} 2>{}", quote(&arg(&err_file)));
    let screen = on_terminal(&redirected).unwrap();
    assert!(!screen.contains("rows"), "{screen:?}");
    assert_eq!(std::fs::read_to_string(Path::new(&err_file)).unwrap(), "");
}
