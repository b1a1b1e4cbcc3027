//! The on-disk tier: fetched extents as files in a namespace of dar's own
//! under the user's cache folder, shared by every process that names it.
//!
//! What it trusts and what it checks:
//!
//! - **Its own namespace only** ([`namespace`]): `DIR/dar-cache-v2`,
//!   created private (0700) with a marker file; a folder owned by another
//!   user, writable by group or others, a link in place of the namespace,
//!   or a namespace without dar's marker is refused. Nothing outside the
//!   namespace is written or removed, and inside it only files whose name
//!   and header prove dar wrote them are counted or deleted.
//! - **One version of one object per entry** ([`entry`]): an entry records
//!   the object's identity (store, path, size, log version) and the tag
//!   the store gave with the bytes; a hit needs both to equal the reader's
//!   (the caller learns the store's current tag first: a listing, a
//!   response, or one HEAD). A mismatch is a miss; the other version's
//!   entry stays until the budget retires it.
//! - **Bounded, non-blocking reads**: entries are opened without following
//!   links and without blocking (a FIFO or device is skipped), must be
//!   regular files of exactly the recorded length, and only the checked
//!   blocks that hold the asked range are read.
//! - **Writes off the read path** ([`writer`]): a background thread writes
//!   entries after the bytes went to the reader; when it falls behind,
//!   writes are dropped, never waited for. Opening a folder reads its
//!   usage record if its lock is free, and otherwise leaves the budget and
//!   any count of the entries to that thread: it never walks the folder
//!   nor waits for another process.
//! - **One budget per folder**: the bytes held and the budget live in the
//!   namespace's `usage` record, updated under a file lock by every process;
//!   the process whose write takes the folder over its budget removes the
//!   least recently used entries (by modification time, refreshed on each
//!   hit) until it holds 80% of it.

mod entry;
mod namespace;
mod writer;

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use twox_hash::XxHash64;

use entry::EntryName;
pub(crate) use namespace::NAMESPACE;
use namespace::{EntryPath, Namespace};
use writer::Writer;

use crate::identity::ObjectId;

/// Budget of a new cache folder when no process has set one.
pub const DEFAULT_DISK_BUDGET: u64 = 8 * 1024 * 1024 * 1024;

/// What a disk lookup found for one range.
#[derive(Debug)]
pub(super) enum DiskRead {
    /// The range, from an entry whose checks passed.
    Hit(Bytes),
    /// No entry of this identity and tag covers the range.
    Miss,
    /// A covering entry failed its checks (it is removed when its header
    /// shows dar wrote it).
    Corrupt,
}

/// The entries an object's folder holds, by name (one directory read).
#[derive(Debug, Default)]
pub(crate) struct Holdings {
    names: Vec<EntryName>,
}

impl Holdings {
    /// Whether some entry, of any tag, covers `range`.
    pub(crate) fn any_covers(&self, range: &Range<u64>) -> bool {
        self.names.iter().any(|n| n.covers(range))
    }
}

/// State shared with the writer thread.
#[derive(Debug)]
pub(super) struct Shared {
    ns: Namespace,
    /// Bytes held by the folder, as last read from its usage record.
    bytes: AtomicU64,
}

/// The disk tier of one cache folder.
#[derive(Debug)]
pub(super) struct DiskTier {
    shared: Arc<Shared>,
    writer: Writer,
}

/// The identity text and its folder hash.
fn identity_of(key: &ObjectId) -> (String, u64) {
    let text = key.text();
    let hash = XxHash64::oneshot(0, text.as_bytes());
    (text, hash)
}

impl DiskTier {
    /// The tier over `dir` (see the module docs for what is checked), with
    /// `budget` bytes for the whole folder when given (otherwise the
    /// folder's own, [`DEFAULT_DISK_BUDGET`] for a new one).
    pub(super) fn open(dir: &Path, budget: Option<u64>) -> Result<Self, crate::Error> {
        let ns = Namespace::open(dir).map_err(|e| match e {
            namespace::OpenError::Io(source) => crate::Error::CacheDir {
                path: dir.display().to_string(),
                source,
            },
            namespace::OpenError::Refused(reason) => crate::Error::CacheDirRefused {
                path: dir.display().to_string(),
                reason,
            },
        })?;
        let shared = Arc::new(Shared {
            ns,
            bytes: AtomicU64::new(0),
        });
        // Opening never waits on the folder: when another process holds
        // its lock (a trim walks the folder under it) or the folder has no
        // usage record to read (its entries must be counted), the budget
        // is recorded by the writer's thread instead, before any write.
        let recorded = shared
            .try_set_budget(budget)
            .map_err(|source| crate::Error::CacheDir {
                path: dir.display().to_string(),
                source,
            })?;
        let writer = Writer::start(Arc::clone(&shared));
        if !recorded {
            writer.set_budget(budget);
        }
        Ok(Self { writer, shared })
    }

