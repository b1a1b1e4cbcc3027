//! Fetching DVs through `object_store`, and [`DvCache`], the per-table cache
//! that makes each DV cost one ranged read no matter how many scans use it.
//!
//! Locations: a `u` DV lives under the table root and a `p` DV at an absolute
//! URI. Both are URLs; the store passed in is rooted at the URL's origin, the
//! convention of `object_store::parse_url` (for `s3://bucket/table` the store
//! is the bucket's and the object path is `table/...`; for a local table,
//! `LocalFileSystem::new()` and the absolute path). Callers that map URLs to
//! stores differently resolve the path themselves and use
//! [`DvCache::load_at`].

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use tokio::sync::OnceCell;
use url::Url;

use crate::decode::{self, decode_file_bytes, decode_inline, fetch_range};
use crate::descriptor::{DvDescriptor, StorageType};
use crate::error::{DvError, DvSource, Result};
use crate::rows::DeletedRows;

/// Object-store path of a DV file URL, checking it is on the table's store.
pub fn store_path(dv: &DvDescriptor, table_root: &Url, file: &Url) -> Result<Path> {
    let same_store = file.scheme() == table_root.scheme()
        && file.host_str() == table_root.host_str()
        && file.port_or_known_default() == table_root.port_or_known_default();
    if !same_store {
        return Err(DvError::InvalidPath {
            dv: dv.source(),
            reason: format!(
                "DV file {} is not on the table's store ({}://{})",
                file.path(),
                table_root.scheme(),
                table_root.host_str().unwrap_or("")
            ),
        });
    }
    Path::from_url_path(file.path()).map_err(|e| DvError::InvalidPath {
        dv: dv.source(),
        reason: e.to_string(),
    })
}

/// Reads `dv` without caching: no I/O for an empty or inline DV, otherwise
/// one ranged read of exactly [`crate::fetch_range`] at `location`.
pub async fn fetch_at(
    store: &dyn ObjectStore,
    location: &Path,
    dv: &DvDescriptor,
) -> Result<DeletedRows> {
    fetch_with(location, dv, |range| store.get_range(location, range)).await
}

/// Reads `dv` without caching, `get` supplying the bytes of
/// [`crate::fetch_range`] of the DV file at `location` (for callers that
/// fetch many DVs of one file together); no call for an empty or inline DV.
/// A body of the wrong length is an error naming the file.
pub async fn fetch_with<F, Fut>(location: &Path, dv: &DvDescriptor, get: F) -> Result<DeletedRows>
where
    F: FnOnce(Range<u64>) -> Fut,
    Fut: Future<Output = object_store::Result<Bytes>>,
{
    if dv.is_empty() {
        return Ok(DeletedRows::default());
    }
    if dv.storage_type() == StorageType::Inline {
        return decode_inline(dv);
    }
    let range = fetch_range(dv);
    let bytes = get(range.clone()).await.map_err(|source| DvError::Fetch {
        dv: DvSource::File {
            path: location.to_string(),
            offset: dv.effective_offset(),
        },
        source,
    })?;
    decode_file_bytes(dv, location.as_ref(), range.start, &bytes)
}

/// Reads `dv` of the table at `table_root` without caching (see
/// [`fetch_at`]); the store is rooted at the URL's origin.
pub async fn fetch(
    store: &dyn ObjectStore,
    table_root: &Url,
    dv: &DvDescriptor,
) -> Result<DeletedRows> {
    match dv.file_url(table_root)? {
        Some(url) if !dv.is_empty() => {
            fetch_at(store, &store_path(dv, table_root, &url)?, dv).await
        }
        _ => fetch_at(store, &Path::default(), dv).await,
    }
}

/// Counters of a [`DvCache`], for metrics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DvCacheStats {
    /// Loads answered from the cache (including loads that waited on a
    /// concurrent first load of the same DV).
    pub hits: u64,
    /// Loads that decoded (and, for file DVs, fetched) the DV.
    pub loads: u64,
    /// Entries dropped to stay within the byte budget.
    pub evictions: u64,
    /// Bytes held now (see [`DeletedRows::memory_size`]).
    pub bytes: usize,
    /// Entries held now.
    pub entries: usize,
}

type Key = (String, String);

#[derive(Debug)]
struct Entry {
    cell: Arc<OnceCell<Arc<DeletedRows>>>,
    /// `Some` once loaded and counted against the budget.
    bytes: Option<usize>,
    tick: u64,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<Key, Entry>,
    /// Loaded entries by last use, oldest first.
    lru: BTreeMap<u64, Key>,
    tick: u64,
    stats: DvCacheStats,
}

/// A cache of decoded DVs shared by all scans of a table (or of several
/// tables: keys include the table root for table-relative `u` DVs).
///
/// * Keyed by the DV's unique id, so a DV used by many files or scans is
///   fetched and decoded once.
/// * Bounded in bytes: least recently used entries are evicted past the
///   budget. A DV larger than the whole budget is returned but not kept.
/// * Concurrent first loads of one DV are coalesced: one caller fetches,
///   the others wait for its result. If that load fails, the error goes to
///   that caller and a waiting caller starts a fresh attempt.
/// * Empty DVs (`cardinality` 0) cost nothing: no I/O, no entry.
///
/// The descriptor's [`DvDescriptor::with_row_count`] bound is checked on
/// every load, cached or not.
#[derive(Debug)]
pub struct DvCache {
    capacity_bytes: usize,
    state: Mutex<State>,
}

