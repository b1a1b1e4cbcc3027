//! A Parquet [`AsyncFileReader`] that plans its reads.
//!
//! Read sequence for one file:
//!
//! ```text
//! get_metadata ─┬─ cache hit (path, size, version) ──────────────► ParquetMetaData
//!               ├─ being loaded by another reader: wait for that load (one GET for all)
//!               ├─ size <= whole-object threshold: 1 GET of the whole object,
//!               │    footer parsed from memory; every later range is a slice
//!               └─ else 1 GET of the last `footer_hint` bytes
//!                    (+1 GET only if footer + page indexes are larger)
//! get_byte_ranges ── RangeStrategy::Planned: plan_ranges(cost model) ─► GETs
//!                                                                  └─► slices
//! ```
//!
//! The end of a Parquet file, which the first GET (the last `footer_hint`
//! bytes) is meant to cover whole:
//!
//! ```text
//! ... column chunks | column index | offset index | FileMetaData | len: u32 LE | "PAR1"
//!                   |<------- page indexes ------>|<--- len --->|<--- 8 bytes footer --->|
//! ```
//!
//! If `len + 8` exceeds the hint, parquet's loader asks for the rest of the
//! metadata (a second GET); page indexes inside the fetched bytes are served
//! from memory, others cost one more GET.
//!
//! Before parquet decodes a footer or a page index, [`crate::footer_check`]
//! walks its bytes: a length parquet would size a vector by that the bytes
//! cannot hold (2^31-1 row groups aborted the process) is an error naming
//! the file, as is a schema nesting too deep for parquet's recursion.
//!
//! Footer GETs are tagged [`ObjectClass::Footer`] and page reads
//! [`ObjectClass::PageData`] (or all with one class,
//! [`ParquetReader::with_object_class`]) so a [`crate::MeteredStore`] below
//! attributes them. Every body's length is checked against its range; a
//! range outside a known object size is an error before any request is sent
//! (a suffix range longer than the object is never sent: the size is always
//! known first).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::{AsyncFileReader, MetadataFetch};
use parquet::errors::ParquetError;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

use crate::class::ObjectClass;
use crate::cost::{CostModel, CostParams};
use crate::error::{Error, Result};
use crate::fetch::{CacheUse, Fetcher};
use crate::footer_cache::{CachedMetadata, MetadataCache};
use crate::footer_check::PageIndexes;
use crate::identity::{ObjectId, ObjectVersion, StoreId};
use crate::metered::IoMetrics;
use crate::range_cache::RangeCache;
use crate::thrift_walk::Refusal;

/// Default footer prefetch: enough for the footer and page indexes of most
/// files in one request.
pub const DEFAULT_FOOTER_HINT: usize = 64 * 1024;

/// Default size under which remote objects are read whole.
pub const DEFAULT_WHOLE_OBJECT_THRESHOLD: u64 = 1024 * 1024;

/// How `get_byte_ranges` turns ranges into requests.
#[derive(Debug, Clone, PartialEq)]
pub enum RangeStrategy {
    /// dar's planner with the reader's cost model.
    Planned,
    /// object_store's `coalesce_ranges` (merge gaps up to `max_gap`, 10 in flight).
    Coalesce {
        /// Largest gap merged.
        max_gap: u64,
    },
    /// One request per range.
    Exact {
        /// Requests in flight.
        concurrency: usize,
    },
}

/// Serves the footer loader: every fetched buffer is kept so that the page
/// index (usually just before the footer) comes from the same request.
struct FooterFetch {
    fetcher: Fetcher,
    class: ObjectClass,
    /// The whole object, when it was read whole.
    whole: Option<Bytes>,
    buffers: Vec<(u64, Bytes)>,
}

impl FooterFetch {
    /// `range` of the object, from the bytes already fetched or by a GET
    /// (whose bytes are kept).
    async fn get(&mut self, range: Range<u64>) -> Result<Bytes> {
        if let Some(whole) = &self.whole
            && let Some(b) = from_buffers(&[(0, whole.clone())], &range)
        {
            return Ok(b);
        }
        if let Some(b) = from_buffers(&self.buffers, &range) {
            return Ok(b);
        }
        let b = self.fetcher.fetch(range.clone(), self.class).await?;
        self.buffers.push((range.start, b.clone()));
        Ok(b)
    }
}

