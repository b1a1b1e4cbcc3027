//! Delta log replay into a snapshot with a columnar file index.
//!
//! dar-log reads a Delta table's `_delta_log/` from any
//! [`object_store::ObjectStore`] and produces a [`Snapshot`]: the protocol
//! (checked against what dar can read), metadata, schema, table properties,
//! app transactions, domains, commit timestamps and the **file index**, the
//! active files as Arrow columns (paths, sizes, typed partition values,
//! per-leaf min / max / null count, deletion-vector descriptors) that
//! pruning sweeps in one vectorized pass.
//!
//! How a snapshot is built:
//! 1. [`listing`]: the `_last_checkpoint` hint, a listing from it, the
//!    newest complete checkpoint at or below the target and the contiguous
//!    commits after it.
//! 2. [`commit`] and [`checkpoint`]: actions from JSON lines and from
//!    checkpoint Parquet (only the needed columns; V2 sidecars included),
//!    read through `dar-io`'s `ParquetReader` ([`checkpoint::CheckpointIo`]:
//!    footer cache, range planning, requests metered as checkpoint reads).
//! 3. [`replay`]: newest-first reconciliation keyed by (path, DV id), straight
//!    into Arrow builders ([`add_columns`]).
//! 4. [`TableConfiguration`]: the protocol checked (reader features dar
//!    does not implement are refused; the [`ProtocolReport`] says, feature
//!    by feature, what dar reads) and what follows from it and the
//!    metadata (schema, column mapping, change feed, in-commit timestamps),
//!    derived once for the version.
//! 5. [`file_index`]: typing partition values ([`partition`]) and stats
//!    ([`stats`]) against the [`schema`], eagerly or on first use.
//!
//! Time travel by timestamp ([`time_travel`]) and the change data feed
//! ([`changes`]: the commits of a range, each judged by the configuration
//! in force at it) resolve timestamps to versions through one history.
//!
//! ```
//! use std::sync::Arc;
//!
//! use object_store::memory::InMemory;
//! use object_store::path::Path;
//! use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
//! let commit = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
//! {"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"x\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"day\",\"type\":\"date\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["day"],"configuration":{}}}
//! {"add":{"path":"day=2024-01-02/a.parquet","partitionValues":{"day":"2024-01-02"},"size":100,"modificationTime":0,"dataChange":true,"stats":"{\"numRecords\":3,\"minValues\":{\"x\":1},\"maxValues\":{\"x\":9},\"nullCount\":{\"x\":0}}"}}
//! "#;
//! let path = Path::from("tables/t/_delta_log/00000000000000000000.json");
//! store.put(&path, PutPayload::from(commit)).await?;
//!
//! let snapshot = dar_log::Snapshot::load(store, Path::from("tables/t")).await?;
//! assert_eq!(snapshot.version(), 0);
//! assert_eq!(snapshot.partition_columns(), ["day"]);
//! let files = snapshot.file_index()?;
//! assert_eq!(files.len(), 1);
//! assert_eq!(files.object_path(0), "tables/t/day=2024-01-02/a.parquet");
//! assert_eq!(files.stats.num_records.value(0), 3);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

pub mod actions;
pub mod add_columns;
pub mod changes;
pub mod checkpoint;
pub mod commit;
mod duplicates;
pub mod error;
pub mod file_index;
mod history;
pub mod listing;
mod parallel;
pub mod partition;
pub mod paths;
pub mod protocol;
pub mod replay;
mod scalar;
pub mod schema;
pub mod snapshot;
pub mod stats;
mod string_concat;
mod table_configuration;
pub mod time_travel;

pub use changes::{ChangeBound, ChangeFeed, ChangeSource, CommitChanges};
pub use error::{LogError, Result};
pub use file_index::{FileIndex, IndexStats, StatsLoading};
pub use paths::{FileLocation, TablePaths};
pub use protocol::ProtocolReport;
pub use snapshot::{FileIndexMode, Snapshot, SnapshotBuilder, TableHeader};
pub use table_configuration::{InCommitTimestamps, TableConfiguration};
