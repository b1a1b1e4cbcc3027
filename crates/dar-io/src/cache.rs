//! A bounded cache of parsed Parquet footers (with page indexes when loaded).
//!
//! Keyed by (path, size, version tag): a rewritten object at the same path
//! has a different size or ETag/version and misses. Shared by clones, so all
//! scans of one table reuse one footer parse. Bounded by the footers'
//! in-memory size; the least recently used entry goes first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use parquet::file::metadata::ParquetMetaData;

/// Identifies one version of one object.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MetadataKey {
    /// Object path.
    pub path: String,
    /// Object size in bytes.
    pub size: u64,
    /// ETag or version id, if the store gave one.
    pub version: Option<String>,
}

/// A cached footer.
#[derive(Debug, Clone)]
pub struct CachedMetadata {
    /// The parsed metadata.
    pub metadata: Arc<ParquetMetaData>,
    /// Whether page indexes were requested when it was parsed (they may
    /// still be absent if the file has none).
    pub page_index_loaded: bool,
}

/// Hit / miss / size counters of a [`MetadataCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Entries held.
    pub entries: usize,
    /// Estimated bytes held.
    pub bytes: usize,
    /// Entries evicted to stay within capacity.
    pub evictions: u64,
}

#[derive(Debug)]
struct Entry {
    value: CachedMetadata,
    bytes: usize,
    last_used: u64,
}

#[derive(Debug, Default)]
struct State {
    map: HashMap<MetadataKey, Entry>,
    tick: u64,
    stats: CacheStats,
}

/// Shared, bounded footer cache (clones share entries).
#[derive(Debug, Clone)]
pub struct MetadataCache {
    capacity_bytes: usize,
    state: Arc<Mutex<State>>,
}

impl Default for MetadataCache {
    /// 64 MiB of footers.
    fn default() -> Self {
        Self::new(64 * 1024 * 1024)
    }
}

impl MetadataCache {
    /// A cache holding at most `capacity_bytes` of parsed metadata.
    pub fn new(capacity_bytes: usize) -> Self {
        Self {
            capacity_bytes,
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// Looks up `key`.
    pub fn get(&self, key: &MetadataKey) -> Option<CachedMetadata> {
        let mut s = self.state.lock().ok()?;
        s.tick += 1;
        let tick = s.tick;
        match s.map.get_mut(key) {
            Some(e) => {
                e.last_used = tick;
                let v = e.value.clone();
                s.stats.hits += 1;
                Some(v)
            }
            None => {
                s.stats.misses += 1;
                None
            }
        }
    }

    /// Inserts or replaces `key`, evicting least recently used entries to
    /// stay within capacity. An entry larger than the whole capacity is not
    /// kept.
    pub fn insert(&self, key: MetadataKey, value: CachedMetadata) {
        let bytes = value.metadata.memory_size() + key.path.len();
        if bytes > self.capacity_bytes {
            return;
        }
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.tick += 1;
        let tick = s.tick;
        if let Some(old) = s.map.remove(&key) {
            s.stats.bytes -= old.bytes;
        }
        while s.stats.bytes + bytes > self.capacity_bytes {
            let Some(victim) = s
                .map
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = s.map.remove(&victim) {
                s.stats.bytes -= e.bytes;
                s.stats.evictions += 1;
            }
        }
        s.stats.bytes += bytes;
        s.map.insert(
            key,
            Entry {
                value,
                bytes,
                last_used: tick,
            },
        );
        s.stats.entries = s.map.len();
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        self.state
            .lock()
            .map(|s| CacheStats {
                entries: s.map.len(),
                ..s.stats
            })
            .unwrap_or_default()
    }

    /// The capacity in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }
}