/// The bytes from the start of the footer to the end of the file, from the
/// file's last 8 bytes (`footer length: u32 LE`, `PAR1`); `None` when they
/// are not a plain Parquet footer.
fn footer_span(tail: &[u8]) -> Option<u64> {
    let end = tail.len().checked_sub(8)?;
    let trailer = tail.get(end..)?;
    if &trailer[4..] != b"PAR1" {
        return None;
    }
    let len = u32::from_le_bytes(trailer[..4].try_into().ok()?);
    Some(u64::from(len) + 8)
}

fn from_buffers(buffers: &[(u64, Bytes)], range: &Range<u64>) -> Option<Bytes> {
    buffers.iter().find_map(|(start, b)| {
        let end = start + b.len() as u64;
        (range.start >= *start && range.end <= end)
            .then(|| b.slice((range.start - start) as usize..(range.end - start) as usize))
    })
}

impl MetadataFetch for &mut FooterFetch {
    fn fetch(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move { self.get(range).await.map_err(Error::into_parquet) }.boxed()
    }
}

/// A Parquet reader over one object of an object store.
#[derive(Debug)]
pub struct ParquetReader {
    fetcher: Fetcher,
    size: Option<u64>,
    version: Option<ObjectVersion>,
    /// The store the object lives in, for cache keys.
    store_id: Option<StoreId>,
    cache: Option<MetadataCache>,
    cost: Arc<CostModel>,
    footer_hint: usize,
    whole_threshold: u64,
    strategy: RangeStrategy,
    /// The class of every request, when not footer / page data.
    class: Option<ObjectClass>,
    /// The whole object, when it was read whole.
    whole: Option<Bytes>,
    /// Footer-area buffers already fetched.
    buffers: Vec<(u64, Bytes)>,
    /// The byte-range cache to read through, keyed once the size is known.
    range_cache: Option<RangeCacheUse>,
}

/// A range cache and the metrics its hits and misses are counted in.
#[derive(Debug, Clone)]
struct RangeCacheUse {
    cache: RangeCache,
    metrics: IoMetrics,
}

impl ParquetReader {
    /// A reader of `path` with remote cost defaults, no cache, size unknown
    /// (learned by a HEAD when needed).
    pub fn new(store: Arc<dyn ObjectStore>, path: Path) -> Self {
        Self {
            fetcher: Fetcher::new(store, path),
            size: None,
            version: None,
            store_id: None,
            cache: None,
            cost: Arc::new(CostModel::new(CostParams::remote())),
            footer_hint: DEFAULT_FOOTER_HINT,
            whole_threshold: DEFAULT_WHOLE_OBJECT_THRESHOLD,
            strategy: RangeStrategy::Planned,
            class: None,
            whole: None,
            buffers: Vec::new(),
            range_cache: None,
        }
    }

    /// A reader of a listed object (size and version tag known).
    pub fn from_meta(store: Arc<dyn ObjectStore>, meta: &ObjectMeta) -> Self {
        Self::new(store, meta.location.clone())
            .with_size(Some(meta.size))
            .with_version(Some(ObjectVersion::of(meta)))
    }

    /// The object size, if known (Delta `add.size`): saves a HEAD.
    pub fn with_size(mut self, size: Option<u64>) -> Self {
        self.size = size;
        self
    }

    /// The object's version for cache keys: a listing's tag, or the
    /// modification time a Delta log records.
    pub fn with_version(mut self, version: Option<ObjectVersion>) -> Self {
        self.version = version;
        self
    }

    /// The store the object lives in, so that cache entries of objects at
    /// the same path in two stores never meet (default: an identity of
    /// this reader alone, which shares no cache entry with another reader).
    pub fn with_store_id(mut self, store: StoreId) -> Self {
        self.store_id = Some(store);
        self
    }

    /// Reads planned fetches directly from the local file system (see
    /// [`crate::local`]).
    pub(crate) fn with_local_files(mut self, local: Option<crate::local::LocalFiles>) -> Self {
        self.fetcher = self.fetcher.with_local(local);
        self
    }

    /// The object's identity as far as it is known now.
    fn object_id(&mut self) -> ObjectId {
        let store = self.store_id.get_or_insert_with(StoreId::unique).clone();
        ObjectId::new(store, self.fetcher.path.to_string())
            .with_size(self.size)
            .with_version(self.version.clone())
    }

    /// Shares a footer cache.
    pub fn with_cache(mut self, cache: Option<MetadataCache>) -> Self {
        self.cache = cache;
        self
    }

