//! [`RangeCache`]: byte ranges fetched from a store, kept for later reads.
//!
//! A repeated query on an open table asks for the same pages, footers and
//! deletion vectors again; on object storage each is a round trip. The
//! cache keeps what was fetched, as the extents the requests returned, in
//! up to two tiers:
//!
//! ```text
//! read(ranges) ─┬─ memory tier: an extent covers the range ─► slice (hit)
//!               ├─ disk tier:   a file covers it, checks pass ─► bytes (disk hit;
//!               │               a failed check deletes the file: corrupt, refetched)
//!               └─ neither ─► planned fetch of the missing ranges (miss)
//!                             └─► extents kept in both tiers
//! ```
//!
//! - **Keys** are [`ObjectId`]s: store identity, path, size and the
//!   version the caller knows (the log's modification time, or a
//!   listing's tag). Each extent also keeps the tag the store answered
//!   with: bytes of an object fetched under another tag drop every extent
//!   held under the old one, and a read that mixed the two is fetched
//!   again whole.
//! - **Memory tier**: page data and whole small objects, bounded by a byte
//!   budget that holds exactly after every insert, least recently used out.
//!   Footers and checkpoints are not kept here (the parsed-footer cache and
//!   the snapshot hold them), nor deletion vectors (the DV cache holds them
//!   decoded). Within one open table the memory tier trusts that an object
//!   does not change in place (Delta never rewrites a file).
//! - **Disk tier** (opt-in, [`RangeCache::with_disk`]): every class, so that
//!   another process skips footers, page indexes, DVs, checkpoints and pages
//!   it would fetch again. Nothing it holds is trusted: an entry is served
//!   only when its identity and the store's current tag of the object
//!   (from a listing, a response, or one HEAD per reader, counted as a
//!   validation) equal the reader's, and its checked blocks pass. See
//!   `disk` for the folder it owns and what it refuses.
//!
//! Hits, misses, disk hits, validations, corrupt files and evictions are
//! counted in the reading store's [`crate::IoMetrics`] ([`crate::CacheCounts`]).

mod disk;
mod memory;

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use crate::class::ObjectClass;
use crate::error::Result;
use crate::identity::ObjectId;
use crate::metered::IoMetrics;
pub use disk::DEFAULT_DISK_BUDGET;
pub(crate) use disk::Holdings;
use disk::{DiskRead, DiskTier};
use memory::MemoryTier;

/// A shared cache of fetched byte ranges (see the module docs). Clones
/// share the tiers.
#[derive(Debug, Clone, Default)]
pub struct RangeCache {
    memory: Option<Arc<Mutex<MemoryTier>>>,
    disk: Option<Arc<DiskTier>>,
}

/// Bytes and entries a [`RangeCache`] holds now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RangeCacheUsage {
    /// Bytes in the memory tier.
    pub memory_bytes: usize,
    /// Extents in the memory tier.
    pub memory_entries: usize,
    /// The memory tier's budget (0 without one).
    pub memory_budget: usize,
    /// Bytes the disk tier's folder holds, as last recorded by any process
    /// sharing it.
    pub disk_bytes: u64,
}

impl RangeCache {
    /// A cache whose memory tier holds at most `memory_bytes` (0: no
    /// memory tier).
    pub fn new(memory_bytes: usize) -> Self {
        Self {
            memory: (memory_bytes > 0).then(|| Arc::new(Mutex::new(MemoryTier::new(memory_bytes)))),
            disk: None,
        }
    }

    /// Adds a disk tier in a namespace of its own under `dir` (see the
    /// module docs of `range_cache::disk` for what is created and checked).
    /// `budget_bytes` becomes the folder's budget for every process that
    /// shares it; `None` keeps the folder's own ([`DEFAULT_DISK_BUDGET`]
    /// for a new one).
    ///
    /// # Errors
    ///
    /// [`crate::Error::CacheDir`] when the folder cannot be created or
    /// read; [`crate::Error::CacheDirRefused`] when it is not safe to use:
    /// owned by another user, writable by group or others, or holding a
    /// `dar-cache-v2` that dar did not create.
    pub fn with_disk(mut self, dir: impl AsRef<Path>, budget_bytes: Option<u64>) -> Result<Self> {
        self.disk = Some(Arc::new(DiskTier::open(dir.as_ref(), budget_bytes)?));
        Ok(self)
    }

    /// The same memory tier without the disk tier (for stores whose
    /// objects do not outlive the process, such as `memory://`).
    pub fn without_disk(&self) -> Self {
        Self {
            memory: self.memory.clone(),
            disk: None,
        }
    }

    /// Whether any tier is configured.
    pub fn is_enabled(&self) -> bool {
        self.memory.is_some() || self.disk.is_some()
    }

    /// The folder the disk tier was opened on, when there is one.
    pub fn disk_dir(&self) -> Option<&Path> {
        self.disk.as_deref().map(DiskTier::dir)
    }

    /// The name of the folder the disk tier owns inside the folder it is
    /// given (the only place it writes or removes anything).
    pub const NAMESPACE: &'static str = disk::NAMESPACE;

    /// The namespace folder the disk tier owns under [`Self::disk_dir`].
    pub fn disk_namespace(&self) -> Option<std::path::PathBuf> {
        self.disk_dir().map(|d| d.join(disk::NAMESPACE))
    }

    /// Waits until every byte range queued for the disk tier is written
    /// (writes happen in the background, after the bytes went to their
    /// reader; dropping the last clone of the cache waits as well).
    pub async fn flush(&self) {
        if let Some(disk) = &self.disk {
            let disk = Arc::clone(disk);
            blocking(move || disk.flush()).await;
        }
    }

