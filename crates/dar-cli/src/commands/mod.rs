//! The subcommands, each over an opened [`dar_scan::Table`].

mod changes;
mod files;
mod info;
mod scan;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "distributed")]
mod worker;

use std::io::Write;

pub use info::{RowCount, row_count};
pub use scan::plan_error;

use crate::cli::{Cli, Command};
use crate::error::CliError;

/// Where a command writes.
pub struct Streams<'a> {
    /// Standard output: the command's result.
    pub stdout: &'a mut (dyn Write + Send),
    /// Standard error: `--stats` reports.
    pub stderr: &'a mut (dyn Write + Send),
    /// Whether standard error is a terminal (progress bars only then).
    pub stderr_is_terminal: bool,
}

/// Runs the parsed command line.
pub async fn run(cli: Cli, streams: &mut Streams<'_>) -> Result<(), CliError> {
    match cli.command {
        Command::Info(args) => info::run(&args, streams).await,
        Command::Files(args) => files::run(&args, streams).await,
        Command::Scan(args) => scan::run(&args, streams).await,
        Command::Changes(args) => changes::run(&args, streams).await,
        #[cfg(feature = "sql")]
        Command::Sql(args) => sql::run(&args, streams).await,
        #[cfg(feature = "distributed")]
        Command::Worker(args) => worker::run(&args, streams).await,
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(&args, streams).await,
    }
}

/// Renders `bytes` for people: `70810 B`, `69.2 KiB`, `1.4 GiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `writeln!` whose I/O error becomes a [`CliError::Write`] for `format`.
macro_rules! out {
    ($format:expr, $dst:expr, $($arg:tt)*) => {
        writeln!($dst, $($arg)*).map_err(|e| $crate::error::CliError::write($format, e))
    };
}
pub(crate) use out;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_for_people() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(70_810), "69.2 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
