//! The process boundary: parse the arguments, run the command on a tokio
//! runtime with the real standard streams, and turn the outcome into an
//! exit status (0, or 1 with one line on stderr; a closed stdout is 0).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

use crate::cli::Cli;
use crate::commands::{Streams, run};
use crate::error::{CliError, one_line};
use crate::output;

/// Folds a clap error onto one line (its text before the usage section),
/// with the values of `KEY=VALUE` arguments redacted unless the key is known
/// to be harmless: clap quotes a misplaced argument, and a misplaced storage
/// option may hold a secret.
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

/// The value of a `KEY=VALUE` argument that may be secret.
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
    if value.is_empty() || FLAGS.contains(&key) || dar_io::StorageOptions::is_public_key(key) {
        return None;
    }
    Some(value)
}

/// Runs `dar` with the process's arguments and standard streams; returns
/// the exit status (0 on success and on a closed standard output, 1 on any
/// failure).
pub fn main() -> ExitCode {
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
        Err(e) => return fail(&usage_error(&e, &args)),
    };
    let broken = Arc::new(AtomicBool::new(false));
    let mut stdout = std::io::BufWriter::with_capacity(
        64 * 1024,
        output::PipeWatch::new(std::io::stdout(), Arc::clone(&broken)),
    );
    let mut stderr = std::io::stderr();
    let stderr_is_terminal = stderr.is_terminal();
    let result = tokio::runtime::Builder::new_multi_thread()
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
        .and_then(|()| stdout.flush().map_err(|e| CliError::write("output", e)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() || broken.load(Ordering::Relaxed) => {
            // Whoever read our output has what they wanted.
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
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
        // Harmless keys and dar's own flags are kept.
        assert!(usage(&["dar", "info", "t", "aws_region=eu"]).contains("aws_region=eu"));
        assert_eq!(secret_value("--filter=a = 1"), None);
        assert_eq!(secret_value("--storage-option=token=abc"), Some("abc"));
        let m = usage(&["dar", "info", "t", "aa=a"]);
        assert_eq!(
            m,
            "unexpected argument 'aa=<redacted>' found (see 'dar --help')"
        );
    }
}
