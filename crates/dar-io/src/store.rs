//! Table URI to object store.
//!
//! | URI                                   | store            | table root      |
//! |---------------------------------------|------------------|-----------------|
//! | `relative/dir`, `/abs/dir`            | `LocalFileSystem`| absolute path   |
//! | `file:///abs/dir`                     | `LocalFileSystem`| absolute path   |
//! | `memory://` , `memory://name/prefix`  | `InMemory` (new) | `name/prefix`   |
//! | `s3://bucket/prefix` (`s3a://`)       | `AmazonS3`       | `prefix`        |
//! | `az://`, `abfs[s]://`, `adl://`, `azure://` | `MicrosoftAzure` (feature `azure`) | path |
//! | `gs://bucket/prefix`                  | `GoogleCloudStorage` (feature `gcp`) | `prefix` |
//!
//! Cloud stores take the usual environment variables (`AWS_*`, `AZURE_*`,
//! `GOOGLE_*`, as object_store's `from_env`), then the caller's
//! [`StorageOptions`] on top. The built store is layered:
//!
//! ```text
//! CheckedStore (body length check; retries are object_store's, per RetryPolicy)
//!   └ LimitStore (max concurrent requests)
//!       └ MeteredStore (requests, bytes, latency per class -> IoMetrics, CostModel)
//!           └ backend (LocalFileSystem, AmazonS3, ...)
//! ```

use std::fmt;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::limit::LimitStore;
use object_store::local::LocalFileSystem;

use crate::local::LocalFiles;
use object_store::memory::InMemory;
use object_store::path::Path;
use url::Url;

use crate::checked::CheckedStore;
use crate::cost::{CostModel, CostParams};
use crate::error::Result;
use crate::footer_cache::MetadataCache;
use crate::identity::{ObjectId, StoreId};
use crate::metered::{IoMetrics, MeteredStore};
use crate::options::{
    StorageOptions, endpoint_secrets, is_endpoint_key, is_sas_key, redact_uri, sas_secrets,
};
use crate::range_cache::RangeCache;
use crate::redacted::RedactedStore;
use crate::retry::RetryPolicy;

/// Which kind of backend a table lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Local file system.
    Local,
    /// In-process memory.
    Memory,
    /// Amazon S3 or an S3-compatible server.
    S3,
    /// Azure Blob Storage / ADLS Gen2.
    Azure,
    /// Google Cloud Storage.
    Gcs,
}

impl Backend {
    /// Whether requests cross a network (remote cost defaults apply).
    pub fn is_remote(self) -> bool {
        !matches!(self, Backend::Local | Backend::Memory)
    }
}

/// A table's object store, its root inside the store, and what measures it.
#[derive(Clone)]
pub struct TableStore {
    store: Arc<dyn ObjectStore>,
    root: Path,
    url: Url,
    backend: Backend,
    metrics: IoMetrics,
    cost: Arc<CostModel>,
    cache: MetadataCache,
    range_cache: RangeCache,
    store_id: StoreId,
    /// Direct reads, when the store is the local file system dar built.
    local: Option<LocalFiles>,
}

impl fmt::Debug for TableStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableStore")
            .field("store", &format_args!("{}", self.store))
            .field("root", &self.root.as_ref())
            .field("url", &self.url.as_str())
            .field("backend", &self.backend)
            .field("store_id", &self.store_id)
            .finish_non_exhaustive()
    }
}

impl TableStore {
    /// Starts building the store for `uri`.
    pub fn builder(uri: impl Into<String>) -> TableStoreBuilder {
        TableStoreBuilder::new(uri)
    }

    /// Opens `uri` with `options` and defaults for everything else.
    pub fn open(uri: &str, options: StorageOptions) -> Result<Self> {
        TableStoreBuilder::new(uri).with_options(options).build()
    }

    /// The layered store (retries, limit, metering, backend).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The table root inside the store.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The table URL (credentials removed).
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The backend kind.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// What tells this store apart from every other (scheme, endpoint,
    /// account, bucket): the store part of every cache key.
    pub fn store_id(&self) -> &StoreId {
        &self.store_id
    }

    /// Live I/O counters of this store.
    pub fn metrics(&self) -> &IoMetrics {
        &self.metrics
    }

    /// The cost model fed by this store's requests.
    pub fn cost_model(&self) -> &Arc<CostModel> {
        &self.cost
    }

    /// Direct reads of the table's files, when its store is the local file
    /// system dar built (not a store of the caller's).
    pub fn local_files(&self) -> Option<&LocalFiles> {
        self.local.as_ref()
    }

    /// The footer cache shared by readers of this table.
    pub fn metadata_cache(&self) -> &MetadataCache {
        &self.cache
    }

    /// The byte-range cache readers of this store read through (disabled
    /// unless one was set: [`TableStoreBuilder::with_range_cache`]).
    pub fn range_cache(&self) -> &RangeCache {
        &self.range_cache
    }