    /// What the cache holds now.
    pub fn usage(&self) -> RangeCacheUsage {
        let (memory_bytes, memory_entries, memory_budget) =
            self.memory.as_ref().map_or((0, 0, 0), |m| {
                let m = lock(m);
                (m.bytes(), m.entries(), m.budget())
            });
        RangeCacheUsage {
            memory_bytes,
            memory_entries,
            memory_budget,
            disk_bytes: self.disk.as_ref().map_or(0, |d| d.bytes()),
        }
    }

    /// Looks up every range of `key` in the memory tier, counting hits
    /// into `metrics`; one entry per range, its bytes when held.
    pub(crate) fn find_in_memory(
        &self,
        key: &Arc<ObjectId>,
        ranges: &[Range<u64>],
        class: ObjectClass,
        metrics: &IoMetrics,
    ) -> Vec<Option<Bytes>> {
        let found: Vec<Option<Bytes>> = match &self.memory {
            Some(m) if keeps_in_memory(class) => {
                let mut m = lock(m);
                ranges.iter().map(|r| m.get(key, r)).collect()
            }
            _ => vec![None; ranges.len()],
        };
        for b in found.iter().flatten() {
            metrics.count_cache_hit(b.len() as u64, false);
        }
        found
    }

    /// Whether there is a disk tier.
    pub(crate) fn has_disk(&self) -> bool {
        self.disk.is_some()
    }

    /// The disk entries held for `key` (empty without a disk tier).
    pub(crate) async fn disk_holdings(&self, key: &Arc<ObjectId>) -> Holdings {
        let Some(disk) = &self.disk else {
            return Holdings::default();
        };
        let (disk, key) = (Arc::clone(disk), Arc::clone(key));
        blocking(move || disk.holdings(&key)).await
    }

    /// `wanted` ranges (by position) of `key` from disk entries written
    /// under `tag`, the store's current tag of the object; hits, corrupt
    /// entries counted into `metrics`, hits of memory classes also kept in
    /// memory.
    pub(crate) async fn find_on_disk(
        &self,
        key: &Arc<ObjectId>,
        tag: String,
        holdings: Holdings,
        wanted: Vec<(usize, Range<u64>)>,
        class: ObjectClass,
        metrics: &IoMetrics,
    ) -> Vec<(usize, Bytes)> {
        let Some(disk) = &self.disk else {
            return Vec::new();
        };
        let (disk, lookup) = (Arc::clone(disk), Arc::clone(key));
        let ranges: Vec<Range<u64>> = wanted.iter().map(|(_, r)| r.clone()).collect();
        let memo_tag = tag.clone();
        let reads = blocking(move || disk.read(&lookup, &tag, &holdings, &ranges)).await;
        let mut out = Vec::new();
        for ((i, r), read) in wanted.into_iter().zip(reads) {
            match read {
                DiskRead::Hit(b) => {
                    metrics.count_cache_hit(b.len() as u64, true);
                    if keeps_in_memory(class) {
                        self.keep_in_memory(key, r.start, b.clone(), Some(&memo_tag));
                    }
                    out.push((i, b));
                }
                DiskRead::Corrupt => metrics.count_cache_corrupt(),
                DiskRead::Miss => {}
            }
        }
        out
    }

    /// Keeps `extents` of `key` in the tiers that keep `class` (the disk
    /// tier in the background). Returns whether bytes held in memory under
    /// another tag were dropped (the object changed).
    pub(crate) fn keep(
        &self,
        key: &Arc<ObjectId>,
        extents: Vec<crate::fetch::Extent>,
        class: ObjectClass,
        metrics: &IoMetrics,
    ) -> bool {
        let mut stale = false;
        if keeps_in_memory(class) {
            for (start, data, tag) in &extents {
                stale |=
                    self.keep_in_memory_counted(key, *start, data.clone(), tag.as_deref(), metrics);
            }
        }
        if let Some(disk) = &self.disk {
            for (start, data, tag) in extents {
                if let Some(tag) = tag {
                    disk.insert(key, start, data, &tag);
                }
            }
        }
        stale
    }

    /// Keeps `data` in the memory tier whatever its class (a whole small
    /// object read for its footer holds the file's pages too).
    pub(crate) fn keep_in_memory(
        &self,
        key: &Arc<ObjectId>,
        start: u64,
        data: Bytes,
        tag: Option<&str>,
    ) {
        if let Some(m) = &self.memory {
            lock(m).insert(key, start, data, tag);
        }
    }

    fn keep_in_memory_counted(
        &self,
        key: &Arc<ObjectId>,
        start: u64,
        data: Bytes,
        tag: Option<&str>,
        metrics: &IoMetrics,
    ) -> bool {
        let Some(m) = &self.memory else {
            return false;
        };
        let done = lock(m).insert(key, start, data, tag);
        metrics.count_cache_evictions(done.evictions);
        done.stale
    }
}

/// Whether the memory tier keeps bytes of `class` (see the module docs).
fn keeps_in_memory(class: ObjectClass) -> bool {
    matches!(class, ObjectClass::PageData | ObjectClass::Other)
}

fn lock(m: &Mutex<MemoryTier>) -> MutexGuard<'_, MemoryTier> {
    // The tier is consistent after every operation: a panic elsewhere
    // while it was held leaves nothing half done.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs blocking file work off the async threads when inside a
/// multi-threaded Tokio runtime (inline otherwise).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread => {
            match h.spawn_blocking(f).await {
                Ok(v) => v,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        _ => f(),
    }
}

#[cfg(test)]
mod tests;