    /// The folder the user named.
    pub(super) fn dir(&self) -> &Path {
        &self.shared.ns.root
    }

    /// Bytes the folder holds, as last recorded by any process.
    pub(super) fn bytes(&self) -> u64 {
        self.shared.bytes.load(Ordering::Relaxed)
    }

    /// The entries held for `key`. Blocking.
    pub(super) fn holdings(&self, key: &ObjectId) -> Holdings {
        let (_, hash) = identity_of(key);
        let names = match self.shared.ns.object_dir(hash, false) {
            Ok(Some(dir)) => self.shared.ns.entries(&dir).unwrap_or_default(),
            _ => Vec::new(),
        };
        Holdings { names }
    }

    /// Each of `ranges` of `key` from an entry written under `tag` that
    /// covers it. Blocking.
    pub(super) fn read(
        &self,
        key: &ObjectId,
        tag: &str,
        holdings: &Holdings,
        ranges: &[Range<u64>],
    ) -> Vec<DiskRead> {
        let (text, hash) = identity_of(key);
        let Ok(Some(dir)) = self.shared.ns.object_dir(hash, false) else {
            return ranges.iter().map(|_| DiskRead::Miss).collect();
        };
        let tag_hash = entry::tag_hash(tag);
        ranges
            .iter()
            .map(|r| {
                let Some(name) = holdings
                    .names
                    .iter()
                    .find(|n| n.tag == tag_hash && n.covers(r))
                else {
                    return DiskRead::Miss;
                };
                self.read_entry(&dir, name, &text, tag, r)
            })
            .collect()
    }

    fn read_entry(
        &self,
        dir: &OwnedFd,
        name: &EntryName,
        identity: &str,
        tag: &str,
        range: &Range<u64>,
    ) -> DiskRead {
        let file = match self.shared.ns.open_entry(dir, name) {
            Ok(Some(f)) => f,
            // Not a regular file (a link, a FIFO, a device): not dar's,
            // never read, never removed.
            Ok(None) => return DiskRead::Corrupt,
            Err(_) => return DiskRead::Miss,
        };
        let header = file_len(&file).and_then(|len| entry::read_header(&file, len));
        let read = match &header {
            // Another identity or tag under this name: a hash collision,
            // another key's entry. A miss; never removed.
            Some(h) if h.identity != identity || h.tag != tag => return DiskRead::Miss,
            Some(h) if h.is(identity, tag, name) => h.read_range(&file, range),
            // dar's entry under another extent's name (renamed), or none.
            _ => None,
        };
        if let Some(bytes) = read {
            // The hit makes the entry recently used for the trim.
            let _ = file.set_modified(std::time::SystemTime::now());
            return DiskRead::Hit(bytes);
        }
        // Damaged, truncated or renamed: removed when its magic shows dar
        // wrote it, so the refetched bytes can take its place.
        if entry::has_magic(&file) {
            let _ = self.shared.ns.remove(dir, &name.render());
        }
        DiskRead::Corrupt
    }

    /// Queues `data`, the bytes of `key` from `start` fetched under `tag`,
    /// for the writer. Never blocks; dropped when the writer is behind.
    pub(super) fn insert(&self, key: &ObjectId, start: u64, data: Bytes, tag: &str) {
        if data.is_empty() {
            return;
        }
        let (identity, hash) = identity_of(key);
        self.writer.send(writer::Job {
            hash,
            identity,
            tag: tag.to_string(),
            start,
            data,
        });
    }

    /// Waits until every queued write is on disk. Blocking.
    pub(super) fn flush(&self) {
        self.writer.flush();
    }
}

fn file_len(f: &File) -> Option<u64> {
    f.metadata().ok().map(|m| m.len())
}