    /// This store with `cache` as its byte-range cache (a `memory://`
    /// store never uses a disk tier: its objects end with the process).
    pub fn with_range_cache(mut self, cache: RangeCache) -> Self {
        self.range_cache = if self.backend == Backend::Memory {
            cache.without_disk()
        } else {
            cache
        };
        self
    }

    /// Fetches `ranges` of the object at `path` (a deletion-vector file, a
    /// checkpoint part: any object whose ranges are known up front) as
    /// [`crate::fetch_ranges`] does, with this store's cost model and
    /// through its byte-range cache.
    pub async fn fetch_ranges(
        &self,
        path: &Path,
        ranges: &[std::ops::Range<u64>],
        class: crate::ObjectClass,
    ) -> Result<Vec<bytes::Bytes>> {
        crate::fetch::Fetcher::new(Arc::clone(&self.store), path.clone())
            .with_local(self.local.clone())
            .with_cache(Some(crate::fetch::CacheUse::new(
                self.range_cache.clone(),
                ObjectId::new(self.store_id.clone(), path.to_string()),
                self.metrics.clone(),
            )))
            .fetch_planned(ranges, &self.cost.params(), class)
            .await
    }

    /// `relative` (a `/`-separated path below the table root, as in Delta
    /// `add.path`, already URL-decoded) as a store path.
    pub fn child(&self, relative: &str) -> Path {
        relative
            .split('/')
            .filter(|s| !s.is_empty())
            .fold(self.root.clone(), |p, s| p.clone().join(s))
    }

    /// Primes the cost model with a bounded probe of one object (a few
    /// small ranged GETs and one larger one; see [`CostModel::probe`]).
    pub async fn probe(
        &self,
        path: &Path,
        size: u64,
        budget: crate::ProbeBudget,
    ) -> Result<Vec<crate::Observation>> {
        self.cost
            .probe(self.store.as_ref(), path, size, budget)
            .await
    }

    /// A Parquet reader for the object at `path` of known `size`, sharing
    /// this table's cache and cost model.
    pub fn parquet_reader(&self, path: Path, size: Option<u64>) -> crate::ParquetReader {
        crate::ParquetReader::new(Arc::clone(&self.store), path)
            .with_local_files(self.local.clone())
            .with_size(size)
            .with_store_id(self.store_id.clone())
            .with_cache(Some(self.cache.clone()))
            .with_cost_model(Arc::clone(&self.cost))
            .with_range_cache(Some(self.range_cache.clone()), self.metrics.clone())
            .with_whole_object_threshold(if self.backend.is_remote() {
                crate::reader::DEFAULT_WHOLE_OBJECT_THRESHOLD
            } else {
                0
            })
    }
}

/// Builder of a [`TableStore`].
pub struct TableStoreBuilder {
    uri: String,
    options: StorageOptions,
    env: Option<Vec<(String, String)>>,
    max_concurrency: Option<usize>,
    retry: RetryPolicy,
    cost: Option<CostParams>,
    metrics: IoMetrics,
    cache: MetadataCache,
    range_cache: RangeCache,
    store: Option<Arc<dyn ObjectStore>>,
    store_id: Option<StoreId>,
}

