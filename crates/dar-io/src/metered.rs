//! A store wrapper that counts requests, bytes and latency per object class.
//!
//! Every `get_opts` (ranged GET, whole GET or HEAD) is one request. Bytes are
//! counted as the body streams through, so a body dropped early counts only
//! what was read; latency is recorded both to the first byte (headers) and to
//! the last byte. The class comes from an [`ObjectClass`] placed in
//! `GetOptions::extensions` by a reader that knows better, else from the path
//! ([`ObjectClass::classify`]). Lists and writes are counted separately.
//!
//! [`IoMetrics`] is a cheap cloneable handle of atomics; [`IoMetrics::snapshot`]
//! can be taken at any time, also while requests are in flight.

use std::fmt;
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetResult, GetResultPayload, ObjectStore};

use crate::class::ObjectClass;
use crate::cost::{CostModel, Observation};
use crate::wrapper::wrapper_store;

#[derive(Debug, Default)]
struct ClassCounters {
    requests: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    ttfb_nanos: AtomicU64,
    total_nanos: AtomicU64,
    max_total_nanos: AtomicU64,
}

#[derive(Debug, Default)]
struct Counters {
    classes: [ClassCounters; 6],
    lists: AtomicU64,
    writes: AtomicU64,
    local_reads: AtomicU64,
    local_buffers_reused: AtomicU64,
    cache: CacheCounters,
}

#[derive(Debug, Default)]
struct CacheCounters {
    hits: AtomicU64,
    hit_bytes: AtomicU64,
    disk_hits: AtomicU64,
    disk_hit_bytes: AtomicU64,
    misses: AtomicU64,
    miss_bytes: AtomicU64,
    corrupt: AtomicU64,
    evictions: AtomicU64,
    validations: AtomicU64,
}

/// What reads through a store found in its [`crate::RangeCache`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounts {
    /// Ranges served from the memory tier.
    pub hits: u64,
    /// Bytes served from the memory tier.
    pub hit_bytes: u64,
    /// Ranges served from the disk tier.
    pub disk_hits: u64,
    /// Bytes served from the disk tier.
    pub disk_hit_bytes: u64,
    /// Ranges that no tier held (fetched, then kept).
    pub misses: u64,
    /// Bytes of those ranges.
    pub miss_bytes: u64,
    /// Disk cache entries that failed their checks (refetched; removed
    /// when their header shows dar wrote them).
    pub corrupt: u64,
    /// Memory extents evicted to stay within the budget.
    pub evictions: u64,
    /// HEAD requests made to learn an object's current tag before serving
    /// it from disk (one per reader of an object the disk tier holds).
    pub validations: u64,
}

impl CacheCounts {
    /// Every counter with its name, for adapters that export them.
    pub fn named(&self) -> [(&'static str, u64); 9] {
        [
            ("cache_hits", self.hits),
            ("cache_hit_bytes", self.hit_bytes),
            ("cache_disk_hits", self.disk_hits),
            ("cache_disk_hit_bytes", self.disk_hit_bytes),
            ("cache_misses", self.misses),
            ("cache_miss_bytes", self.miss_bytes),
            ("cache_corrupt", self.corrupt),
            ("cache_evictions", self.evictions),
            ("cache_validations", self.validations),
        ]
    }

    fn since(&self, e: &CacheCounts) -> CacheCounts {
        CacheCounts {
            hits: self.hits.saturating_sub(e.hits),
            hit_bytes: self.hit_bytes.saturating_sub(e.hit_bytes),
            disk_hits: self.disk_hits.saturating_sub(e.disk_hits),
            disk_hit_bytes: self.disk_hit_bytes.saturating_sub(e.disk_hit_bytes),
            misses: self.misses.saturating_sub(e.misses),
            miss_bytes: self.miss_bytes.saturating_sub(e.miss_bytes),
            corrupt: self.corrupt.saturating_sub(e.corrupt),
            evictions: self.evictions.saturating_sub(e.evictions),
            validations: self.validations.saturating_sub(e.validations),
        }
    }
}

/// Live I/O counters, shared by clones.
#[derive(Debug, Clone, Default)]
pub struct IoMetrics {
    inner: Arc<Counters>,
}

/// Counters of one object class at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// Requests issued (GET and HEAD).
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Sum of times to first byte.
    pub ttfb_total: Duration,
    /// Sum of times to last byte.
    pub latency_total: Duration,
    /// Longest time to last byte.
    pub latency_max: Duration,
}

