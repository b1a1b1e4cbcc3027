//! The process boundary: parse the arguments, run the command on a tokio
//! runtime with the real standard streams, and turn the outcome into an
//! exit status (0; 1 with one line on stderr; 130 after Ctrl-C). A reader
//! that goes away (`| head`) is success; a standard output closed before
//! the start (`>&-`) is an error.

use std::io::{IsTerminal, Write};
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::commands::{Streams, run};
use crate::error::{CliError, one_line};
use crate::output;

/// Folds a clap error onto one line (its text before the usage section),
/// with the values of `KEY=VALUE` arguments redacted: clap quotes a
/// misplaced argument, a misplaced storage option may hold a secret, and
/// no storage option value is ever echoed.
fn usage_error(e: &clap::Error, args: &[String]) -> CliError {
    let text = e.render().to_string();
    let mut message = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join(" ");
    for arg in args {
        if let Some(secret) = secret_value(arg) {
            // The whole argument, so that a short value cannot garble the
            // rest of the message.
            // The value is the argument's suffix.
            let shown = format!("{}{}", &arg[..arg.len() - secret.len()], dar_io::REDACTED);
            message = message.replace(arg.as_str(), &shown);
        }
    }
    let message = message
        .strip_prefix("error: ")
        .unwrap_or(&message)
        .to_string();
    CliError::Usage {
        message: format!("{message} (see 'dar --help')"),
    }
}

/// The subcommands a build without some features leaves out, with the
/// feature each needs (a lean build, as the README's first command makes,
/// has `info`, `files`, `scan` and `changes` only).
const FEATURE_COMMANDS: [(&str, &str, bool); 3] = [
    ("sql", "sql", cfg!(feature = "sql")),
    ("worker", "distributed", cfg!(feature = "distributed")),
    ("serve", "serve", cfg!(feature = "serve")),
];

/// For `dar sql` or `dar worker` in a build without their feature: an
/// error that says so and how to get a full build, instead of clap's
/// "unrecognized subcommand".
fn left_out_command(args: &[String]) -> Option<CliError> {
    let name = args.iter().skip(1).find(|a| !a.starts_with('-'))?;
    let (_, feature, _) = FEATURE_COMMANDS
        .iter()
        .find(|(command, _, built)| command == name && !built)?;
    Some(CliError::Usage {
        message: format!(
            "'dar {name}' is not in this build of dar (built without the '{feature}' feature); \
             build dar with its default features: 'cargo run -p dar-cli -- {name} ...' \
             or 'cargo install --path crates/dar-cli'"
        ),
    })
}

/// The value of a `KEY=VALUE` argument that may be a storage option.
fn secret_value(arg: &str) -> Option<&str> {
    // `--filter=a = 1` and friends are not storage options.
    const FLAGS: [&str; 9] = [
        "--filter",
        "--table",
        "--columns",
        "--timestamp",
        "--version",
        "--limit",
        "--format",
        "--output",
        "-o",
    ];
    let arg = arg.strip_prefix("--storage-option=").unwrap_or(arg);
    let (key, value) = arg.split_once('=')?;
    if value.is_empty() || FLAGS.contains(&key) {
        return None;
    }
    Some(value)
}

/// The first panic's message and location, recorded by the hook instead of
/// Rust's crash report.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces the default panic report (several lines on stderr, possibly a
/// backtrace) with a record of the first panic: a panic below dar becomes
/// the command's one-line error (`CliError::Internal`, or the scan's
/// `TaskFailed` when a decoding task panicked). `DAR_PANIC_REPORT=1` keeps
/// Rust's report, for debugging.
fn record_panics() {
    if std::env::var_os("DAR_PANIC_REPORT").is_some_and(|v| v == "1") {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let mut first = PANIC.lock().unwrap_or_else(PoisonError::into_inner);
        first.get_or_insert(format!("{text}{at}"));
    }));
}

/// The recorded panic, as the command's error.
fn panic_error() -> CliError {
    let message = PANIC
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .unwrap_or_else(|| "panic".to_string());
    CliError::Internal { message }
}