impl fmt::Debug for TableStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableStoreBuilder")
            .field("uri", &redact_uri(&self.uri))
            .field("options", &self.options)
            .field("env_vars", &self.env.as_ref().map(Vec::len))
            .field("max_concurrency", &self.max_concurrency)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl TableStoreBuilder {
    /// A builder for `uri` with defaults.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            options: StorageOptions::new(),
            env: None,
            max_concurrency: None,
            retry: RetryPolicy::default(),
            cost: None,
            metrics: IoMetrics::new(),
            cache: MetadataCache::default(),
            range_cache: RangeCache::default(),
            store: None,
            store_id: None,
        }
    }

    /// Storage options (credentials, endpoint, region, ...), applied over
    /// the environment.
    pub fn with_options(mut self, options: StorageOptions) -> Self {
        self.options = options;
        self
    }

    /// Uses these `(name, value)` pairs instead of the process environment
    /// (for tests and for embedders that manage configuration themselves).
    pub fn with_env(mut self, env: impl IntoIterator<Item = (String, String)>) -> Self {
        self.env = Some(env.into_iter().collect());
        self
    }

    /// Maximum concurrent requests (default 32 local, 256 remote: a
    /// selective scan over a slow store wants every file's pages in flight
    /// in one round; the planner assumes 64 lanes per file).
    pub fn with_max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = Some(n.max(1));
        self
    }

    /// The retry policy of cloud backends (the only retries dar makes; see
    /// [`RetryPolicy`]). A `connect_timeout` storage option overrides the
    /// policy's connect timeout.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Cost-model defaults (otherwise per backend).
    pub fn with_cost_params(mut self, params: CostParams) -> Self {
        self.cost = Some(params);
        self
    }

    /// Shares these metrics (e.g. one handle for several tables).
    pub fn with_metrics(mut self, metrics: IoMetrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// Shares this footer cache.
    pub fn with_metadata_cache(mut self, cache: MetadataCache) -> Self {
        self.cache = cache;
        self
    }

    /// Reads pages, footers and DV files through `cache` (default: none;
    /// see [`RangeCache`]).
    pub fn with_range_cache(mut self, cache: RangeCache) -> Self {
        self.range_cache = cache;
        self
    }

    /// Uses `store` as the backend instead of building one from the scheme
    /// (the URI still gives the root, URL and backend kind). Its identity
    /// is unique to this build unless [`Self::with_store_id`] names it: dar
    /// cannot tell which endpoint or account a store of the caller's talks to.
    pub fn with_store(mut self, store: Arc<dyn ObjectStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Names the store's identity (see [`StoreId`]): two stores with the
    /// same identity share cache entries, on disk across processes too, so
    /// it must tell apart every endpoint, account and bucket.
    pub fn with_store_id(mut self, id: StoreId) -> Self {
        self.store_id = Some(id);
        self
    }

    /// Parses the URI, builds and layers the store.
    pub fn build(self) -> Result<TableStore> {
        let location = parse_location(&self.uri)?;
        let local = (location.backend == Backend::Local && self.store.is_none())
            .then(|| LocalFiles::new(Arc::new(LocalFileSystem::new()), self.metrics.clone()));
        let (backend_store, built_id) = match self.store.clone() {
            Some(s) => (s, StoreId::unique()),
            None => self.backend_store(&location)?,
        };
        let store_id = self.store_id.clone().unwrap_or(built_id);
        // Endpoint URLs may carry user info or a query that object_store
        // quotes in its request errors: those errors are scrubbed.
        let secrets = self.endpoint_secrets();
        let backend_store: Arc<dyn ObjectStore> = if secrets.is_empty() {
            backend_store
        } else {
            Arc::new(RedactedStore::new(backend_store, secrets))
        };
        let remote = location.backend.is_remote();
        let limit = self
            .max_concurrency
            .unwrap_or(if remote { 256 } else { 32 });
        let params = self.cost.clone().unwrap_or_else(|| {
            if remote {
                CostParams::remote().with_max_concurrency(64)
            } else {
                CostParams::local()
            }
        });
        // The planner must not assume more lanes than the limit grants.
        let lanes = params.max_concurrency.min(limit);
        let params = params.with_max_concurrency(lanes);
        let cost = Arc::new(CostModel::new(params));
        let metered = MeteredStore::new(backend_store)
            .with_metrics(self.metrics.clone())
            .with_cost_model(Arc::clone(&cost));
        let store: Arc<dyn ObjectStore> =
            Arc::new(CheckedStore::new(LimitStore::new(metered, limit)));
        Ok(TableStore {
            store,
            root: location.root,
            url: location.url,
            backend: location.backend,
            metrics: self.metrics,
            cost,
            cache: self.cache,
            range_cache: RangeCache::default(),
            store_id,
            local,
        }
        .with_range_cache(self.range_cache))
    }

    #[cfg_attr(
        not(any(feature = "aws", feature = "azure", feature = "gcp")),
        expect(dead_code, reason = "only cloud backends read the environment")
    )]
    fn env_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        let all: Vec<(String, String)> = match &self.env {
            Some(e) => e.clone(),
            None => std::env::vars().collect(),
        };
        all.into_iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .collect()
    }

    /// What object_store may quote in its errors that must never be
    /// printed: the user info and queries of every endpoint URL in the
    /// options and the cloud environment variables, and the Azure SAS
    /// tokens (sent in every request URL).
    fn endpoint_secrets(&self) -> Vec<String> {
        let env = match &self.env {
            Some(e) => e.clone(),
            None => std::env::vars().collect(),
        };
        let cloud_env = env.into_iter().filter(|(k, _)| {
            ["AWS_", "AZURE_", "GOOGLE_"]
                .iter()
                .any(|p| k.starts_with(p))
        });
        self.options
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(cloud_env)
            .filter(|(k, _)| is_endpoint_key(k) || is_sas_key(k))
            .flat_map(|(k, v)| {
                if is_sas_key(&k) {
                    sas_secrets(&v)
                } else {
                    endpoint_secrets(&v)
                }
            })
            .collect()
    }

    /// The backend store for `loc` and its identity: the local file
    /// system is one store per machine; a new `memory://` store is its own;
    /// a cloud store is told apart by the configuration it was built with
    /// (see [`CloudBuilder::identity`]).
    fn backend_store(&self, loc: &Location) -> Result<(Arc<dyn ObjectStore>, StoreId)> {
        let redacted = loc.url.to_string();
        match loc.backend {
            Backend::Local => Ok((Arc::new(LocalFileSystem::new()), StoreId::new("file"))),
            Backend::Memory => Ok((Arc::new(InMemory::new()), StoreId::unique())),
            Backend::S3 => self.s3(loc, redacted),
            Backend::Azure => self.azure(loc, redacted),
            Backend::Gcs => self.gcs(loc, redacted),
        }
    }
}

mod cloud;
mod location;

use location::{Location, parse_location};

#[cfg(test)]
mod tests;
