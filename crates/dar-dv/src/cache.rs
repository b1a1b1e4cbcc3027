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

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use moka::future::Cache;
use moka::notification::RemovalCause;
use moka::policy::EvictionPolicy;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
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

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    loads: AtomicU64,
    evictions: AtomicU64,
}

/// Marks, inside moka, a load whose real error went back to its caller.
#[derive(Debug)]
struct LoadFailed;

/// A cache of decoded DVs shared by all scans of a table (or of several
/// tables: keys include the table root for table-relative `u` DVs).
///
/// * Keyed by the DV's unique id, so a DV used by many files or scans is
///   fetched and decoded once.
/// * Bounded in bytes (moka, weighed by [`DeletedRows::memory_size`]): least
///   recently used entries are evicted past the budget, which holds again
///   whenever a load returns. A DV larger than the whole budget is returned
///   but not kept.
/// * Concurrent first loads of one DV are merged: one caller fetches, the
///   others wait for its result. If that load fails, nothing is kept and
///   the error goes to that caller; each caller that waited makes an
///   attempt of its own (so every caller gets an error naming the file).
/// * Empty DVs (`cardinality` 0) cost nothing: no I/O, no entry.
///
/// The descriptor's [`DvDescriptor::with_row_count`] bound is checked on
/// every load, cached or not.
pub struct DvCache {
    capacity_bytes: usize,
    /// Built at the first load of a DV: a table without DVs does not pay
    /// for building one.
    entries: OnceLock<Cache<Key, Arc<DeletedRows>>>,
    counters: Arc<Counters>,
}

impl fmt::Debug for DvCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not moka's Debug: it lists every entry.
        f.debug_struct("DvCache")
            .field("capacity_bytes", &self.capacity_bytes)
            .field("stats", &self.stats())
            .finish()
    }
}

fn weigh(_: &Key, rows: &Arc<DeletedRows>) -> u32 {
    u32::try_from(rows.memory_size()).unwrap_or(u32::MAX)
}

impl DvCache {
    /// A cache holding at most about `capacity_bytes` of decoded DVs.
    pub fn new(capacity_bytes: usize) -> Self {
        Self {
            capacity_bytes,
            entries: OnceLock::new(),
            counters: Arc::new(Counters::default()),
        }
    }

    /// The moka cache, built on first use.
    fn entries(&self) -> &Cache<Key, Arc<DeletedRows>> {
        self.entries.get_or_init(|| {
            let capacity_bytes = self.capacity_bytes;
            let counters = Arc::clone(&self.counters);
            Cache::builder()
                .max_capacity(capacity_bytes as u64)
                .weigher(weigh)
                .eviction_policy(EvictionPolicy::lru())
                .eviction_listener(move |_, rows: Arc<DeletedRows>, cause| {
                    // A DV larger than the whole budget is refused, not
                    // evicted.
                    if cause == RemovalCause::Size && rows.memory_size() <= capacity_bytes {
                        counters.evictions.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .build()
        })
    }

    /// The byte budget.
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    /// Current counters.
    pub fn stats(&self) -> DvCacheStats {
        let (entries, bytes) = self
            .entries
            .get()
            .map_or((0, 0), |c| (c.entry_count(), c.weighted_size()));
        DvCacheStats {
            hits: self.counters.hits.load(Ordering::Relaxed),
            loads: self.counters.loads.load(Ordering::Relaxed),
            evictions: self.counters.evictions.load(Ordering::Relaxed),
            bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
            entries: usize::try_from(entries).unwrap_or(usize::MAX),
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
    /// for inline DVs). Cached by the DV's unique id, the location and
    /// `store_id`, the identity of the store (`dar_io::StoreId`'s text):
    /// one cache may serve tables of many stores, and the same path in two
    /// stores is two objects.
    pub async fn load_at(
        &self,
        store_id: &str,
        store: &Arc<dyn ObjectStore>,
        location: &Path,
        dv: &DvDescriptor,
    ) -> Result<Arc<DeletedRows>> {
        self.load_at_with(store_id, location, dv, |range| {
            store.get_range(location, range)
        })
        .await
    }

    /// Like [`DvCache::load_at`], with `get` supplying the bytes of the
    /// DV's [`crate::fetch_range`] when the DV is not cached (see
    /// [`fetch_with`]).
    pub async fn load_at_with<F, Fut>(
        &self,
        store_id: &str,
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
        // An inline DV is its own content; a file DV is one object of one
        // store.
        let scope = match dv.storage_type() {
            StorageType::Inline => String::new(),
            _ => format!("{store_id}\n{location}"),
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
        // Creating the future does no work: it runs only if polled, by moka
        // (this caller loads) or below (the load we waited for failed).
        let mut fetch = std::pin::pin!(async { fetch_with(location, dv, get).await.map(Arc::new) });
        let mut loaded_here = false;
        let mut failure = None;
        let entries = self.entries();
        let shared = entries
            .try_get_with_by_ref(&key, async {
                loaded_here = true;
                fetch.as_mut().await.map_err(|e| {
                    failure = Some(e);
                    LoadFailed
                })
            })
            .await;
        let rows = match (shared, failure) {
            (Ok(rows), _) if loaded_here => {
                // `fetch_with` validated the rows against this very
                // descriptor. Apply the insert and the evictions it calls
                // for now, so that the budget and the counters hold.
                self.counters.loads.fetch_add(1, Ordering::Relaxed);
                entries.run_pending_tasks().await;
                return Ok(rows);
            }
            (Ok(rows), _) => rows,
            (Err(_), Some(error)) => return Err(error),
            // We waited for another caller's load, which failed: our own
            // fetch was never polled.
            (Err(_), None) => {
                let rows = fetch.await?;
                self.counters.loads.fetch_add(1, Ordering::Relaxed);
                if rows.memory_size() <= self.capacity_bytes {
                    entries.insert(key, Arc::clone(&rows)).await;
                    entries.run_pending_tasks().await;
                }
                return Ok(rows);
            }
        };
        self.counters.hits.fetch_add(1, Ordering::Relaxed);
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
}
