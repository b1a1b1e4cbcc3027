//! The memory tier: fetched extents of objects, least recently used first
//! out, under a byte budget that holds exactly after every insert.
//!
//! ```text
//! objects: ObjectId ─► { tag, extents: start ─► (bytes, tick) }
//! lru:     tick ─► (ObjectId, start)        (oldest first)
//! ```
//!
//! A lookup finds an extent that covers the whole requested range (the
//! nearest few starting at or before it) and answers a slice of it; a
//! range only partly held is a miss. Accounting is exact because every
//! operation takes one lock: `bytes` never exceeds the budget once an
//! insert returns, whatever the number of concurrent scans.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::identity::ObjectId;

/// How many extents starting at or before a range are tried for it:
/// extents of one object overlap only where a planned read merged gaps
/// across held ranges, so the covering one is among the nearest.
const COVER_CANDIDATES: usize = 4;

#[derive(Debug)]
struct Extent {
    data: Bytes,
    tick: u64,
}

#[derive(Debug, Default)]
struct Object {
    /// The ETag or version the store reported with these bytes.
    tag: Option<String>,
    extents: BTreeMap<u64, Extent>,
}

/// What an insert did to the budget.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Inserted {
    /// Bytes added.
    pub bytes: u64,
    /// Extents evicted to make room.
    pub evictions: u64,
    /// Whether extents of the object held under another tag were dropped.
    pub stale: bool,
}

/// The memory tier (see the module docs); callers hold it in a mutex.
#[derive(Debug)]
pub(super) struct MemoryTier {
    budget: usize,
    bytes: usize,
    tick: u64,
    objects: HashMap<Arc<ObjectId>, Object>,
    lru: BTreeMap<u64, (Arc<ObjectId>, u64)>,
}

impl MemoryTier {
    pub(super) fn new(budget: usize) -> Self {
        Self {
            budget,
            bytes: 0,
            tick: 0,
            objects: HashMap::new(),
            lru: BTreeMap::new(),
        }
    }

    pub(super) fn budget(&self) -> usize {
        self.budget
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Extents held.
    pub(super) fn entries(&self) -> usize {
        self.lru.len()
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// `range` of `key`, when one held extent covers it (and marks that
    /// extent used).
    pub(super) fn get(&mut self, key: &ObjectId, range: &Range<u64>) -> Option<Bytes> {
        let tick = self.next_tick();
        let object = self.objects.get_mut(key)?;
        let (&start, extent) = object
            .extents
            .range_mut(..=range.start)
            .rev()
            .take(COVER_CANDIDATES)
            .find(|(s, e)| **s + e.data.len() as u64 >= range.end)?;
        let old = std::mem::replace(&mut extent.tick, tick);
        let from = usize::try_from(range.start - start).ok()?;
        let to = usize::try_from(range.end - start).ok()?;
        let out = extent.data.slice(from..to);
        if let Some(entry) = self.lru.remove(&old) {
            self.lru.insert(tick, entry);
        }
        Some(out)
    }

    /// Keeps `data`, the bytes of `key` from `start`, fetched with `tag`.
    /// Bytes of the same object under another tag are dropped first (the
    /// object changed: they must never be served with the new ones). Data
    /// larger than the whole budget, or already covered, is not kept.
    pub(super) fn insert(
        &mut self,
        key: &Arc<ObjectId>,
        start: u64,
        data: Bytes,
        tag: Option<&str>,
    ) -> Inserted {
        let len = data.len();
        if len == 0 || len > self.budget {
            return Inserted::default();
        }
        let end = start + len as u64;
        let stale = self
            .objects
            .get(key.as_ref())
            .is_some_and(|o| tag.is_some() && o.tag.is_some() && o.tag.as_deref() != tag);
        if stale {
            self.remove_object(key);
        }
        let mut done = Inserted {
            stale,
            ..Inserted::default()
        };
        if self.get(key, &(start..end)).is_some() {
            return done;
        }
        let tick = self.next_tick();
        let object = self.objects.entry(Arc::clone(key)).or_default();
        if object.tag.is_none() {
            object.tag = tag.map(str::to_string);
        }
        if let Some(old) = object.extents.insert(start, Extent { data, tick }) {
            self.bytes -= old.data.len();
            self.lru.remove(&old.tick);
        }
        self.lru.insert(tick, (Arc::clone(key), start));
        self.bytes += len;
        done.bytes = len as u64;
        while self.bytes > self.budget {
            let Some((_, (victim, at))) = self.lru.pop_first() else {
                break;
            };
            self.remove_extent(&victim, at);
            done.evictions += 1;
        }
        done
    }

    fn remove_extent(&mut self, key: &ObjectId, start: u64) {
        if let Some(object) = self.objects.get_mut(key) {
            if let Some(e) = object.extents.remove(&start) {
                self.bytes -= e.data.len();
            }
            if object.extents.is_empty() {
                self.objects.remove(key);
            }
        }
    }

    fn remove_object(&mut self, key: &ObjectId) {
        if let Some(object) = self.objects.remove(key) {
            for e in object.extents.values() {
                self.bytes -= e.data.len();
                self.lru.remove(&e.tick);
            }
        }
    }
}
