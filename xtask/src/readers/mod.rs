//! The readers a case is measured with, and how one measured run is
//! started (through the launcher) and checked.

pub(crate) mod dar;
mod dar_sql;
mod floor;
pub mod launch;
mod process;

use std::collections::BTreeMap;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

pub use dar::read_dar;
pub use dar_sql::read_dar_sql;
pub use floor::read_floor;
pub use process::{Outcome, RunContext, run};

use crate::workload::{Action, Case};

/// A reader in the benchmark.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Reader {
    /// dar-scan in a small Rust runner (timed from open to last batch).
    Dar,
    /// The `dar` command line (`dar scan --format null`), whole process.
    DarCli,
    /// `dar sql` (DataFusion over dar-datafusion), whole process; in
    /// session mode dar's provider in one `SessionContext`, in-process.
    DarSql,
    /// dar's Python module as a lazy Polars frame (`dar.scan_polars`),
    /// streaming batches as the `polars` reader does.
    DarPolars,
    /// dar's Python module: `dar.Table` and `Table.scan`, as Arrow batches.
    DarPython,
    /// Python `deltalake` (`QueryBuilder`).
    DeltaRs,
    /// `polars.scan_delta`, streaming batches.
    Polars,
    /// DuckDB with the `delta` extension.
    Duckdb,
    /// `daft.read_deltalake`.
    Daft,
    /// The arrow-rs floor: parquet's async reader, no Delta logic.
    ArrowRs,
}

impl Reader {
    /// Every reader, in report order.
    pub const ALL: [Reader; 10] = [
        Reader::Dar,
        Reader::DarCli,
        Reader::DarSql,
        Reader::DarPolars,
        Reader::DarPython,
        Reader::DeltaRs,
        Reader::Polars,
        Reader::Duckdb,
        Reader::Daft,
        Reader::ArrowRs,
    ];

    /// The name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Reader::Dar => "dar",
            Reader::DarCli => "dar-cli",
            Reader::DarSql => "dar-sql",
            Reader::DarPolars => "dar-polars",
            Reader::DarPython => "dar-python",
            Reader::DeltaRs => "delta-rs",
            Reader::Polars => "polars",
            Reader::Duckdb => "duckdb",
            Reader::Daft => "daft",
            Reader::ArrowRs => "arrow-rs",
        }
    }

    /// Whether it is one of the peers dar is compared with.
    pub fn is_peer(self) -> bool {
        matches!(
            self,
            Reader::DeltaRs | Reader::Polars | Reader::Duckdb | Reader::Daft
        )
    }

    /// Whether it is one of dar's own readers.
    pub fn is_dar(self) -> bool {
        matches!(
            self,
            Reader::Dar | Reader::DarCli | Reader::DarSql | Reader::DarPolars | Reader::DarPython
        )
    }

    /// Whether it runs dar's Python module (whose wheel the bench builds).
    pub fn needs_dar_module(self) -> bool {
        matches!(self, Reader::DarPolars | Reader::DarPython)
    }

    /// Whether it is the arrow-rs floor.
    pub fn is_floor(self) -> bool {
        self == Reader::ArrowRs
    }

    /// Whether its time covers the whole process (start-up included).
    pub fn whole_process(self) -> bool {
        matches!(self, Reader::DarCli | Reader::DarSql)
    }

    /// Why the reader cannot run two queries on one opened table, if so.
    pub fn cannot_hold_a_session(self) -> Option<&'static str> {
        match self {
            Reader::DarCli => Some("one process per query"),
            Reader::ArrowRs => Some("not a Delta reader: no table to hold open"),
            Reader::Daft => Some("a Daft frame plans from the log again for every query"),
            Reader::DarPolars => Some("dar's module holds a table as `dar-python`"),
            _ => None,
        }
    }

    /// Why the reader cannot run `case` at all (before trying), if so.
    pub fn cannot_run(self, case: &Case) -> Option<&'static str> {
        match (case.action, self) {
            (Action::Files | Action::Count | Action::Plan, Reader::ArrowRs) => {
                Some("not a Delta reader: no log to load")
            }
            (Action::Plan, Reader::DarSql | Reader::DarPolars | Reader::DarPython) => {
                Some("planned through the dar runner and `dar files --filter`")
            }
            (Action::Plan, Reader::Polars | Reader::Duckdb | Reader::Daft) => {
                Some("no API that plans a Delta scan's files without reading them")
            }
            (Action::Files, Reader::DarSql) => Some("SQL has no file listing"),
            (Action::Count, Reader::DarSql) => {
                Some("a SQL count reads the data files, which log-only tables lack")
            }
            (Action::Files | Action::Changes | Action::Count, Reader::DarPolars) => {
                Some("a Polars frame reads rows of the table only")
            }
            (Action::Files | Action::Changes | Action::Count, Reader::DarPython) => {
                Some("the bench reads rows through dar's module")
            }
            (Action::Files, Reader::Polars | Reader::Duckdb | Reader::Daft) => {
                Some("no API that lists a Delta table's active files")
            }
            (Action::Count, Reader::Polars | Reader::Duckdb | Reader::Daft) => {
                Some("no API that counts a Delta table's rows from its log alone")
            }
            (Action::Changes, Reader::ArrowRs) => Some("not a Delta reader: no change feed"),
            (Action::Changes, Reader::Polars | Reader::Duckdb | Reader::Daft) => {
                Some("no API that reads a Delta table's change data feed")
            }
            _ => None,
        }
    }
}