    /// Reads through `cache` (pages, footers, whole small objects), keying
    /// this object by its identity (see [`Self::with_store_id`]), and
    /// counting hits and misses in `metrics`.
    pub fn with_range_cache(mut self, cache: Option<RangeCache>, metrics: IoMetrics) -> Self {
        self.range_cache = cache
            .filter(RangeCache::is_enabled)
            .map(|cache| RangeCacheUse { cache, metrics });
        self.fetcher.cache = None;
        self
    }

    /// Attaches the range cache to the fetcher, keyed by what is known of
    /// the object now (call once its size is known).
    fn attach_cache(&mut self) {
        if self.fetcher.cache.is_some() {
            return;
        }
        let Some(rc) = self.range_cache.clone() else {
            return;
        };
        let key = self.object_id();
        self.fetcher.cache = Some(CacheUse::new(rc.cache, key, rc.metrics));
    }

    /// Plans with this cost model.
    pub fn with_cost_model(mut self, cost: Arc<CostModel>) -> Self {
        self.cost = cost;
        self
    }

    /// Bytes fetched from the end of the object for the footer (at least 8).
    pub fn with_footer_hint(mut self, bytes: usize) -> Self {
        self.footer_hint = bytes.max(8);
        self
    }

    /// Objects of at most this size are read whole (0 disables).
    pub fn with_whole_object_threshold(mut self, bytes: u64) -> Self {
        self.whole_threshold = bytes;
        self
    }

