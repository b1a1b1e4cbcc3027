//! A bounded cache of parsed Parquet footers (with page indexes when loaded).
//!
//! Keyed by [`ObjectId`] (store, path, size, version): the same path in
//! another store, or a rewritten object with a new size or version, misses. Shared by clones, so all
//! scans of one table reuse one footer parse, and N readers opening the same
//! file at once fetch its footer once ([`MetadataCache::get_or_try_load`]).
//! Bounded by the footers' in-memory size; the least recently used entry
//! goes first. The mechanism is `footer_cache::bounded::BoundedCache` (moka).

mod bounded;

use std::future::Future;
use std::sync::Arc;

use parquet::file::metadata::ParquetMetaData;

use bounded::BoundedCache;

use crate::identity::ObjectId;
pub use bounded::CacheStats;

/// A cached footer.
#[derive(Debug, Clone)]
pub struct CachedMetadata {
    /// The parsed metadata.
    pub metadata: Arc<ParquetMetaData>,
    /// Whether page indexes were requested when it was parsed (they may
    /// still be absent if the file has none).
    pub page_index_loaded: bool,
}

/// What an entry costs against the budget: the parsed footer and its key.
fn weigh(key: &ObjectId, value: &CachedMetadata) -> usize {
    value.metadata.memory_size() + key.path.len()
}

/// Shared, bounded footer cache (clones share entries).
#[derive(Debug, Clone)]
pub struct MetadataCache {
    inner: BoundedCache<ObjectId, CachedMetadata>,
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
            inner: BoundedCache::new(capacity_bytes, weigh),
        }
    }

    /// Looks up `key`.
    pub async fn get(&self, key: &ObjectId) -> Option<CachedMetadata> {
        self.inner.get(key).await
    }

    /// Inserts or replaces `key`, evicting least recently used entries to
    /// stay within capacity. An entry larger than the whole capacity is not
    /// kept.
    pub async fn insert(&self, key: ObjectId, value: CachedMetadata) {
        self.inner.insert(key, value).await;
    }

    /// The entry of `key`, or the result of `load` kept as its entry.
    /// Concurrent calls for one key run one `load` and all get its value.
    /// A failed load is not kept: its caller gets the error, and callers
    /// that waited for it each run their own `load`.
    pub async fn get_or_try_load<F, Fut, E>(
        &self,
        key: ObjectId,
        load: F,
    ) -> Result<CachedMetadata, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<CachedMetadata, E>>,
    {
        self.inner.get_or_try_load(key, load).await
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        self.inner.stats()
    }

    /// The capacity in bytes.
    pub fn capacity_bytes(&self) -> usize {
        self.inner.capacity_bytes()
    }
}

#[cfg(test)]
mod tests;