/// What one reader process is asked to do (passed as JSON in its argv).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadSpec {
    /// The reader (`delta-rs`, ...), for the Python script.
    pub reader: Reader,
    /// Scan or list files.
    pub action: Action,
    /// Table URI (a local path or `s3://bucket/prefix`).
    pub uri: String,
    /// Projected columns.
    pub columns: Vec<String>,
    /// SQL filter text.
    pub filter: Option<String>,
    /// Row limit.
    pub limit: Option<usize>,
    /// The first version of a change feed read ([`Action::Changes`]).
    #[serde(default)]
    pub changes_from: Option<u64>,
    /// Write the result as an Arrow IPC stream to stdout.
    pub verify: bool,
    /// Open the table once, run the query twice; `secs` times the second
    /// query and `first` the first (the result is the second's).
    #[serde(default)]
    pub session: bool,
    /// Object-store options (`aws_endpoint`, ...), for S3.
    pub storage: Option<BTreeMap<String, String>>,
    /// The floor's files, relative to `uri`, with their DV-deleted rows.
    #[serde(default)]
    pub files: Vec<crate::fixtures::FileEntry>,
}

/// The last line a runner writes to stderr.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunnerResult {
    /// Rows returned.
    pub rows: u64,
    /// Seconds from opening the table to the last batch.
    pub secs: f64,
    /// Process CPU seconds in the same span.
    pub cpu_secs: f64,
    /// Session mode: the first query after opening (`secs` and `cpu_secs`
    /// are then the second query's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<Phase>,
}

/// The time of one query of a session.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Phase {
    /// Seconds.
    pub secs: f64,
    /// Process CPU seconds.
    pub cpu_secs: f64,
}

/// Prints a runner's result line.
pub fn print_result(r: &RunnerResult) {
    match serde_json::to_string(r) {
        Ok(json) => eprintln!("RESULT {json}"),
        Err(e) => eprintln!("ERROR {e}"),
    }
}

/// The runners' tokio runtime: multi-threaded, one worker per core (as an
/// embedding service would run a scan).
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

/// The spec's object-store options (empty for a local table).
fn storage_options(spec: &ReadSpec) -> dar_io::StorageOptions {
    spec.storage
        .iter()
        .flatten()
        .fold(dar_io::StorageOptions::new(), |o, (k, v)| {
            o.with(k, v.clone())
        })
}

/// Process CPU seconds so far (all threads).
pub fn process_cpu_secs() -> f64 {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID)
        .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
        .unwrap_or(0.0)
}
