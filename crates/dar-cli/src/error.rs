//! The crate's one error type, and how a failure reaches the terminal: one
//! line on standard error with the cause chain, exit status 1.
//!
//! Messages never carry secrets: table URIs are redacted by `dar-io` before
//! they reach an error, and storage option values are never quoted.

use std::error::Error as StdError;
use std::path::PathBuf;

use dar_scan::ScanError;

/// Everything `dar` can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The command line does not parse (rendered by clap, on one line).
    #[error("{message}")]
    Usage {
        /// clap's message, folded onto one line.
        message: String,
    },

    /// An option value is out of range or does not fit the other options.
    #[error("invalid {argument}: {reason}")]
    InvalidArgument {
        /// The option, as on the command line (`--timestamp`).
        argument: &'static str,
        /// What is wrong.
        reason: String,
    },

    /// A table option flag (`--timestamp`, `--storage-option`) does not
    /// parse: dar-scan's message, naming the flag.
    #[error("{}", .error.message_for(.flag))]
    TableOption {
        /// The flag, as on the command line.
        flag: &'static str,
        /// What is wrong with its value.
        error: dar_scan::TableOptionError,
    },

    /// Opening, planning or reading the table failed.
    #[error(transparent)]
    Scan(#[from] ScanError),

    /// The `--filter` predicate does not parse or does not fit the schema.
    #[error("invalid --filter \"{filter}\"{near}: {source}")]
    Filter {
        /// The predicate text (shortened when long).
        filter: String,
        /// ` (near "...")`: the text from the offending token on, when known
        /// (shortened when long).
        near: String,
        /// What is wrong with it.
        #[source]
        source: Box<dar_prune::PruneError>,
    },

    /// A `--columns` entry names no column of the table.
    #[error("unknown column '{column}' in --columns{}", nearest_list(.nearest))]
    UnknownColumn {
        /// The column path as given.
        column: String,
        /// The nearest column paths of the table, closest first.
        nearest: Vec<String>,
    },

    /// The snapshot's commit timestamp could not be worked out (listing the
    /// log failed).
    #[error("cannot read the commit timestamps of '{uri}': {source}")]
    CommitTimestamp {
        /// The table URI, redacted.
        uri: String,
        /// The `dar-log` error.
        #[source]
        source: Box<dar_log::LogError>,
    },
    /// The snapshot's file index could not be built.
    #[error("cannot read the file index of '{uri}': {source}")]
    FileIndex {
        /// The table URI, redacted.
        uri: String,
        /// The `dar-log` error.
        #[source]
        source: Box<dar_log::LogError>,
    },

    /// The `--output` file cannot be created.
    #[error("cannot create output file '{}': {source}", .path.display())]
    CreateOutput {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// Writing the `--output` file failed (nothing was left at its path
    /// that was not there before).
    #[error("cannot write output file '{}': {source}", .path.display())]
    WriteOutput {
        /// The file, as given.
        path: PathBuf,
        /// The writer's error (I/O, Arrow, Parquet).
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },

    /// Standard output is closed (`dar scan T >&-`): there is nowhere to
    /// write the result.
    #[error("standard output is closed; redirect it or use --output FILE")]
    StdoutClosed,

    /// Ctrl-C stopped the command (a partial `--output` file was removed).
    #[error("interrupted")]
    Interrupted,

    /// Writing the output failed.
    #[error("cannot write {format} output: {source}")]
    Write {
        /// The output format.
        format: &'static str,
        /// The writer's error (I/O, Arrow, Parquet).
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },

    /// The SQL query does not parse, plan or run (`dar sql`): DataFusion's
    /// message, or dar's for a Delta table that cannot be read.
    #[cfg(feature = "sql")]
    #[error("{message}")]
    Sql {
        /// The message, on one line.
        message: String,
    },

    /// `dar worker` cannot listen or serve.
    #[cfg(feature = "distributed")]
    #[error("dar worker on {address}: {source}")]
    Worker {
        /// The listening address.
        address: String,
        /// The cause.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },

    /// `dar serve` cannot start or serve.
    #[cfg(feature = "serve")]
    #[error("dar serve: {message}")]
    Serve {
        /// What went wrong, on one line (no credential).
        message: String,
    },

    /// Code below dar panicked (a bug in dar or a library it uses). The
    /// panic is reported as this one line, never as a crash report.
    #[error("internal error: {message} (a bug in dar or a library it uses; please report it)")]
    Internal {
        /// The panic's message and where it happened.
        message: String,
    },

    /// The async runtime could not start.
    #[error("cannot start the async runtime: {source}")]
    Runtime {
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

fn nearest_list(names: &[String]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!(" (nearest: {})", quoted.join(", "))
}

impl CliError {
    /// Wraps a writer error for `format`.
    pub(crate) fn write(
        format: &'static str,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self::Write {
            format,
            source: Box::new(source),
        }
    }

    /// The same error, naming the `--output` file it was writing to.
    pub(crate) fn in_file(self, path: &std::path::Path) -> Self {
        match self {
            Self::Write { source, .. } => Self::WriteOutput {
                path: path.to_path_buf(),
                source,
            },
            other => other,
        }
    }

    /// Whether a broken pipe (the reader of standard output went away, as
    /// with `| head`) is anywhere in the cause chain.
    pub fn is_broken_pipe(&self) -> bool {
        let mut current: Option<&(dyn StdError + 'static)> = Some(self);
        while let Some(e) = current {
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return true;
            }
            if let Some(arrow_schema::ArrowError::IoError(_, io)) =
                e.downcast_ref::<arrow_schema::ArrowError>()
                && io.kind() == std::io::ErrorKind::BrokenPipe
            {
                return true;
            }
            current = e.source();
        }
        false
    }
}

/// The error and its causes on one line (dar-scan's renderer, which the
/// Python module and SQL share).
pub use dar_scan::one_line;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_deduplicated_and_folded() {
        let io = std::io::Error::other("disk\nfull");
        let e = CliError::CreateOutput {
            path: PathBuf::from("out.parquet"),
            source: io,
        };
        assert_eq!(
            one_line(&e),
            "cannot create output file 'out.parquet': disk full"
        );
        let e = CliError::write("csv", std::io::Error::other("inner"));
        assert_eq!(one_line(&e), "cannot write csv output: inner");
    }

    #[test]
    fn broken_pipe_found_in_chain() {
        let e = CliError::write(
            "json",
            arrow_schema::ArrowError::IoError(
                "x".into(),
                std::io::Error::from(std::io::ErrorKind::BrokenPipe),
            ),
        );
        assert!(e.is_broken_pipe());
        assert!(!CliError::write("json", std::io::Error::other("x")).is_broken_pipe());
    }

    #[test]
    fn nearest_names_listed() {
        let e = CliError::UnknownColumn {
            column: "fair".into(),
            nearest: vec!["fare".into(), "day".into()],
        };
        assert_eq!(
            e.to_string(),
            "unknown column 'fair' in --columns (nearest: 'fare', 'day')"
        );
    }
}