impl DvCache {
    /// A cache holding at most about `capacity_bytes` of decoded DVs.
    pub fn new(capacity_bytes: usize) -> Self {
        Self {
            capacity_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// The byte budget.
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    /// Current counters.
    pub fn stats(&self) -> DvCacheStats {
        let state = self.lock();
        DvCacheStats {
            entries: state.entries.len(),
            ..state.stats
        }
    }

    /// Loads `dv` of the table at `table_root` (a `u` DV's file is resolved
    /// under it; see the module docs for how URLs map to store paths).
    pub async fn load(
        &self,
        store: &Arc<dyn ObjectStore>,
        table_root: &Url,
        dv: &DvDescriptor,
    ) -> Result<Arc<DeletedRows>> {
        if dv.is_empty() {
            return Ok(Arc::default());
        }
        let location = match dv.file_url(table_root)? {
            Some(url) => store_path(dv, table_root, &url)?,
            None => Path::default(),
        };
        let scope = match dv.storage_type() {
            StorageType::UuidRelative => table_root.as_str().to_owned(),
            _ => String::new(),
        };
        self.load_keyed((scope, dv.unique_id()), &location, dv, |range| {
            store.get_range(&location, range)
        })
        .await
    }

    /// Loads `dv` from an already resolved `location` in `store` (ignored
    /// for inline DVs). Cached by the DV's unique id and the location.
    pub async fn load_at(
        &self,
        store: &Arc<dyn ObjectStore>,
        location: &Path,
        dv: &DvDescriptor,
    ) -> Result<Arc<DeletedRows>> {
        self.load_at_with(location, dv, |range| store.get_range(location, range))
            .await
    }

    /// Like [`DvCache::load_at`], with `get` supplying the bytes of the
    /// DV's [`crate::fetch_range`] when the DV is not cached (see
    /// [`fetch_with`]).
    pub async fn load_at_with<F, Fut>(
        &self,
        location: &Path,
        dv: &DvDescriptor,
        get: F,
    ) -> Result<Arc<DeletedRows>>
    where
        F: FnOnce(Range<u64>) -> Fut,
        Fut: Future<Output = object_store::Result<Bytes>>,
    {
        if dv.is_empty() {
            return Ok(Arc::default());
        }
        let scope = match dv.storage_type() {
            StorageType::Inline => String::new(),
            _ => location.to_string(),
        };
        self.load_keyed((scope, dv.unique_id()), location, dv, get)
            .await
    }

    async fn load_keyed<F, Fut>(
        &self,
        key: Key,
        location: &Path,
        dv: &DvDescriptor,
        get: F,
    ) -> Result<Arc<DeletedRows>>
    where
        F: FnOnce(Range<u64>) -> Fut,
        Fut: Future<Output = object_store::Result<Bytes>>,
    {
        let cell = self.cell_for(&key);
        let mut loaded_here = false;
        let result = cell
            .get_or_try_init(|| {
                loaded_here = true;
                async { fetch_with(location, dv, get).await.map(Arc::new) }
            })
            .await
            .cloned();
        let rows = match result {
            Ok(rows) => rows,
            Err(error) => {
                self.forget_failed(&key, &cell);
                return Err(error);
            }
        };
        if loaded_here {
            // `fetch_at` validated the rows against this very descriptor.
            self.admit(&key, &cell, rows.memory_size());
            return Ok(rows);
        }
        self.lock().stats.hits += 1;
        // A cached entry was decoded for another descriptor with the same
        // unique id: check it against this caller's cardinality and
        // row-count bound.
        let name = match dv.storage_type() {
            StorageType::Inline => dv.source(),
            _ => DvSource::File {
                path: location.to_string(),
                offset: dv.effective_offset(),
            },
        };
        decode::validate(dv, &name, &rows)?;
        Ok(rows)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent between statements, so a panic in
        // another thread leaves nothing half-done: keep using it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cell for `key`, created if needed; marks the entry as used.
    fn cell_for(&self, key: &Key) -> Arc<OnceCell<Arc<DeletedRows>>> {
        let mut state = self.lock();
        state.tick += 1;
        let tick = state.tick;
        let State { entries, lru, .. } = &mut *state;
        let entry = entries.entry(key.clone()).or_insert_with(|| Entry {
            cell: Arc::new(OnceCell::new()),
            bytes: None,
            tick,
        });
        if entry.bytes.is_some() {
            lru.remove(&entry.tick);
            lru.insert(tick, key.clone());
        }
        entry.tick = tick;
        Arc::clone(&entry.cell)
    }

    /// Counts a freshly loaded entry against the budget and evicts the least
    /// recently used entries beyond it.
    fn admit(&self, key: &Key, cell: &Arc<OnceCell<Arc<DeletedRows>>>, bytes: usize) {
        let mut state = self.lock();
        state.stats.loads += 1;
        let State {
            entries,
            lru,
            stats,
            ..
        } = &mut *state;
        let Some(entry) = entries.get_mut(key).filter(|e| Arc::ptr_eq(&e.cell, cell)) else {
            return;
        };
        if entry.bytes.is_some() {
            return;
        }
        entry.bytes = Some(bytes);
        lru.insert(entry.tick, key.clone());
        stats.bytes += bytes;
        while stats.bytes > self.capacity_bytes {
            let Some((_, oldest)) = lru.pop_first() else {
                break;
            };
            if let Some(evicted) = entries.remove(&oldest) {
                stats.bytes -= evicted.bytes.unwrap_or(0);
                stats.evictions += 1;
            }
        }
    }

    /// Drops the entry of a failed load, unless another caller has since
    /// loaded it successfully.
    fn forget_failed(&self, key: &Key, cell: &Arc<OnceCell<Arc<DeletedRows>>>) {
        let mut state = self.lock();
        let failed = state.entries.get(key).is_some_and(|e| {
            Arc::ptr_eq(&e.cell, cell) && e.bytes.is_none() && !e.cell.initialized()
        });
        if failed {
            state.entries.remove(key);
        }
    }
}
