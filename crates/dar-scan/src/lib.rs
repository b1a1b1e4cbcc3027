//! The engine-agnostic Delta scan of dar: open a table, describe what you
//! want, get a stream of Arrow record batches.
//!
//! `dar-scan` composes the crates below it and owns none of their logic:
//!
//! ```text
//! Table::open ── dar-io TableStore ── dar-log Snapshot (file index)
//!   │
//! ScanBuilder::build ── dar-prune over the file index ─► ScanPlan
//!   │                                         (ScanTask per kept file:
//!   │                                          plain serde data)
//! ScanPlan::execute ── per file (stages): footer ─► row groups ─► pages
//!   │                  ─► DV (dar-dv) ─► one RowSelection ─► parquet
//!   │                  async reader + RowFilter ─► column mapping, casts,
//!   │                  nulls, partition columns ─► residual ─► projection
//!   ▼
//! Stream<Item = Result<RecordBatch>>  (bounded, LIMIT stops all I/O)
//! ```
//!
//! Polled inside a multi-thread Tokio runtime, each file opens and decodes
//! on its own task, so a scan uses every worker thread while batches still
//! come in plan order; files in flight follow the store
//! ([`default_files_in_flight`]) and decoded batches waiting for the
//! consumer stay within a budget ([`ScanRuntime::with_read_ahead_bytes`]).
//!
//! A plan runs anywhere: its [`ScanSpec`] (what to read) and its
//! [`ScanTask`]s (one per file) are plain serde data; another process pairs
//! them with a [`ScanRuntime`] of its own (its store for the spec's table
//! URI) in [`ScanContext::new`] and executes them with [`ScanPlan::new`].
//!
//! Every failure is a [`ScanError`]; [`ScanError::kind`] sorts it into an
//! [`ErrorKind`] (not found, unsupported protocol, invalid argument,
//! storage, corrupt data, ...), [`one_line`] and [`build_error_message`]
//! render it for people. Table options given as text (a version, an RFC
//! 3339 timestamp, `KEY=VALUE` storage options) parse with
//! [`TableOptions::from_pairs`] and its parts ([`parse_timestamp_ms`]).
//!
//! # Example
//!
//! ```
//! use dar_scan::Table;
//! use futures::TryStreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let Some(path) = dar_testdata::table("kernel/table-with-dv-small") else { return Ok(()) };
//! # let uri = path.to_str().unwrap();
//! let table = Table::open(uri).await?;
//! let plan = table
//!     .scan()
//!     .with_columns(["value"])
//!     .with_predicate_sql("value >= 2")
//!     .build()?;
//! let batches: Vec<_> = plan.execute().try_collect().await?;
//! let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
//! assert_eq!(rows, 7); // values 1..=8 survive the deletion vector; 7 are >= 2
//! println!("{:?}", plan.metrics().snapshot());
//! # Ok(())
//! # }
//! ```

mod changes;
mod errors;
mod execution;
mod options;
mod planning;
mod schema;
mod table;

#[cfg(test)]
mod tests;

pub use changes::{CHANGE_TYPE, COMMIT_TIMESTAMP, COMMIT_VERSION, ChangeScan, ChangesBuilder};
pub use errors::error::{Result, ScanError};
pub use errors::kind::ErrorKind;
pub use errors::option_error::{TableOption, TableOptionError};
pub use errors::render::{build_error_message, one_line};
pub use execution::context::ScanContext;
pub use execution::metrics::{MetricsSnapshot, ScanMetrics, Stage};
pub use execution::runtime::{
    DEFAULT_DV_CACHE_BYTES, DEFAULT_READ_AHEAD_BYTES, ScanRuntime, default_files_in_flight,
};
pub use options::{parse_storage_options, parse_timestamp_ms, parse_version};
pub use planning::builder::ScanBuilder;
pub use planning::files::{FileColumns, files_batch};
pub use planning::plan::ScanPlan;
pub use planning::scan_options::{DEFAULT_BATCH_SIZE, ScanOptions};
pub use planning::spec::ScanSpec;
pub use planning::split::{split_by_bytes, split_by_bytes_exact};
pub use planning::statistics::{ColumnStatistics, Estimate, PlanStatistics};
pub use planning::task::{FileAccess, ScanTask, SelectionRun};
pub use schema::views::view_type;
pub use table::{
    DEFAULT_CACHE_DIR_BYTES, DEFAULT_DATA_CACHE_BYTES, Table, TableOptions, VersionSpec,
};

/// Re-exported: the deletion-vector descriptor of a [`ScanTask`].
pub use dar_dv::DvDescriptor;
/// Re-exported: one end of a change range ([`Table::changes`]).
pub use dar_log::ChangeBound;
/// Re-exported: when a table's file statistics are parsed
/// ([`TableOptions::with_stats_loading`]).
pub use dar_log::StatsLoading;
/// Re-exported: the typed partition values of a [`ScanTask`].
pub use dar_prune::Scalar;
/// Re-exported so callers can build predicates without naming `dar-prune`.
pub use dar_prune::{Expr, col, lit};