    /// How ranges become requests.
    pub fn with_range_strategy(mut self, strategy: RangeStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Tags every request of this reader, footer and pages alike, with
    /// `class` (for example [`ObjectClass::Checkpoint`] for a Delta
    /// checkpoint, all of which is log) instead of [`ObjectClass::Footer`]
    /// and [`ObjectClass::PageData`].
    pub fn with_object_class(mut self, class: ObjectClass) -> Self {
        self.class = Some(class);
        self
    }

    /// The object path.
    pub fn path(&self) -> &Path {
        &self.fetcher.path
    }

    /// The object size, once known.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Whether the whole object was read (with its footer) and every range
    /// is served from memory.
    pub fn holds_whole_object(&self) -> bool {
        self.whole.is_some()
    }

    async fn ensure_size(&mut self) -> Result<u64> {
        if let Some(s) = self.size {
            return Ok(s);
        }
        let meta = self
            .fetcher
            .store
            .head(&self.fetcher.path)
            .await
            .map_err(|source| Error::Store {
                path: self.fetcher.path.to_string(),
                source,
            })?;
        self.size = Some(meta.size);
        if self.version.is_none() {
            self.version = Some(ObjectVersion::of(&meta));
        }
        Ok(meta.size)
    }

    fn parquet_err(&self, source: parquet::errors::ParquetError) -> Error {
        Error::Parquet {
            path: self.fetcher.path.to_string(),
            source,
        }
    }

    /// Loads (or finds in the cache) the footer, with page indexes when the
    /// options ask for them. When a footer does not parse at the size the
    /// caller gave (Delta `add.size`), one HEAD tells whether the object is
    /// really that size: if not, the error is [`Error::SizeMismatch`].
    pub async fn load_metadata(
        &mut self,
        options: Option<&ArrowReaderOptions>,
    ) -> Result<Arc<ParquetMetaData>> {
        let given = self.size;
        match self.load_metadata_at_size(options).await {
            Err(e @ Error::Parquet { .. }) => {
                let Some(expected) = given else {
                    return Err(e);
                };
                match self.fetcher.store.head(&self.fetcher.path).await {
                    Ok(meta) if meta.size != expected => Err(Error::SizeMismatch {
                        path: self.fetcher.path.to_string(),
                        expected,
                        actual: meta.size,
                    }),
                    _ => Err(e),
                }
            }
            other => other,
        }
    }

    async fn load_metadata_at_size(
        &mut self,
        options: Option<&ArrowReaderOptions>,
    ) -> Result<Arc<ParquetMetaData>> {
        let size = self.ensure_size().await?;
        self.attach_cache();
        let want_index = options.is_some_and(|o| {
            o.column_index_policy() != PageIndexPolicy::Skip
                || o.offset_index_policy() != PageIndexPolicy::Skip
        });
        let Some(cache) = self.cache.clone() else {
            return Ok(self.read_footer(options, size, want_index).await?.metadata);
        };
        let key = self.object_id();
        // Readers of one object at the same time share one footer read.
        let cached = cache
            .get_or_try_load(key.clone(), || self.read_footer(options, size, want_index))
            .await?;
        if cached.page_index_loaded || !want_index {
            return Ok(cached.metadata);
        }
        // Footer cached without page indexes: add them.
        let footer = (*cached.metadata).clone();
        let metadata = Arc::new(self.add_page_index(footer, options).await?);
        cache
            .insert(
                key,
                CachedMetadata {
                    metadata: Arc::clone(&metadata),
                    page_index_loaded: true,
                },
            )
            .await;
        Ok(metadata)
    }

    /// Reads and parses the footer (whole object when small), with page
    /// indexes when `want_index`. Both are checked before parquet decodes
    /// them ([`Self::check_footer`], [`Self::add_page_index`]).
    async fn read_footer(
        &mut self,
        options: Option<&ArrowReaderOptions>,
        size: u64,
        want_index: bool,
    ) -> Result<CachedMetadata> {
        let class = self.class.unwrap_or(ObjectClass::Footer);
        let metadata = if size <= self.whole_threshold {
            let whole = self.fetcher.fetch_whole(0..size, class).await?;
            self.whole = Some(whole.clone());
            self.check_footer(&whole)?;
            ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .with_page_index_policy(PageIndexPolicy::Skip)
                .parse_and_finish(&whole)
                .map_err(|e| self.parquet_err(e))?
        } else {
            // The tail parquet would fetch first, fetched here so the
            // footer's schema depth is checked before parquet decodes it;
            // parquet then finds the bytes in the buffers (no extra
            // request, unless the footer outgrows the hint, as before).
            // At least the trailer, at most the object (an object shorter
            // than a trailer is read whole and refused by parquet).
            let hint = u64::try_from(self.footer_hint)
                .unwrap_or(u64::MAX)
                .max(8)
                .min(size);
            let mut tail = self.fetcher.fetch(size - hint..size, class).await?;
            let mut tail_start = size - hint;
            if let Some(need) = footer_span(&tail).filter(|n| *n > tail.len() as u64 && *n <= size)
            {
                tail_start = size - need;
                tail = self.fetcher.fetch(tail_start..size, class).await?;
            }
            self.check_footer(&tail)?;
            // Column data fetched with the footer: kept for later readers,
            // which find the footer parsed and ask for the pages alone.
            if class != ObjectClass::Checkpoint
                && let Some(span) = footer_span(&tail)
                && let Some(data_len) = (tail.len() as u64).checked_sub(span).filter(|n| *n > 0)
            {
                self.fetcher
                    .keep_pages(tail_start, tail.slice(..data_len as usize));
            }
            self.buffers.push((tail_start, tail));
            let mut fetch = self.footer_fetch();
            let md = ParquetMetaDataReader::new()
                .with_arrow_reader_options(options)
                .with_page_index_policy(PageIndexPolicy::Skip)
                .with_prefetch_hint(Some(self.footer_hint))
                .load_and_finish(&mut fetch, size)
                .await
                .map_err(|e| self.parquet_err(e))?;
            self.buffers = fetch.buffers;
            md
        };
        let metadata = if want_index {
            self.add_page_index(metadata, options).await?
        } else {
            metadata
        };
        Ok(CachedMetadata {
            metadata: Arc::new(metadata),
            page_index_loaded: want_index,
        })
    }

    /// Refuses a footer parquet must not decode ([`crate::footer_check`]):
    /// a length it claims that its bytes cannot hold (parquet sized
    /// vectors by such claims, and the failed allocation aborted the
    /// process), bytes that are not the Thrift parquet reads, a schema
    /// nesting deeper than [`MAX_SCHEMA_DEPTH`](crate::MAX_SCHEMA_DEPTH)
    /// (a deep one overflowed the stack). `tail` ends at the end of the
    /// file; a tail too short for its footer, or bytes that are no plain
    /// footer, are left to parquet to report (it decodes nothing then).
    fn check_footer(&self, tail: &[u8]) -> Result<()> {
        let Some(span) = footer_span(tail).and_then(|s| usize::try_from(s).ok()) else {
            return Ok(());
        };
        if span > tail.len() {
            return Ok(());
        }
        let footer = &tail[tail.len() - span..tail.len() - 8];
        let reason = match crate::footer_check::check_footer(footer) {
            Ok(_) => return Ok(()),
            Err(Refusal::TooDeep(depth)) => format!(
                "its schema nests deeper than the {} levels dar reads (at least {depth})",
                crate::MAX_SCHEMA_DEPTH
            ),
            Err(refusal) => format!("its footer {refusal}"),
        };
        Err(self.parquet_err(ParquetError::General(reason)))
    }

    /// `metadata` with the page indexes `options` ask for, each column
    /// chunk's checked ([`crate::footer_check`]) before parquet decodes
    /// it: parquet sized the page locations of an offset index by the
    /// count it claims. The bytes come from those already fetched or from
    /// one GET, which parquet then reads from.
    async fn add_page_index(
        &mut self,
        metadata: ParquetMetaData,
        options: Option<&ArrowReaderOptions>,
    ) -> Result<ParquetMetaData> {
        let which = PageIndexes {
            columns: options.is_some_and(|o| o.column_index_policy() != PageIndexPolicy::Skip),
            offsets: options.is_some_and(|o| o.offset_index_policy() != PageIndexPolicy::Skip),
        };
        let mut fetch = self.footer_fetch();
        let span = which
            .span(&metadata)
            .filter(|s| self.size.is_none_or(|size| s.end <= size));
        if let Some(span) = span {
            let checked = match fetch.get(span.clone()).await {
                Ok(bytes) => which.check(&metadata, span.start, &bytes),
                Err(e) => {
                    self.buffers = fetch.buffers;
                    return Err(e);
                }
            };
            if let Err(refusal) = checked {
                self.buffers = fetch.buffers;
                return Err(self.parquet_err(ParquetError::General(refusal)));
            }
        }
        let mut r =
            ParquetMetaDataReader::new_with_metadata(metadata).with_arrow_reader_options(options);
        let loaded = r.load_page_index(&mut fetch).await;
        self.buffers = fetch.buffers;
        loaded.map_err(|e| self.parquet_err(e))?;
        r.finish().map_err(|e| self.parquet_err(e))
    }

    fn footer_fetch(&mut self) -> FooterFetch {
        FooterFetch {
            fetcher: self.fetcher.clone(),
            class: self.class.unwrap_or(ObjectClass::Footer),
            whole: self.whole.clone(),
            buffers: std::mem::take(&mut self.buffers),
        }
    }

    /// Fetches `ranges` (any order, overlaps allowed) by the reader's
    /// strategy; one buffer per range, in input order.
    pub async fn read_ranges(&mut self, ranges: Vec<Range<u64>>) -> Result<Vec<Bytes>> {
        let size = self.size;
        if size.is_some() {
            self.attach_cache();
        }
        for r in &ranges {
            if r.start > r.end || size.is_some_and(|s| r.end > s) {
                return Err(Error::InvalidRange {
                    path: self.fetcher.path.to_string(),
                    range: r.clone(),
                    size,
                });
            }
        }
        if let Some(whole) = &self.whole {
            return Ok(ranges
                .iter()
                .map(|r| whole.slice(r.start as usize..r.end as usize))
                .collect());
        }
        let served: Option<Vec<Bytes>> = ranges
            .iter()
            .map(|r| from_buffers(&self.buffers, r))
            .collect();
        if let Some(all) = served {
            return Ok(all);
        }
        let fetcher = self.fetcher.clone();
        let class = self.class.unwrap_or(ObjectClass::PageData);
        let fetch = |r: Range<u64>| {
            let f = fetcher.clone();
            async move { f.fetch(r, class).await }
        };
        match &self.strategy {
            RangeStrategy::Planned => {
                fetcher
                    .fetch_planned(&ranges, &self.cost.params(), class)
                    .await
            }
            RangeStrategy::Coalesce { max_gap } => {
                object_store::coalesce_ranges(&ranges, fetch, *max_gap).await
            }
            RangeStrategy::Exact { concurrency } => {
                futures::stream::iter(ranges)
                    .map(fetch)
                    .buffered((*concurrency).max(1))
                    .try_collect()
                    .await
            }
        }
    }
}

impl AsyncFileReader for ParquetReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move {
            let mut v = self
                .read_ranges(vec![range])
                .await
                .map_err(Error::into_parquet)?;
            Ok(v.pop().unwrap_or_default())
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        async move { self.read_ranges(ranges).await.map_err(Error::into_parquet) }.boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            self.load_metadata(options)
                .await
                .map_err(Error::into_parquet)
        }
        .boxed()
    }
}
