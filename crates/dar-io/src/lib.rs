//! Object-store access for dar: measured, planned, and cheap on slow networks.
//!
//! On object storage every request costs a round trip and every byte costs
//! bandwidth. `dar-io` owns everything between "this decoder needs these
//! byte ranges" and the store, for any `object_store` backend, and knows
//! nothing about Delta:
//!
//! - [`TableStore`]: a table URI (path, `file://`, `s3://`, `memory://`,
//!   Azure/GCS behind features) to a layered store with retries, a
//!   concurrency limit and metering; credentials never printed
//!   ([`StorageOptions`], [`redact_uri`]).
//! - [`MeteredStore`] / [`IoMetrics`]: requests, bytes and latency per
//!   [`ObjectClass`] (log, checkpoint, footer, page data, DV, other).
//! - [`plan_ranges`]: a pure range planner over a [`CostParams`] model;
//!   [`fetch_ranges`] executes a plan for any object (e.g. DV files).
//! - [`CostModel`]: per-backend defaults that learn from observed requests
//!   (latency, bandwidth, and the request cost of a server that serves one
//!   request at a time).
//! - Local files: a plan's fetches of one file read in one blocking call
//!   (`pread`s of an open file), metered as requests
//!   ([`IoSnapshot::local_reads`]); a large read's buffer goes back to the
//!   table's pool when its bytes are dropped, for the next read
//!   ([`IoSnapshot::local_buffers_reused`]).
//! - [`ParquetReader`]: a parquet `AsyncFileReader` with a one-request footer,
//!   whole-object reads of small files, planned range reads and a shared
//!   [`MetadataCache`], reading through a [`RangeCache`] of fetched byte
//!   ranges (memory, and an opt-in disk tier) when the store has one.
//! - [`RetryPolicy`]: the one retry policy, handed to object_store's HTTP
//!   client (jittered backoff, attempt and time caps, connect timeout);
//!   [`CheckedStore`] checks every body's length and retries nothing.
//!   `testing::FaultStore` (feature `testing`) injects faults for tests.
//!
//! # Example
//!
//! ```
//! use dar_io::{ObjectClass, StorageOptions, TableStore};
//! use object_store::{ObjectStoreExt, PutPayload};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let table = TableStore::open("memory://demo/table", StorageOptions::new())?;
//! let log = table.child("_delta_log/00000000000000000000.json");
//! table.store().put(&log, PutPayload::from_static(b"{\"commitInfo\":{}}\n")).await?;
//!
//! let body = table.store().get(&log).await?.bytes().await?;
//! assert_eq!(body.len(), 18);
//!
//! let io = table.metrics().snapshot();
//! assert_eq!(io.class(ObjectClass::Log).requests, 1);
//! assert_eq!(io.class(ObjectClass::Log).bytes, 18);
//! # Ok(())
//! # }
//! ```

mod buffer_pool;
mod checked;
mod class;
mod cost;
mod error;
mod fetch;
mod footer_cache;
mod footer_check;
mod footer_types;
mod identity;
mod local;
mod metered;
mod options;
mod planner;
mod range_cache;
pub mod reader;
mod redacted;
mod retry;
mod store;
mod thrift_walk;
mod wrapper;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use checked::CheckedStore;
pub use class::ObjectClass;
pub use cost::{CostModel, CostParams, Observation, ProbeBudget, SharedCostModel};
pub use error::{Error, Result};
pub use fetch::fetch_ranges;
pub use footer_cache::{CacheStats, CachedMetadata, MetadataCache};
pub use footer_check::MAX_SCHEMA_DEPTH;
pub use identity::{ObjectId, ObjectVersion, StoreId};
pub use local::{LocalFiles, LocalStamp};
pub use metered::{CacheCounts, ClassStats, IoMetrics, IoSnapshot, MeteredStore};
pub use options::{REDACTED, StorageOptions, redact_uri};
pub use planner::{FetchSlice, RangePlan, estimate_time, plan_ranges};
pub use range_cache::{DEFAULT_DISK_BUDGET, RangeCache, RangeCacheUsage};
pub use reader::{ParquetReader, RangeStrategy};
pub use retry::RetryPolicy;
pub use store::{Backend, TableStore, TableStoreBuilder};
