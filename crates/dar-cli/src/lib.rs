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
pub mod exit;
pub mod output;
pub mod progress;
pub mod stats;
pub mod table;

pub use cli::Cli;
pub use commands::{Streams, run};
pub use error::{CliError, one_line};
pub use exit::main;
