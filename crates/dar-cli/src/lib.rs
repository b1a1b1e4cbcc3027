//! `dar`, the command-line tool of the dar workspace: look at a Delta table
//! from a terminal.
//!
//! - `dar info TABLE`: version, protocol and reader features, schema
//!   (physical names under column mapping), partition columns, properties,
//!   files, bytes, and the row count from the log's statistics.
//! - `dar files TABLE`: the active files (`--format table|json|csv`).
//! - `dar scan TABLE`: the rows, with `--columns`, `--filter`, `--limit`,
//!   time travel (`--version`, `--timestamp`), as a text table, CSV, JSON
//!   lines, Parquet, an Arrow IPC stream, or only a count
//!   (`--format null`), and `--stats` for what the scan pruned and read.
//!
//! Every failure is one line on standard error with its cause chain and
//! exit status 1; a closed standard output (`| head`) ends quietly.
//!
//! The binary is a thin [`main`]; the commands run against any writers, so
//! they can be driven in-process:
//!
//! ```
//! use clap::Parser;
//! use dar_cli::{Cli, Streams};
//!
//! let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sample");
//! let cli = Cli::try_parse_from(["dar", "scan", sample, "--filter", "trip_id < 5", "--format", "null"])?;
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! let mut streams = Streams { stdout: &mut out, stderr: &mut err, stderr_is_terminal: false };
//! let runtime = tokio::runtime::Runtime::new()?;
//! runtime.block_on(dar_cli::run(cli, &mut streams))?;
//! // Trips 1 to 4 were written; a deletion vector removed one of them.
//! assert_eq!(String::from_utf8(out)?.trim(), "3");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod cli;
pub mod commands;
pub mod error;
pub mod output;
pub mod progress;
pub mod stats;
pub mod table;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;

pub use cli::Cli;
pub use commands::{Streams, run};
pub use error::{CliError, one_line};

/// Folds a clap error onto one line (its text before the usage section).
fn usage_error(e: &clap::Error) -> CliError {
    let text = e.render().to_string();
    let message = text
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let message = message
        .strip_prefix("error: ")
        .unwrap_or(&message)
        .to_string();
    CliError::Usage {
        message: format!("{message} (see 'dar --help')"),
    }
}

/// Runs `dar` with the process's arguments and standard streams; returns
/// the exit status (0 on success and on a closed standard output, 1 on any
/// failure).
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version: clap prints them to stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&usage_error(&e)),
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
