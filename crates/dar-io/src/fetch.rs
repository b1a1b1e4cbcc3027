//! Ranged reads of one object: every body length checked, planned
//! multi-range reads, and a class tag for the metered store.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use object_store::path::Path;

use crate::class::ObjectClass;
use crate::cost::CostParams;
use crate::error::{Error, Result};
use crate::identity::{ObjectId, ObjectVersion, store_tag};
use crate::local::LocalFiles;
use crate::metered::IoMetrics;
use crate::metered::ranged_get;
use crate::planner::plan_ranges;
use crate::range_cache::RangeCache;

/// Fetches `ranges` of the object at `path` as [`plan_ranges`] plans them
/// under `params` (merged over cheap gaps, split over idle lanes), up to
/// `params.max_concurrency` GETs in flight, each tagged `class` for a
/// [`crate::MeteredStore`] below. Returns one buffer per range, in input
/// order; overlapping and empty ranges are allowed. A short or long body is
/// [`Error::Truncated`], never data.
///
/// For deletion-vector files, checkpoint parts or any non-Parquet object
/// whose byte ranges are known up front.
pub async fn fetch_ranges(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
    ranges: &[Range<u64>],
    params: &CostParams,
    class: ObjectClass,
) -> Result<Vec<Bytes>> {
    Fetcher::new(Arc::clone(store), path.clone())
        .fetch_planned(ranges, params, class)
        .await
}

/// One object of one store, read through a [`RangeCache`] when one is
/// attached.
#[derive(Clone)]
pub(crate) struct Fetcher {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) path: Path,
    pub(crate) cache: Option<CacheUse>,
    /// Direct reads of the file, when the store is the local file system.
    pub(crate) local: Option<LocalFiles>,
}

/// Bytes of an object as one request returned them: where they start, and
/// the ETag / version the store answered with.
pub(crate) type Extent = (u64, Bytes, Option<String>);

/// A cache, the key of the fetcher's object in it, where its hits and
/// misses are counted, and the store's current tag of the object once
/// known (a disk entry is served only under that tag).
#[derive(Debug, Clone)]
pub(crate) struct CacheUse {
    pub(crate) cache: RangeCache,
    pub(crate) key: Arc<ObjectId>,
    pub(crate) metrics: IoMetrics,
    tag: Arc<std::sync::Mutex<Option<String>>>,
}

impl CacheUse {
    /// Reading `key` through `cache`, counted in `metrics`. A key whose
    /// version is a listing's tag starts with that tag known.
    pub(crate) fn new(cache: RangeCache, key: ObjectId, metrics: IoMetrics) -> Self {
        let tag = match &key.version {
            Some(ObjectVersion::Tag(t)) => Some(t.clone()),
            _ => None,
        };
        Self {
            cache,
            key: Arc::new(key),
            metrics,
            tag: Arc::new(std::sync::Mutex::new(tag)),
        }
    }

    fn tag(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.tag
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Display, not Debug, of the store: Debug of a cloud client may show
        // credential ids.
        f.debug_struct("Fetcher")
            .field("store", &format_args!("{}", self.store))
            .field("path", &self.path.as_ref())
            .field("cached", &self.cache.is_some())
            .finish()
    }
}

impl Fetcher {
    pub(crate) fn new(store: Arc<dyn ObjectStore>, path: Path) -> Self {
        Self {
            store,
            path,
            cache: None,
            local: None,
        }
    }

    /// Reads planned fetches of the file with `local` (one blocking call
    /// each) while no cache is attached; the cache needs the tags a
    /// store's responses carry.
    pub(crate) fn with_local(mut self, local: Option<LocalFiles>) -> Self {
        self.local = local;
        self
    }

    /// Reads through `cache` (keyed by `key`, counted in `metrics`).
    pub(crate) fn with_cache(mut self, cache: Option<CacheUse>) -> Self {
        self.cache = cache.filter(|c| c.cache.is_enabled());
        self
    }

    /// One bounded GET, length-checked, with the tag (ETag / version) the
    /// store answered with. An empty range costs no request.
    async fn fetch_tagged(
        &self,
        range: Range<u64>,
        class: ObjectClass,
    ) -> Result<(Bytes, Option<String>)> {
        if range.start >= range.end {
            return Ok((Bytes::new(), None));
        }
        let store_err = |source| Error::Store {
            path: self.path.to_string(),
            source,
        };
        let res = self
            .store
            .get_opts(&self.path, ranged_get(range.clone(), class))
            .await
            .map_err(store_err)?;
        let tag = Some(store_tag(&res.meta));
        let body = res.bytes().await.map_err(store_err)?;
        let expected = range.end - range.start;
        if body.len() as u64 != expected {
            return Err(Error::Truncated {
                path: self.path.to_string(),
                range,
                expected,
                actual: body.len() as u64,
            });
        }
        Ok((body, tag))
    }

