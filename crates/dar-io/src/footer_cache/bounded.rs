//! [`BoundedCache`]: a byte-bounded, shared cache whose concurrent loads of
//! one key are merged, over moka's `future::Cache`.
//!
//! The footer cache ([`crate::MetadataCache`]) is one; a cache of fetched
//! byte ranges would be another with the same mechanism (a key, a weigher,
//! a loader).
//!
//! ```text
//! get_or_try_load(key, load)
//!   ├─ entry held ─────────────────────────────► hit: the value
//!   ├─ another caller is loading key ──► wait ─┬─► hit: its value
//!   │                                          └─► its load failed: run our
//!   │                                              own `load` (not merged)
//!   └─ nobody is ──► run `load` (miss) ─┬─► Ok: kept (unless larger than the
//!                                       │   budget), LRU entries evicted
//!                                       └─► Err: returned, nothing kept
//! ```
//!
//! Eviction is least recently used (moka's LRU policy, no admission filter):
//! a new entry is always kept, and the budget holds once each insert returns
//! (pending evictions are applied before it does), so the counters in
//! [`CacheStats`] are exact between calls.

use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use moka::future::Cache;
use moka::notification::RemovalCause;
use moka::policy::EvictionPolicy;

/// Hit / miss / size counters of a cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered by an entry or by a concurrent load of the same key.
    pub hits: u64,
    /// Lookups that found nothing (and, through a loader, loaded it).
    pub misses: u64,
    /// Entries held.
    pub entries: usize,
    /// Estimated bytes held.
    pub bytes: usize,
    /// Entries evicted to stay within capacity.
    pub evictions: u64,
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
}

/// Marks, inside moka, a load whose real error went back to its caller.
#[derive(Debug)]
struct LoadFailed;

/// A byte-bounded cache shared by clones (see the module docs).
pub(crate) struct BoundedCache<K, V> {
    /// Built at the first insert: a table that never caches anything
    /// (no footer read, no DV) does not pay for building one.
    inner: Arc<OnceLock<Cache<K, V>>>,
    capacity_bytes: usize,
    weigh: fn(&K, &V) -> usize,
    counters: Arc<Counters>,
}

impl<K, V> Clone for BoundedCache<K, V> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            capacity_bytes: self.capacity_bytes,
            weigh: self.weigh,
            counters: Arc::clone(&self.counters),
        }
    }
}

impl<K, V> fmt::Debug for BoundedCache<K, V>
where
    K: Clone + Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not moka's Debug: it lists every entry.
        f.debug_struct("BoundedCache")
            .field("capacity_bytes", &self.capacity_bytes)
            .field("stats", &self.stats())
            .finish()
    }
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<K, V> BoundedCache<K, V>
where
    K: Clone + Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// A cache holding at most `capacity_bytes`, each entry weighing
    /// `weigh(key, value)` bytes.
    pub(crate) fn new(capacity_bytes: usize, weigh: fn(&K, &V) -> usize) -> Self {
        Self {
            inner: Arc::new(OnceLock::new()),
            capacity_bytes,
            weigh,
            counters: Arc::new(Counters::default()),
        }
    }

    /// The moka cache, built on first use.
    fn cache(&self) -> &Cache<K, V> {
        self.inner.get_or_init(|| {
            let (capacity_bytes, weigh) = (self.capacity_bytes, self.weigh);
            let counters = Arc::clone(&self.counters);
            Cache::builder()
                .max_capacity(capacity_bytes as u64)
                .weigher(move |k, v| saturating_u32(weigh(k, v)))
                .eviction_policy(EvictionPolicy::lru())
                .eviction_listener(move |k: Arc<K>, v: V, cause| {
                    // A value larger than the whole budget is refused, not
                    // evicted.
                    if cause == RemovalCause::Size && weigh(&k, &v) <= capacity_bytes {
                        counters.evictions.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .build()
        })
    }

    /// The byte budget.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    fn count(&self, hit: bool) {
        let c = if hit {
            &self.counters.hits
        } else {
            &self.counters.misses
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Looks up `key` (a hit or a miss).
    pub(crate) async fn get(&self, key: &K) -> Option<V> {
        let found = match self.inner.get() {
            Some(cache) => cache.get(key).await,
            None => None,
        };
        self.count(found.is_some());
        found
    }

    /// Inserts or replaces `key`, evicting least recently used entries to
    /// stay within the budget. A value larger than the whole budget is not
    /// kept (an older value of `key` stays).
    pub(crate) async fn insert(&self, key: K, value: V) {
        if (self.weigh)(&key, &value) > self.capacity_bytes {
            return;
        }
        let cache = self.cache();
        cache.insert(key, value).await;
        cache.run_pending_tasks().await;
    }

    /// The value of `key`: held, loaded by a concurrent caller, or loaded by
    /// `load` (see the module docs). A failed load is not kept; its error
    /// goes to this caller, and callers that waited for it run their own.
    pub(crate) async fn get_or_try_load<F, Fut, E>(&self, key: K, load: F) -> Result<V, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        // Creating the future does no work: it runs only if polled, either
        // by moka (this caller loads) or below (the load we waited for failed).
        let mut fut = std::pin::pin!(load());
        let mut loaded_here = false;
        let mut failure = None;
        let cache = self.cache();
        let shared = cache
            .try_get_with_by_ref(&key, async {
                loaded_here = true;
                fut.as_mut().await.map_err(|e| {
                    failure = Some(e);
                    LoadFailed
                })
            })
            .await;
        match (shared, failure) {
            (Ok(value), _) => {
                self.count(!loaded_here);
                if loaded_here {
                    // Apply the insert and any evictions it calls for now,
                    // so that the budget and the counters hold on return.
                    cache.run_pending_tasks().await;
                }
                Ok(value)
            }
            (Err(_), Some(error)) => {
                self.count(false);
                Err(error)
            }
            // We waited for another caller's load, which failed: our own
            // future was never polled.
            (Err(_), None) => {
                self.count(false);
                let value = fut.await?;
                self.insert(key, value.clone()).await;
                Ok(value)
            }
        }
    }

    /// Current counters.
    pub(crate) fn stats(&self) -> CacheStats {
        let (entries, bytes) = self
            .inner
            .get()
            .map_or((0, 0), |c| (c.entry_count(), c.weighted_size()));
        CacheStats {
            hits: self.counters.hits.load(Ordering::Relaxed),
            misses: self.counters.misses.load(Ordering::Relaxed),
            entries: usize::try_from(entries).unwrap_or(usize::MAX),
            bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
            evictions: self.counters.evictions.load(Ordering::Relaxed),
        }
    }
}