impl ClassStats {
    /// Mean time to last byte (zero if no requests).
    pub fn latency_mean(&self) -> Duration {
        if self.requests == 0 {
            Duration::ZERO
        } else {
            self.latency_total / self.requests.min(u64::from(u32::MAX)) as u32
        }
    }
}

/// A consistent-enough copy of [`IoMetrics`] (each counter read once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoSnapshot {
    /// Per class, indexed by [`ObjectClass::index`].
    pub classes: [ClassStats; 6],
    /// List requests.
    pub lists: u64,
    /// Put / copy / rename / delete calls.
    pub writes: u64,
    /// Blocking calls that read local files directly, each every planned
    /// fetch of one file (its requests are counted per class as well).
    pub local_reads: u64,
    /// Local reads into a buffer an earlier read filled and handed back
    /// once its bytes were dropped (no zeroing, no fresh pages).
    pub local_buffers_reused: u64,
    /// Byte-range cache hits and misses.
    pub cache: CacheCounts,
}

impl IoSnapshot {
    /// Stats of one class.
    pub fn class(&self, class: ObjectClass) -> ClassStats {
        self.classes[class.index()]
    }

    /// GET/HEAD requests over all classes.
    pub fn requests(&self) -> u64 {
        self.classes.iter().map(|c| c.requests).sum()
    }

    /// Body bytes over all classes.
    pub fn bytes(&self) -> u64 {
        self.classes.iter().map(|c| c.bytes).sum()
    }

    /// Counts since `earlier` (a snapshot of the same metrics); maxima are kept.
    pub fn since(&self, earlier: &IoSnapshot) -> IoSnapshot {
        let mut out = *self;
        for (o, e) in out.classes.iter_mut().zip(earlier.classes.iter()) {
            o.requests = o.requests.saturating_sub(e.requests);
            o.bytes = o.bytes.saturating_sub(e.bytes);
            o.errors = o.errors.saturating_sub(e.errors);
            o.ttfb_total = o.ttfb_total.saturating_sub(e.ttfb_total);
            o.latency_total = o.latency_total.saturating_sub(e.latency_total);
        }
        out.lists = out.lists.saturating_sub(earlier.lists);
        out.writes = out.writes.saturating_sub(earlier.writes);
        out.local_reads = out.local_reads.saturating_sub(earlier.local_reads);
        out.local_buffers_reused = out
            .local_buffers_reused
            .saturating_sub(earlier.local_buffers_reused);
        out.cache = self.cache.since(&earlier.cache);
        out
    }
}