    /// `range` (one bounded GET unless the cache holds it), length-checked.
    pub(crate) async fn fetch(&self, range: Range<u64>, class: ObjectClass) -> Result<Bytes> {
        let mut one = self
            .read_through(std::slice::from_ref(&range), None, class)
            .await?;
        Ok(one.pop().unwrap_or_default())
    }

    /// `range` as [`Self::fetch`], also kept as pages (see
    /// [`Self::keep_pages`]): a whole small Parquet file read for its
    /// footer.
    pub(crate) async fn fetch_whole(&self, range: Range<u64>, class: ObjectClass) -> Result<Bytes> {
        let body = self.fetch(range.clone(), class).await?;
        if class != ObjectClass::Checkpoint {
            self.keep_pages(range.start, body.clone());
        }
        Ok(body)
    }

    /// Keeps `data` (bytes of the object from `start` holding column data,
    /// fetched with a footer) in the cache's memory tier, which keeps no
    /// footer class otherwise: later readers find the footer parsed and ask
    /// for the pages alone.
    pub(crate) fn keep_pages(&self, start: u64, data: Bytes) {
        if let Some(c) = &self.cache {
            c.cache.keep_in_memory(&c.key, start, data, None);
        }
    }

    /// Planned multi-range read (see [`fetch_ranges`]).
    pub(crate) async fn fetch_planned(
        &self,
        ranges: &[Range<u64>],
        params: &CostParams,
        class: ObjectClass,
    ) -> Result<Vec<Bytes>> {
        self.read_through(ranges, Some(params), class).await
    }