/// Runs `dar` with the process's arguments and standard streams; returns
/// the exit status (0 on success and on a closed standard output, 1 on any
/// failure).
pub fn main() -> ExitCode {
    record_panics();
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version: clap prints them to stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&left_out_command(&args).unwrap_or_else(|| usage_error(&e, &args))),
    };
    if writes_to_stdout(&cli) && stdout_closed() {
        return fail(&CliError::StdoutClosed);
    }
    let broken = Arc::new(AtomicBool::new(false));
    let mut stdout = std::io::BufWriter::with_capacity(
        64 * 1024,
        output::PipeWatch::new(std::io::stdout(), Arc::clone(&broken)),
    );
    let mut stderr = std::io::stderr();
    let stderr_is_terminal = stderr.is_terminal();
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|source| CliError::Runtime { source })
            .and_then(|rt| {
                let mut streams = Streams {
                    stdout: &mut stdout,
                    stderr: &mut stderr,
                    stderr_is_terminal,
                };
                rt.block_on(run(cli, &mut streams))
            })
    }))
    .unwrap_or_else(|_| Err(panic_error()))
    .and_then(|()| stdout.flush().map_err(|e| CliError::write("output", e)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Interrupted) => {
            let _ = writeln!(std::io::stderr(), "dar: interrupted");
            // 128 + SIGINT, as a shell reports a process stopped by Ctrl-C.
            ExitCode::from(130)
        }
        Err(e) if e.is_broken_pipe() || broken.load(Ordering::Relaxed) => {
            // Whoever read our output has what they wanted.
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// Whether standard output was closed when dar started (`>&-`), not merely
/// a pipe whose reader went away. Rust's runtime reopens a closed
/// descriptor 1 on `/dev/null`, read-write, before `main`, so every write
/// would vanish; a shell's `> /dev/null` opens it write-only, which stays
/// allowed. Only Linux shows the open mode (`/proc/self/fdinfo`); elsewhere
/// a closed standard output goes undetected.
#[cfg(target_os = "linux")]
fn stdout_closed() -> bool {
    let on_null = std::fs::read_link("/proc/self/fd/1")
        .is_ok_and(|target| target == std::path::Path::new("/dev/null"));
    let read_write = || {
        std::fs::read_to_string("/proc/self/fdinfo/1")
            .ok()
            .and_then(|info| {
                let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
                u32::from_str_radix(flags.trim(), 8).ok()
            })
            .is_some_and(|flags| flags & 0o3 == 0o2)
    };
    on_null && read_write()
}

#[cfg(not(target_os = "linux"))]
fn stdout_closed() -> bool {
    false
}

/// Whether the command's result goes to standard output (everything but
/// `scan`, `changes` and `sql` with `--output`).
fn writes_to_stdout(cli: &Cli) -> bool {
    let output = match &cli.command {
        Command::Scan(args) => &args.rows.output,
        Command::Changes(args) => &args.rows.output,
        #[cfg(feature = "sql")]
        Command::Sql(args) => &args.output,
        _ => return true,
    };
    crate::cli::output_file(output).is_none()
}

fn fail(e: &CliError) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "dar: error: {}", one_line(e));
    ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let e = Cli::try_parse_from(&args).unwrap_err();
        usage_error(&e, &args).to_string()
    }

    #[test]
    fn usage_errors_are_one_line_without_secrets() {
        let m = usage(&["dar", "info", "t", "aws_secret_access_key=SEKRET"]);
        assert_eq!(
            m,
            "unexpected argument 'aws_secret_access_key=<redacted>' found (see 'dar --help')"
        );
        let m = usage(&["dar", "info", "t", "--version", "x"]);
        assert!(
            !m.contains('\n') && !m.contains("For more information"),
            "{m}"
        );
        assert!(
            m.starts_with("invalid value 'x' for '--version <N>'"),
            "{m}"
        );
        // No storage option value is echoed, not even a harmless one;
        // dar's own flags are kept.
        let m = usage(&["dar", "info", "t", "aws_region=eu-west-9"]);
        assert!(!m.contains("eu-west-9") && m.contains("aws_region="), "{m}");
        assert_eq!(secret_value("--filter=a = 1"), None);
        assert_eq!(secret_value("--storage-option=token=abc"), Some("abc"));
        let m = usage(&["dar", "info", "t", "aa=a"]);
        assert_eq!(
            m,
            "unexpected argument 'aa=<redacted>' found (see 'dar --help')"
        );
    }
}