impl fmt::Display for IoSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "requests={} bytes={}", self.requests(), self.bytes())?;
        for c in ObjectClass::ALL {
            let s = self.class(c);
            if s.requests > 0 {
                write!(f, " {}:{}req/{}B", c.name(), s.requests, s.bytes)?;
            }
        }
        let c = &self.cache;
        if c.hits + c.disk_hits + c.misses + c.corrupt > 0 {
            write!(
                f,
                " cache: {}hit/{}B disk:{}hit/{}B miss:{}/{}B",
                c.hits, c.hit_bytes, c.disk_hits, c.disk_hit_bytes, c.misses, c.miss_bytes
            )?;
            if c.validations > 0 {
                write!(f, " validated:{}", c.validations)?;
            }
            if c.corrupt > 0 {
                write!(f, " corrupt:{}", c.corrupt)?;
            }
        }
        Ok(())
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl IoMetrics {
    /// Fresh zeroed metrics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Copies the counters.
    pub fn snapshot(&self) -> IoSnapshot {
        let mut out = IoSnapshot::default();
        for (o, c) in out.classes.iter_mut().zip(self.inner.classes.iter()) {
            *o = ClassStats {
                requests: c.requests.load(Ordering::Relaxed),
                bytes: c.bytes.load(Ordering::Relaxed),
                errors: c.errors.load(Ordering::Relaxed),
                ttfb_total: Duration::from_nanos(c.ttfb_nanos.load(Ordering::Relaxed)),
                latency_total: Duration::from_nanos(c.total_nanos.load(Ordering::Relaxed)),
                latency_max: Duration::from_nanos(c.max_total_nanos.load(Ordering::Relaxed)),
            };
        }
        out.lists = self.inner.lists.load(Ordering::Relaxed);
        out.writes = self.inner.writes.load(Ordering::Relaxed);
        out.local_reads = self.inner.local_reads.load(Ordering::Relaxed);
        out.local_buffers_reused = self.inner.local_buffers_reused.load(Ordering::Relaxed);
        let c = &self.inner.cache;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        out.cache = CacheCounts {
            hits: get(&c.hits),
            hit_bytes: get(&c.hit_bytes),
            disk_hits: get(&c.disk_hits),
            disk_hit_bytes: get(&c.disk_hit_bytes),
            misses: get(&c.misses),
            miss_bytes: get(&c.miss_bytes),
            corrupt: get(&c.corrupt),
            evictions: get(&c.evictions),
            validations: get(&c.validations),
        };
        out
    }

    /// Counts a range served by the memory tier (`disk`: the disk tier).
    pub(crate) fn count_cache_hit(&self, bytes: u64, disk: bool) {
        let c = &self.inner.cache;
        let (n, b) = if disk {
            (&c.disk_hits, &c.disk_hit_bytes)
        } else {
            (&c.hits, &c.hit_bytes)
        };
        n.fetch_add(1, Ordering::Relaxed);
        b.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a range no tier held.
    pub(crate) fn count_cache_miss(&self, bytes: u64) {
        let c = &self.inner.cache;
        c.misses.fetch_add(1, Ordering::Relaxed);
        c.miss_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a corrupt disk cache file.
    pub(crate) fn count_cache_corrupt(&self) {
        self.inner.cache.corrupt.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a HEAD made to check an object before a disk hit.
    pub(crate) fn count_cache_validation(&self) {
        self.inner.cache.validations.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts memory extents evicted.
    pub(crate) fn count_cache_evictions(&self, n: u64) {
        self.inner.cache.evictions.fetch_add(n, Ordering::Relaxed);
    }

    fn class(&self, class: ObjectClass) -> &ClassCounters {
        &self.inner.classes[class.index()]
    }

    /// Counts one blocking call of direct local reads.
    pub(crate) fn count_local_read(&self) {
        self.inner.local_reads.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one local read into a pooled buffer.
    pub(crate) fn count_local_buffer_reused(&self) {
        self.inner
            .local_buffers_reused
            .fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn start_request(&self, class: ObjectClass) {
        self.class(class).requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn error(&self, class: ObjectClass) {
        self.class(class).errors.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn finish(&self, class: ObjectClass, bytes: u64, ttfb: Duration, total: Duration) {
        let c = self.class(class);
        c.bytes.fetch_add(bytes, Ordering::Relaxed);
        c.ttfb_nanos.fetch_add(nanos(ttfb), Ordering::Relaxed);
        c.total_nanos.fetch_add(nanos(total), Ordering::Relaxed);
        c.max_total_nanos.fetch_max(nanos(total), Ordering::Relaxed);
    }
}

/// An [`ObjectStore`] that meters every request into an [`IoMetrics`] and,
/// optionally, feeds a [`CostModel`].
pub struct MeteredStore<T> {
    inner: T,
    metrics: IoMetrics,
    cost: Option<Arc<CostModel>>,
}

impl<T: ObjectStore> MeteredStore<T> {
    /// Wraps `inner` with fresh metrics.
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            metrics: IoMetrics::new(),
            cost: None,
        }
    }

    /// Uses (shares) these metrics.
    pub fn with_metrics(mut self, metrics: IoMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Feeds every completed ranged GET into this cost model.
    pub fn with_cost_model(mut self, cost: Arc<CostModel>) -> Self {
        self.cost = Some(cost);
        self
    }

    /// The metrics handle.
    pub fn metrics(&self) -> &IoMetrics {
        &self.metrics
    }

    /// The wrapped store.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<T: ObjectStore> fmt::Debug for MeteredStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Display, not Debug, of the inner store: Debug of a cloud client may
        // show credential ids.
        write!(f, "MeteredStore({})", self.inner)
    }
}

/// Records a request when its body has been read to the end, failed, or was dropped.
struct Recorder {
    metrics: IoMetrics,
    cost: Option<Arc<CostModel>>,
    class: ObjectClass,
    start: Instant,
    ttfb: Duration,
    bytes: u64,
    done: bool,
}

impl Recorder {
    fn finish(&mut self, failed: bool) {
        if self.done {
            return;
        }
        self.done = true;
        let total = self.start.elapsed();
        self.metrics
            .finish(self.class, self.bytes, self.ttfb, total);
        if failed {
            self.metrics.error(self.class);
        } else if let Some(cost) = &self.cost {
            cost.observe(Observation {
                bytes: self.bytes,
                ttfb: self.ttfb,
                total,
            });
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.finish(false);
    }
}

struct MeteredStream {
    inner: BoxStream<'static, object_store::Result<Bytes>>,
    rec: Recorder,
}

impl Stream for MeteredStream {
    type Item = object_store::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let next = this.inner.poll_next_unpin(cx);
        match &next {
            Poll::Ready(Some(Ok(b))) => this.rec.bytes += b.len() as u64,
            Poll::Ready(Some(Err(_))) => this.rec.finish(true),
            Poll::Ready(None) => this.rec.finish(false),
            Poll::Pending => {}
        }
        next
    }
}

impl<T: ObjectStore> MeteredStore<T> {
    /// `get_opts`: times the request and meters its body per object class.
    async fn get_metered(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let class = options
            .extensions
            .get::<ObjectClass>()
            .copied()
            .unwrap_or_else(|| ObjectClass::classify(location));
        let is_head = options.head;
        let ranged = options.range.is_some();
        self.metrics.start_request(class);
        let start = Instant::now();
        let result = match self.inner.get_opts(location, options).await {
            Ok(r) => r,
            Err(e) => {
                self.metrics
                    .finish(class, 0, start.elapsed(), start.elapsed());
                self.metrics.error(class);
                return Err(e);
            }
        };
        let ttfb = start.elapsed();
        // Ranged GETs teach the cost model all they show; a whole-object
        // GET only its wait, since its body may be a stream the caller
        // never reads; a HEAD nothing (no body, and maybe a shortcut).
        if !ranged
            && !is_head
            && let Some(cost) = &self.cost
        {
            cost.observe_first_byte(ttfb);
        }
        let cost = if ranged && !is_head {
            self.cost.clone()
        } else {
            None
        };
        let mut rec = Recorder {
            metrics: self.metrics.clone(),
            cost,
            class,
            start,
            ttfb,
            bytes: 0,
            done: false,
        };
        if is_head {
            rec.finish(false);
            return Ok(result);
        }
        let GetResult {
            payload,
            meta,
            range,
            attributes,
        } = result;
        let payload = match payload {
            GetResultPayload::Stream(s) => {
                GetResultPayload::Stream(MeteredStream { inner: s, rec }.boxed())
            }
            // A local file is read later by the caller; count the range now.
            #[allow(unreachable_patterns, reason = "File exists only with the fs feature")]
            other => {
                rec.bytes = range.end - range.start;
                rec.finish(false);
                other
            }
        };
        Ok(GetResult {
            payload,
            meta,
            range,
            attributes,
        })
    }

    fn count_write(&self) {
        self.metrics.inner.writes.fetch_add(1, Ordering::Relaxed);
    }

    fn count_list(&self, _prefix: Option<&Path>, _offset: Option<&Path>) {
        self.metrics.inner.lists.fetch_add(1, Ordering::Relaxed);
    }
}

wrapper_store!(
    MeteredStore,
    get = get_metered,
    writes = count_write,
    lists = count_list
);

/// Builds `GetOptions` for a bounded range tagged with a class.
pub(crate) fn ranged_get(range: Range<u64>, class: ObjectClass) -> GetOptions {
    let mut ext = object_store::Extensions::new();
    ext.insert(class);
    GetOptions::new()
        .with_range(Some(range))
        .with_extensions(ext)
}

#[cfg(test)]
mod tests;
