//! [`ScanRuntime`]: what a scan needs from the machine that runs it.
//!
//! The store (with its credentials, I/O metrics and footer cache), stores
//! for data files kept elsewhere, the deletion-vector cache, how many
//! files to read at once and how many decoded bytes may wait for the
//! consumer. None of it is serialized: a worker builds its own
//! from its configuration and pairs it with a received [`crate::ScanSpec`].

use std::sync::Arc;

use dar_dv::DvCache;
use dar_io::{StorageOptions, TableStore, redact_uri};

use crate::errors::error::{Result, ScanError};
use crate::execution::readahead::Admission;
use crate::planning::task::ScanTask;

/// Default byte budget of a table's deletion-vector cache.
pub const DEFAULT_DV_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// Default byte budget of batches decoded ahead of the consumer, over all
/// files of a scan.
pub const DEFAULT_READ_AHEAD_BYTES: usize = 32 * 1024 * 1024;

/// Files in flight when a scan does not say: on a remote store every
/// file's footer should be in flight at once (a request costs a round
/// trip, not CPU), up to 64; on local disk one per core and one more: a
/// file waiting for its next row group's read leaves its core to the
/// extra file (one per core left a core idle through every read: 6-10%
/// of W1.big, W4 and W5.scattered at full scale); more would only hold
/// more pages and decoder state.
pub fn default_files_in_flight(remote: bool) -> usize {
    if remote {
        64
    } else {
        std::thread::available_parallelism().map_or(1, usize::from) + 1
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
    /// More files in flight while they are small: at most this many, of
    /// at most these bytes in all (see [`Admission`]).
    pub(crate) small_files: Option<(usize, u64)>,
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
            small_files: None,
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

    /// Up to `max_files` in flight while their sizes sum to at most
    /// `small_bytes` (besides [`Self::files_in_flight`] of any size).
    pub(crate) fn with_small_files_in_flight(mut self, max_files: usize, small_bytes: u64) -> Self {
        self.small_files = Some((max_files, small_bytes));
        self
    }

    /// How many files run at once.
    pub(crate) fn admission(&self) -> Admission {
        let files = self.files_in_flight().max(1);
        match self.small_files {
            Some((max_files, small_bytes)) => Admission {
                files,
                max_files: max_files.max(files),
                small_bytes,
            },
            None => Admission::files(files),
        }
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

    /// A runtime for the table at `table_uri` (for example
    /// [`crate::ScanSpec::table_uri`] of a received spec), opened with
    /// this machine's `storage` options (credentials, endpoints) and the
    /// usual environment variables; defaults as [`ScanRuntime::new`].
    ///
    /// # Errors
    ///
    /// [`ScanError::Open`] when the URI or the options do not make a
    /// store (the URI in the error is redacted).
    pub fn open(table_uri: &str, storage: StorageOptions) -> Result<Self> {
        let store = TableStore::open(table_uri, storage).map_err(|source| ScanError::Open {
            uri: redact_uri(table_uri),
            source: Box::new(source),
        })?;
        Ok(Self::new(store))
    }

    /// Whether the table-store key `key` lies under the table root.
    pub(crate) fn is_inside_root(&self, key: &str) -> bool {
        let root = self.store.root().as_ref();
        root.is_empty()
            || key
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    }

    /// The store that holds `task`'s data file: the table's, or the one
    /// configured for the file's other origin. Refuses a file outside the
    /// table root when paths are confined to it.
    pub(crate) fn store_for(&self, task: &ScanTask) -> Result<&TableStore> {
        let outside = || ScanError::OutsideRoot {
            what: "data file",
            path: task.log_path.clone(),
        };
        match &task.store_origin {
            None => {
                if self.confine_to_root && !self.is_inside_root(&task.object_path) {
                    return Err(outside());
                }
                Ok(&self.store)
            }
            Some(_) if self.confine_to_root => Err(outside()),
            Some(origin) => self
                .other_stores
                .iter()
                .find(|(o, _)| o == origin)
                .map(|(_, s)| s)
                .ok_or_else(|| ScanError::OtherStore {
                    path: task.log_path.clone(),
                    origin: origin.clone(),
                }),
        }
    }
}
