//! [`ScanRuntime`]: what a scan needs from the machine that runs it.
//!
//! The store (with its credentials, I/O metrics and footer cache), stores
//! for data files kept elsewhere, the deletion-vector cache and how many
//! files to read at once. None of it is serialized: a worker builds its own
//! from its configuration and pairs it with a received [`crate::ScanSpec`].

use std::sync::Arc;

use dar_dv::DvCache;
use dar_io::TableStore;

use crate::builder::DEFAULT_CONCURRENCY;
use crate::table::DEFAULT_DV_CACHE_BYTES;

/// The machine-local half of a scan; consuming `with_*` setters.
#[derive(Debug, Clone)]
pub struct ScanRuntime {
    pub(crate) store: TableStore,
    /// Stores for data files on other stores, by origin.
    pub(crate) other_stores: Vec<(String, TableStore)>,
    /// Refuse data and DV files outside the table root.
    pub(crate) confine_to_root: bool,
    pub(crate) dv_cache: Arc<DvCache>,
    pub(crate) concurrency: usize,
}

impl ScanRuntime {
    /// A runtime over the table's store (opened by the caller with its own
    /// storage options, e.g. `TableStore::open(spec.table_uri(), options)`),
    /// with a fresh 64 MiB DV cache and the default concurrency.
    pub fn new(store: TableStore) -> Self {
        Self {
            store,
            other_stores: Vec::new(),
            confine_to_root: false,
            dv_cache: Arc::new(DvCache::new(DEFAULT_DV_CACHE_BYTES)),
            concurrency: DEFAULT_CONCURRENCY,
        }
    }

    /// Shares `cache` (for example one per table across a worker's queries).
    pub fn with_dv_cache(mut self, cache: Arc<DvCache>) -> Self {
        self.dv_cache = cache;
        self
    }

    /// Files read at the same time (default 4; at least 1).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
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
