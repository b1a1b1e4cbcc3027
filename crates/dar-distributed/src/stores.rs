//! [`WorkerStores`]: how a worker reaches tables, with its own storage
//! configuration, and what it scanned.
//!
//! A received scan names its table by URI only (credentials removed). The
//! worker opens the store for that URI with the storage options it was
//! started with (and the environment's usual variables, as `dar-io` reads
//! them), once per table: later scans of the same table share the store's
//! footer cache and the DV cache, and every table's store reads through
//! the worker's one byte-range cache ([`WorkerStores::with_data_cache`]),
//! so a repeated query fetches none of the pages it fetched before. The opened tables are bounded (see
//! [`WorkerStores::MAX_TABLES`] and [`WorkerStores::TABLE_IDLE`]): a worker
//! serving many tables keeps the recent ones, not all it ever saw.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use dar_io::{RangeCache, StorageOptions, TableStore};
use dar_scan::{ScanMetrics, ScanRuntime};
use datafusion::common::{DataFusionError, Result};
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

/// Scans kept by [`WorkerStores::recent_scans`].
const RECENT_SCANS: usize = 256;

/// One scan a worker ran: its table, its files and its live metrics.
#[derive(Debug, Clone)]
pub struct ScanRecord {
    /// The table URI (credentials removed).
    pub table_uri: String,
    /// `add.path` of every file the worker was given, in task order.
    pub files: Vec<String>,
    /// The scan's metrics (files read, rows, bytes), live while it runs.
    pub metrics: ScanMetrics,
}

/// A worker's name, storage configuration, opened stores and recent scans.
pub struct WorkerStores {
    name: String,
    storage: StorageOptions,
    /// The byte-range cache every table's store reads through.
    data_cache: DataCache,
    /// Runtimes by table URI, bounded by count and idle time.
    runtimes: Cache<String, ScanRuntime>,
    recent: Mutex<VecDeque<ScanRecord>>,
}

/// Which stores read through the worker's byte-range cache.
#[derive(Debug, Clone)]
enum DataCache {
    /// Stores on object storage, through one cache of
    /// [`dar_scan::DEFAULT_DATA_CACHE_BYTES`] (local reads have the page
    /// cache of the operating system).
    RemoteDefault(RangeCache),
    /// Every store, through this cache.
    All(RangeCache),
}

fn runtimes(max_tables: u64, idle: Duration) -> Cache<String, ScanRuntime> {
    Cache::builder()
        .max_capacity(max_tables)
        .time_to_idle(idle)
        .eviction_policy(EvictionPolicy::lru())
        .build()
}

impl std::fmt::Debug for WorkerStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerStores")
            .field("name", &self.name)
            .field("storage", &self.storage)
            .field("open_tables", &self.runtimes.entry_count())
            .finish_non_exhaustive()
    }
}

impl WorkerStores {
    /// Tables a worker keeps open at most (least recently used go first).
    ///
    /// Each open table holds a footer cache and a DV cache of up to 64 MiB
    /// each, so 32 tables bound what the caches may hold near 4 GiB, while
    /// covering the tables of any one query (a join reads a handful). A
    /// table dropped from here is reopened by its next scan: building a
    /// store does no I/O; only its caches start empty. A scan in flight
    /// keeps its own runtime.
    pub const MAX_TABLES: u64 = 32;

    /// How long a table nobody scans stays open (10 minutes): long enough to
    /// span the stages of a query and the queries of a session, short enough
    /// that the caches of a table gone cold are given back.
    pub const TABLE_IDLE: Duration = Duration::from_secs(600);

    /// A worker called `name` (how errors name it, e.g. `worker
    /// 127.0.0.1:50051`) that opens tables with `storage`, keeping at most
    /// [`WorkerStores::MAX_TABLES`] open, none idle longer than
    /// [`WorkerStores::TABLE_IDLE`].
    pub fn new(name: impl Into<String>, storage: StorageOptions) -> Self {
        Self {
            name: name.into(),
            storage,
            data_cache: DataCache::RemoteDefault(RangeCache::new(
                dar_scan::DEFAULT_DATA_CACHE_BYTES,
            )),
            runtimes: runtimes(Self::MAX_TABLES, Self::TABLE_IDLE),
            recent: Mutex::new(VecDeque::new()),
        }
    }

    /// Keeps at most `max_tables` tables open, none idle longer than `idle`
    /// (instead of [`WorkerStores::MAX_TABLES`] and
    /// [`WorkerStores::TABLE_IDLE`]); tables already open are closed.
    pub fn with_table_bounds(mut self, max_tables: u64, idle: Duration) -> Self {
        self.runtimes = runtimes(max_tables, idle);
        self
    }

    /// Every table's store reads through `cache` (one budget for the whole
    /// worker, shared by its tables and queries), whatever its backend.
    /// Default: a [`dar_scan::DEFAULT_DATA_CACHE_BYTES`] memory cache for
    /// tables on object storage.
    pub fn with_data_cache(mut self, cache: RangeCache) -> Self {
        self.data_cache = DataCache::All(cache);
        self
    }

    /// The store of `uri`, reading through the worker's cache.
    fn open_store(&self, uri: &str) -> dar_io::Result<TableStore> {
        let store = TableStore::open(uri, self.storage.clone())?;
        Ok(match &self.data_cache {
            DataCache::All(cache) => store.with_range_cache(cache.clone()),
            DataCache::RemoteDefault(cache) if store.backend().is_remote() => {
                store.with_range_cache(cache.clone())
            }
            DataCache::RemoteDefault(_) => store,
        })
    }

    /// Tables open now.
    pub fn open_tables(&self) -> u64 {
        self.runtimes.run_pending_tasks();
        self.runtimes.entry_count()
    }

    /// The worker's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The runtime for the table at `uri`: its store opened with this
    /// worker's storage options, once.
    pub(crate) fn runtime(&self, uri: &str) -> Result<ScanRuntime> {
        // Concurrent first scans of one table open it once.
        self.runtimes
            .try_get_with_by_ref(uri, || self.open_store(uri).map(ScanRuntime::new))
            .map_err(|e| {
                DataFusionError::Execution(format!("cannot open the store of table '{uri}': {e}"))
            })
    }

    pub(crate) fn record(&self, scan: ScanRecord) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == RECENT_SCANS {
            recent.pop_front();
        }
        recent.push_back(scan);
    }

    /// The last scans this worker received (up to 256), oldest first.
    pub fn recent_scans(&self) -> Vec<ScanRecord> {
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests;