impl Shared {
    /// [`Shared::set_budget`] if the folder's lock is free and its usage
    /// record reads whole: `false` (nothing recorded, the held bytes as the
    /// record says if it reads) when that would mean waiting for another
    /// process or counting the entries. Never blocks on the folder.
    fn try_set_budget(&self, budget: Option<u64>) -> io::Result<bool> {
        let lock = self.ns.lock_file()?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                if let Some((held, _)) = self.ns.read_usage() {
                    self.bytes.store(held, Ordering::Relaxed);
                }
                return Ok(false);
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        let Some((held, recorded)) = self.ns.read_usage() else {
            return Ok(false);
        };
        let budget = budget.unwrap_or(recorded);
        if budget != recorded {
            self.ns.write_usage(held, budget)?;
        }
        self.bytes.store(held, Ordering::Relaxed);
        Ok(true)
    }

    /// Records `budget` as the folder's (when given) and reads the usage,
    /// counting the entries when the folder has no usage record. Blocking:
    /// the writer's thread calls it.
    fn set_budget(&self, budget: Option<u64>) -> io::Result<()> {
        let lock = self.ns.lock_file()?;
        lock.lock()?;
        let (held, recorded) = match self.ns.read_usage() {
            Some(u) => u,
            None => (self.count()?, DEFAULT_DISK_BUDGET),
        };
        let budget = budget.unwrap_or(recorded);
        if self.ns.read_usage() != Some((held, budget)) {
            self.ns.write_usage(held, budget)?;
        }
        self.bytes.store(held, Ordering::Relaxed);
        Ok(())
    }

    /// Writes one entry and accounts for it in the shared usage, trimming
    /// when the folder goes over its budget. Blocking.
    fn write(&self, job: &writer::Job) -> io::Result<()> {
        let name = EntryName {
            start: job.start,
            len: job.data.len() as u64,
            tag: entry::tag_hash(&job.tag),
        };
        let Some(dir) = self.ns.object_dir(job.hash, true)? else {
            return Ok(());
        };
        if self.ns.open_entry(&dir, &name).is_ok_and(|f| f.is_some()) {
            return Ok(());
        }
        let bytes = entry::encode(&job.identity, &job.tag, job.start, &job.data);
        if !self.ns.write_file(&dir, &name.render(), &bytes)? {
            return Ok(());
        }
        let lock = self.ns.lock_file()?;
        lock.lock()?;
        let (held, budget) = match self.ns.read_usage() {
            Some((held, budget)) => (held + bytes.len() as u64, budget),
            None => (self.count()?, DEFAULT_DISK_BUDGET),
        };
        let held = if held > budget {
            self.trim(budget / 5 * 4)?
        } else {
            held
        };
        self.ns.write_usage(held, budget)?;
        self.bytes.store(held, Ordering::Relaxed);
        Ok(())
    }

    /// Every entry dar can prove it wrote: (last use, bytes, where).
    fn provable(&self) -> io::Result<Vec<(std::time::SystemTime, u64, EntryPath)>> {
        let mut out = Vec::new();
        let stale_tmp = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        self.ns.walk(|dir, at, kind| {
            if kind != rustix::fs::FileType::RegularFile {
                return;
            }
            let is_entry = EntryName::parse(&at.name).is_some();
            let is_tmp = at.name.starts_with(namespace::TMP_PREFIX);
            if !is_entry && !is_tmp {
                return;
            }
            let Ok(Some(file)) = namespace::open_regular_in(dir, &at.name) else {
                return;
            };
            let Ok(meta) = file.metadata() else { return };
            let Ok(modified) = meta.modified() else {
                return;
            };
            let proven = if is_entry {
                entry::read_header(&file, meta.len()).is_some()
            } else {
                // A write a killed process left: dar's magic, an hour old.
                modified < stale_tmp && entry::has_magic(&file)
            };
            if proven {
                out.push((modified, meta.len(), at.clone()));
            }
        })?;
        Ok(out)
    }

    /// Bytes of the entries dar can prove it wrote.
    fn count(&self) -> io::Result<u64> {
        Ok(self.provable()?.iter().map(|e| e.1).sum())
    }

    /// Removes the least recently used provable entries until at most
    /// `target` bytes remain; returns the bytes held after.
    fn trim(&self, target: u64) -> io::Result<u64> {
        let mut entries = self.provable()?;
        entries.sort();
        let mut held: u64 = entries.iter().map(|e| e.1).sum();
        for (_, len, at) in entries {
            if held <= target {
                break;
            }
            if self.ns.remove_at(&at).is_ok() {
                held -= len;
            }
        }
        Ok(held)
    }
}

#[cfg(test)]
mod tests;
