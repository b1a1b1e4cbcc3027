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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::ParquetMetaDataReader;

    use super::*;

    fn metadata(rows: i64) -> Arc<ParquetMetaData> {
        let batch = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Int64Array::from_iter_values(0..rows)) as _,
        )])
        .unwrap();
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        Arc::new(
            ParquetMetaDataReader::new()
                .parse_and_finish(&Bytes::from(buf))
                .unwrap(),
        )
    }

    fn key(path: &str, version: Option<&str>) -> MetadataKey {
        MetadataKey {
            path: path.to_string(),
            size: 100,
            version: version.map(str::to_string),
        }
    }

    fn entry(md: &Arc<ParquetMetaData>) -> CachedMetadata {
        CachedMetadata {
            metadata: Arc::clone(md),
            page_index_loaded: false,
        }
    }

    #[test]
    fn version_and_size_are_part_of_the_key() {
        let c = MetadataCache::default();
        let md = metadata(10);
        c.insert(key("a", Some("v1")), entry(&md));
        assert!(c.get(&key("a", Some("v1"))).is_some());
        assert!(c.get(&key("a", Some("v2"))).is_none());
        assert!(c.get(&key("a", None)).is_none());
        let mut other_size = key("a", Some("v1"));
        other_size.size = 101;
        assert!(c.get(&other_size).is_none());
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.entries), (1, 3, 1));
    }

    #[test]
    fn least_recently_used_is_evicted_within_capacity() {
        let md = metadata(10);
        let one = md.memory_size() + 1;
        // Room for two entries (paths are one byte).
        let c = MetadataCache::new(2 * one);
        c.insert(key("a", None), entry(&md));
        c.insert(key("b", None), entry(&md));
        assert!(c.get(&key("a", None)).is_some()); // b is now least recent
        c.insert(key("c", None), entry(&md));
        assert!(c.get(&key("b", None)).is_none());
        assert!(c.get(&key("a", None)).is_some());
        assert!(c.get(&key("c", None)).is_some());
        let s = c.stats();
        assert_eq!((s.entries, s.evictions), (2, 1));
        assert!(s.bytes <= c.capacity_bytes());
        // Clones share entries.
        assert!(c.clone().get(&key("a", None)).is_some());
    }

    #[test]
    fn oversized_entries_are_not_kept() {
        let md = metadata(10);
        let c = MetadataCache::new(md.memory_size() / 2);
        c.insert(key("a", None), entry(&md));
        assert_eq!(c.stats().entries, 0);
        assert!(c.get(&key("a", None)).is_none());
    }
}
