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
//! - **Keys** name one version of one object: the store URL, the path, the
//!   size and the ETag / version when the caller knows them
//!   ([`ObjectKey`]). A rewritten object with a new size or tag misses.
//!   Each extent also keeps the tag the store answered with: bytes of an
//!   object fetched under another tag drop every extent held under the old
//!   one, and a read that mixed the two is fetched again whole.
//! - **Memory tier**: page data and whole small objects, bounded by a byte
//!   budget that holds exactly after every insert, least recently used out.
//!   Footers and checkpoints are not kept here (the parsed-footer cache and
//!   the snapshot hold them), nor deletion vectors (the DV cache holds them
//!   decoded).
//! - **Disk tier** (opt-in, [`RangeCache::with_disk`]): every class, so that
//!   another process skips footers, page indexes, DVs, checkpoints and pages
//!   it would fetch again. Files are checked on every read.
//!
//! Hits, misses, disk hits, corrupt files and evictions are counted in the
//! reading store's [`crate::IoMetrics`] ([`crate::CacheCounts`]).
//!
//! Delta data, DV and checkpoint files are never rewritten in place (their
//! names are unique), so the log's path and size identify their bytes; the
//! disk tier relies on that across processes, where no tag is known
//! before a request.

mod disk;
mod memory;

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use crate::class::ObjectClass;
use crate::error::{Error, Result};
use crate::metered::IoMetrics;
use disk::{DiskRead, DiskTier};
use memory::MemoryTier;

/// One version of one object: what the cache keys its bytes by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectKey {
    /// The store's URL (credentials removed), so that one cache directory
    /// can serve many stores.
    pub store: String,
    /// The object path in the store.
    pub path: String,
    /// The object size, when known (Delta `add.size`, a listing).
    pub size: Option<u64>,
    /// ETag or version id, when known (a listing, a HEAD).
    pub version: Option<String>,
}

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
    /// Bytes of cache files this process counts in the disk tier.
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

    /// Adds a disk tier in `dir` (created if missing) of at most
    /// `budget_bytes`.
    ///
    /// # Errors
    ///
    /// [`Error::CacheDir`] when the directory cannot be created or read.
    pub fn with_disk(mut self, dir: impl AsRef<Path>, budget_bytes: u64) -> Result<Self> {
        let dir = dir.as_ref();
        let tier = DiskTier::open(dir, budget_bytes).map_err(|source| Error::CacheDir {
            path: dir.display().to_string(),
            source,
        })?;
        self.disk = Some(Arc::new(tier));
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

    /// The disk tier's directory, when there is one.
    pub fn disk_dir(&self) -> Option<&Path> {
        self.disk.as_deref().map(DiskTier::dir)
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

    /// Looks up every range of `key` (memory, then disk), counting hits
    /// into `metrics`; one entry per range, its bytes when a tier held
    /// them.
    pub(crate) async fn find(
        &self,
        key: &Arc<ObjectKey>,
        ranges: &[Range<u64>],
        class: ObjectClass,
        metrics: &IoMetrics,
    ) -> Vec<Option<Bytes>> {
        let mut found: Vec<Option<Bytes>> = match &self.memory {
            Some(m) if keeps_in_memory(class) => {
                let mut m = lock(m);
                ranges.iter().map(|r| m.get(key, r)).collect()
            }
            _ => vec![None; ranges.len()],
        };
        for b in found.iter().flatten() {
            metrics.count_cache_hit(b.len() as u64, false);
        }
        if let Some(disk) = &self.disk
            && found.iter().any(Option::is_none)
        {
            let wanted: Vec<(usize, Range<u64>)> = ranges
                .iter()
                .enumerate()
                .filter(|(i, _)| found[*i].is_none())
                .map(|(i, r)| (i, r.clone()))
                .collect();
            let disk = Arc::clone(disk);
            let lookup_key = Arc::clone(key);
            let reads = blocking(move || {
                wanted
                    .into_iter()
                    .map(|(i, r)| (i, disk.get(&lookup_key, &r)))
                    .collect::<Vec<_>>()
            })
            .await;
            for (i, read) in reads {
                match read {
                    DiskRead::Hit(b) => {
                        metrics.count_cache_hit(b.len() as u64, true);
                        if keeps_in_memory(class) {
                            self.keep_in_memory(key, ranges[i].start, b.clone(), None);
                        }
                        found[i] = Some(b);
                    }
                    DiskRead::Corrupt => metrics.count_cache_corrupt(),
                    DiskRead::Miss => {}
                }
            }
        }
        found
    }

    /// Keeps `data`, fetched from `start` of `key` with the store's `tag`,
    /// in the tiers that keep `class`. Returns whether bytes held under
    /// another tag were dropped (the object changed).
    pub(crate) async fn keep(
        &self,
        key: &Arc<ObjectKey>,
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
            let disk = Arc::clone(disk);
            let key = Arc::clone(key);
            blocking(move || {
                for (start, data, tag) in &extents {
                    disk.insert(&key, *start, data, tag.as_deref());
                }
            })
            .await;
        }
        stale
    }

    /// Keeps `data` in the memory tier whatever its class (a whole small
    /// object read for its footer holds the file's pages too).
    pub(crate) fn keep_in_memory(
        &self,
        key: &Arc<ObjectKey>,
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
        key: &Arc<ObjectKey>,
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