    /// `ranges`, one buffer each: those the cache holds from it, the others
    /// fetched (planned under `plan`, else one GET each) and kept.
    async fn read_through(
        &self,
        ranges: &[Range<u64>],
        plan: Option<&CostParams>,
        class: ObjectClass,
    ) -> Result<Vec<Bytes>> {
        let Some(c) = &self.cache else {
            return Ok(self.fetch_uncached(ranges, plan, class).await?.0);
        };
        let mut found = c.cache.find_in_memory(&c.key, ranges, class, &c.metrics);
        if c.cache.has_disk() && found.iter().any(Option::is_none) {
            self.find_on_disk(c, ranges, &mut found, class).await;
        }
        let missing: Vec<Range<u64>> = ranges
            .iter()
            .zip(&found)
            .filter(|(_, f)| f.is_none())
            .map(|(r, _)| r.clone())
            .collect();
        if missing.is_empty() {
            return Ok(found.into_iter().flatten().collect());
        }
        for r in missing.iter().filter(|r| r.start < r.end) {
            c.metrics.count_cache_miss(r.end - r.start);
        }
        let (fetched, extents) = self.fetch_uncached(&missing, plan, class).await?;
        if let Some(tag) = extents.iter().rev().find_map(|e| e.2.clone()) {
            *c.tag() = Some(tag);
        }
        let served_any = missing.len() < ranges.len();
        let stale = c.cache.keep(&c.key, extents, class, &c.metrics);
        if stale && served_any {
            // The object changed since the held ranges were fetched: none
            // of them may be mixed with the new bytes.
            return Ok(self.fetch_uncached(ranges, plan, class).await?.0);
        }
        let mut fetched = fetched.into_iter();
        for f in &mut found {
            if f.is_none() {
                *f = fetched.next();
            }
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// Fills what `found` lacks from disk entries, when an entry covers a
    /// range and was written under the store's current tag of the object
    /// (learned by one HEAD when no listing or response gave it yet).
    async fn find_on_disk(
        &self,
        c: &CacheUse,
        ranges: &[Range<u64>],
        found: &mut [Option<Bytes>],
        class: ObjectClass,
    ) {
        let wanted: Vec<(usize, Range<u64>)> = ranges
            .iter()
            .enumerate()
            .filter(|(i, r)| found[*i].is_none() && r.start < r.end)
            .map(|(i, r)| (i, r.clone()))
            .collect();
        if wanted.is_empty() {
            return;
        }
        let holdings = c.cache.disk_holdings(&c.key).await;
        if !wanted.iter().any(|(_, r)| holdings.any_covers(r)) {
            return;
        }
        let Some(tag) = self.current_tag(c, class).await else {
            return;
        };
        let hits = c
            .cache
            .find_on_disk(&c.key, tag, holdings, wanted, class, &c.metrics)
            .await;
        for (i, b) in hits {
            found[i] = Some(b);
        }
    }

    /// The store's current tag of the object: known, or asked with one
    /// HEAD (tagged `class`, counted as a cache validation). `None` when
    /// the HEAD fails: then nothing is served from disk, and the fetch
    /// that follows reports the store's error as an uncached read would.
    async fn current_tag(&self, c: &CacheUse, class: ObjectClass) -> Option<String> {
        if let Some(t) = c.tag().clone() {
            return Some(t);
        }
        let mut options = object_store::GetOptions {
            head: true,
            ..Default::default()
        };
        options.extensions.insert(class);
        c.metrics.count_cache_validation();
        let head = self.store.get_opts(&self.path, options).await.ok()?;
        let tag = store_tag(&head.meta);
        *c.tag() = Some(tag.clone());
        Some(tag)
    }

    /// `ranges` without the cache (planned under `plan`, else one GET
    /// each): one buffer per range, and the requests' own extents (start,
    /// body, tag).
    async fn fetch_uncached(
        &self,
        ranges: &[Range<u64>],
        plan: Option<&CostParams>,
        class: ObjectClass,
    ) -> Result<(Vec<Bytes>, Vec<Extent>)> {
        if let Some(params) = plan {
            return self.fetch_planned_uncached(ranges, params, class).await;
        }
        let mut buffers = Vec::with_capacity(ranges.len());
        let mut extents = Vec::with_capacity(ranges.len());
        for r in ranges {
            let (body, tag) = self.fetch_tagged(r.clone(), class).await?;
            buffers.push(body.clone());
            extents.push((r.start, body, tag));
        }
        Ok((buffers, extents))
    }

    /// The planned read without the cache: one buffer per range, and the
    /// requests' own extents (start, body, tag).
    async fn fetch_planned_uncached(
        &self,
        ranges: &[Range<u64>],
        params: &CostParams,
        class: ObjectClass,
    ) -> Result<(Vec<Bytes>, Vec<Extent>)> {
        let plan = plan_ranges(ranges, params).map_err(|e| match e {
            Error::InvalidRange { range, size, .. } => Error::InvalidRange {
                path: self.path.to_string(),
                range,
                size,
            },
            other => other,
        })?;
        let fetched: Vec<(Bytes, Option<String>)> = match &self.local {
            Some(local) if self.cache.is_none() => local
                .read(&self.path, plan.fetches.clone(), class)
                .await?
                .into_iter()
                .map(|b| (b, None))
                .collect(),
            _ => {
                futures::stream::iter(plan.fetches.iter().cloned())
                    .map(|r| self.fetch_tagged(r, class))
                    .buffered(params.max_concurrency.max(1))
                    .try_collect()
                    .await?
            }
        };
        let buffers: Vec<Bytes> = fetched.iter().map(|(b, _)| b.clone()).collect();
        let assembled = plan.assemble(&buffers).map_err(|e| match e {
            Error::Truncated {
                range,
                expected,
                actual,
                ..
            } => Error::Truncated {
                path: self.path.to_string(),
                range,
                expected,
                actual,
            },
            other => other,
        })?;
        let extents = plan
            .fetches
            .iter()
            .zip(fetched)
            .map(|(r, (b, tag))| (r.start, b, tag))
            .collect();
        Ok((assembled, extents))
    }
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt, PutPayload};

    use super::*;
    use crate::MeteredStore;

    #[tokio::test]
    async fn dv_ranges_are_planned_tagged_and_exact() {
        let metered = MeteredStore::new(InMemory::new());
        let metrics = metered.metrics().clone();
        let store: Arc<dyn ObjectStore> = Arc::new(metered);
        let path = Path::from("t/deletion_vector_abc.bin");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        store
            .put(&path, PutPayload::from(data.clone()))
            .await
            .unwrap();
        // Three DVs in one file (offsets as in Delta descriptors), one
        // repeated; a serial model merges the two close ones.
        let ranges = [1..41, 50..90, 90_000..90_100, 1..41];
        let params = CostParams::remote()
            .with_max_concurrency(1)
            .with_max_amplification(1.5);
        let got = fetch_ranges(&store, &path, &ranges, &params, ObjectClass::DeletionVector)
            .await
            .unwrap();
        for (r, b) in ranges.iter().zip(&got) {
            assert_eq!(&b[..], &data[r.start as usize..r.end as usize]);
        }
        let s = metrics.snapshot().class(ObjectClass::DeletionVector);
        assert_eq!((s.requests, s.bytes), (2, 89 + 100));

        let beyond = vec![99_990..100_010, 0..1];
        let err = fetch_ranges(&store, &path, &beyond, &params, ObjectClass::Other)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("deletion_vector_abc.bin"), "{err}");
    }
}
