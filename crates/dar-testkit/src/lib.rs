//! Writes small, deterministic Delta tables for dar's tests, benchmarks and
//! samples. Not published.
//!
//! A [`TableWriter`] writes to any [`object_store::ObjectStore`] (a local
//! directory through `LocalFileSystem`, or `InMemory`):
//!
//! * Parquet data files with a chosen layout ([`ParquetOptions`]: row-group
//!   and page sizes, page index on or off, codec, dictionary);
//! * commits with `protocol` (reader 1 / writer 2, or 3 / 7 listing the
//!   features used: `columnMapping`, `deletionVectors`, `timestampNtz`),
//!   `metaData` with the Delta `schemaString`, and `add`s with full stats
//!   (§8: per-leaf min/max/nullCount, truncated strings and timestamps);
//! * partitions (Hive-style directories, §7 values), column mapping
//!   (`col-<uuid>` physical names and Parquet field ids);
//! * deletion vectors through dar-dv's encoder, inline or in DV files
//!   ([`TableWriter::delete_rows`]), merged with a file's existing DV;
//! * classic checkpoints plus `_last_checkpoint` ([`TableWriter::checkpoint`]);
//! * type widening ([`TableWriter::widen_column`]): later files at the new
//!   type, earlier ones and their stats as written, as Delta-Spark leaves them;
//! * a checkpoint with typed `stats_parsed` for any table's JSON log
//!   ([`write_log_checkpoint`]), as Delta-Spark writes one;
//! * tables whose statistics a reader must not believe as written
//!   ([`write_bad_stats_table`]) or that need the rule for widened bounds
//!   ([`write_widened_float_table`]), with their true answers.
//!
//! Everything is seeded: the same calls write byte-identical tables.
//!
//! For logs no writer produces, [`HandTable`] commits JSON actions exactly
//! as a test gives them, built with [`log_json`] (DV pairs, removes,
//! in-commit timestamps); [`write_ict_toggled_table`] is one such table,
//! with in-commit timestamps switched on and off again.
//!
//! For equivalence tests, a writer built `with_kept_rows(true)` answers
//! [`TableWriter::snapshot_rows`] (what a reader must return), and
//! [`random::write_random_table`] writes a seeded random table with all of
//! the above. [`sample::write_sample`] writes the repository's sample table
//! (`cargo run -p dar-testkit -- sample examples/data/sample`).
//! [`claims`] plants hostile lengths in Parquet footers and page indexes
//! (through the Thrift value tree of [`thrift`]).
//!
//! # Example
//!
//! A two-file table in memory, then its log:
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! use arrow_schema::{DataType, Field, Schema};
//! use dar_testkit::{DvStorage, TableWriter};
//! use futures::TryStreamExt;
//! use object_store::{ObjectStore, memory::InMemory, path::Path};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int64, false),
//!     Field::new("city", DataType::Utf8, true),
//! ]));
//! let mut table = TableWriter::builder(store.clone(), Path::from("t"), schema.clone())
//!     .with_partition_columns(["city"])
//!     .with_deletion_vectors(true)
//!     .create()
//!     .await?;
//! let batch = RecordBatch::try_new(schema, vec![
//!     Arc::new(Int64Array::from(vec![1, 2, 3])),
//!     Arc::new(StringArray::from(vec!["Oslo", "Lima", "Oslo"])),
//! ])?;
//! let commit = table.append(&batch).await?; // one file per city
//! assert_eq!(commit.added.len(), 2);
//! let oslo = commit.added[0].path.clone();
//! assert!(oslo.starts_with("city=Oslo/part-00000-"));
//! table.delete_rows(&oslo, &[1], DvStorage::Inline).await?;
//! table.checkpoint().await?;
//! assert_eq!(table.live_rows(), 2);
//!
//! let log: Vec<String> = store
//!     .list(Some(&Path::from("t/_delta_log")))
//!     .map_ok(|meta| meta.location.filename().unwrap_or_default().to_owned())
//!     .try_collect()
//!     .await?;
//! assert_eq!(log.len(), 5); // 3 commits, the checkpoint, _last_checkpoint
//! assert!(log.contains(&"00000000000000000002.checkpoint.parquet".to_owned()));
//! # Ok(())
//! # }
//! ```
//!
//! Section numbers (§) refer to `delta-protocol-for-readers.md`.

mod actions;
mod bad_stats;
mod builder;
mod checkpoint;
mod checkpoint_writer;
#[cfg(unix)]
pub mod child;
pub mod claims;
mod dv;
mod error;
mod extremes;
mod hand;
mod ict_toggled;
mod json;
mod log_checkpoint;
pub mod log_json;
mod log_only;
mod many;
mod naming;
mod parquet;
mod partition;
pub mod random;
pub mod sample;
mod schema;
mod stats;
mod stats_parsed;
pub mod thrift;
mod widen;
mod writer;

pub use actions::DataFile;
pub use bad_stats::{BAD_STATS_FILE, BadStats, TrueAnswers, write_bad_stats_table};
pub use builder::TableWriterBuilder;
pub use checkpoint_writer::{CheckpointOptions, Repeat};
pub use dv::DvStorage;
pub use error::{Result, TestkitError};
pub use extremes::{MAX_DECIMAL_38_2, PARTITION_EXTREMES_COLUMNS, write_partition_extremes};
pub use hand::{HandTable, deeply_nested_parquet};
pub use ict_toggled::{
    ICT_DISABLED_AT, ICT_ENABLED_AT, ICT_TOGGLED_VERSIONS, write_ict_toggled_table,
};
pub use log_checkpoint::write_log_checkpoint;
pub use many::write_many_files;
pub use parquet::{Codec, ParquetOptions};
pub use partition::HIVE_DEFAULT_PARTITION;
pub use schema::{ColumnMappingMode, PARQUET_FIELD_ID_KEY};
pub use stats::{STRING_MAX_TIE_BREAKER, STRING_PREFIX_CHARS};
pub use widen::{WIDENED_DOUBLES, WIDENED_FLOATS, write_widened_float_table};
pub use writer::{COMMIT_INTERVAL_MS, Commit, DEFAULT_START_MS, TableWriter};

/// Re-exported so callers can build DVs' expected rows and inspect descriptors.
pub use dar_dv;
