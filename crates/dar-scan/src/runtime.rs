//! [`ScanRuntime`]: what a scan needs from the machine that runs it.
//!
//! The store (with its credentials, I/O metrics and footer cache), stores
//! for data files kept elsewhere, the deletion-vector cache, how many
//! files to read at once and how many decoded bytes may wait for the
//! consumer. None of it is serialized: a worker builds its own
//! from its configuration and pairs it with a received [`crate::ScanSpec`].

use std::sync::Arc;

use dar_dv::DvCache;
use dar_io::TableStore;

use crate::readahead::DEFAULT_READ_AHEAD_BYTES;
use crate::table::DEFAULT_DV_CACHE_BYTES;

/// Files in flight when a scan does not say: on a remote store every
/// file's footer should be in flight at once (a request costs a round
/// trip, not CPU), up to 64; on local disk one per core (at least 2): each
/// file decoding holds its pages and decoder state, and a file opens in
/// microseconds.
pub fn default_files_in_flight(remote: bool) -> usize {
    if remote {
        64
    } else {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .max(2)
    }
}

/// The machine-local half of a scan; consuming `with_*` setters.
#[derive(Debug, Clone)]
pub struct ScanRuntime {
    pub(crate) store: TableStore,
    /// Stores for data files on other stores, by origin.
    pub(crate) other_stores: Vec<(String, TableStore)>,
    /// Refuse data and DV files outside the table root.
    pub(crate) confine_to_root: bool,
    pub(crate) dv_cache: Arc<DvCache>,
    /// `None`: [`default_files_in_flight`] for the store.
    pub(crate) concurrency: Option<usize>,
    pub(crate) read_ahead_bytes: usize,
}

impl ScanRuntime {
    /// A runtime over the table's store (opened by the caller with its own
    /// storage options, e.g. `TableStore::open(spec.table_uri(), options)`),
    /// with a fresh 64 MiB DV cache, files in flight chosen for the store
    /// ([`default_files_in_flight`]) and a 32 MiB read-ahead budget.
    pub fn new(store: TableStore) -> Self {
        Self {
            store,
            other_stores: Vec::new(),
            confine_to_root: false,
            dv_cache: Arc::new(DvCache::new(DEFAULT_DV_CACHE_BYTES)),
            concurrency: None,
            read_ahead_bytes: DEFAULT_READ_AHEAD_BYTES,
        }
    }

    /// Shares `cache` (for example one per table across a worker's queries).
    pub fn with_dv_cache(mut self, cache: Arc<DvCache>) -> Self {
        self.dv_cache = cache;
        self
    }

    /// Files read at the same time (at least 1; default
    /// [`default_files_in_flight`] for the store).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// Bytes of decoded batches that files not yet consumed may hold
    /// ahead of the consumer, over all files of a scan (default 32 MiB).
    /// Each file also holds at most one batch besides.
    pub fn with_read_ahead_bytes(mut self, bytes: usize) -> Self {
        self.read_ahead_bytes = bytes;
        self
    }

    /// Files in flight: the one set, or the store's default.
    pub(crate) fn files_in_flight(&self) -> usize {
        self.concurrency
            .unwrap_or_else(|| default_files_in_flight(self.store.backend().is_remote()))
    }

    /// A store for data files on another store (see
    /// [`crate::TableOptions::with_store_for`]).
    pub fn with_store_for(mut self, origin: impl Into<String>, store: TableStore) -> Self {
        self.other_stores.push((origin.into(), store));
        self
    }

    /// Refuse data and DV files outside the table root (see
    /// [`crate::TableOptions::with_paths_confined_to_root`]).
    pub fn with_paths_confined_to_root(mut self, confine: bool) -> Self {
        self.confine_to_root = confine;
        self
    }

    /// The table's store.
    pub fn store(&self) -> &TableStore {
        &self.store
    }
}
