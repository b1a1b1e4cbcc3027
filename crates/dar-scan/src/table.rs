//! [`Table`]: a loaded snapshot and the store it came from.

use std::sync::Arc;

use arrow_schema::SchemaRef;
use dar_dv::DvCache;
use dar_io::{StorageOptions, TableStore, redact_uri};
use dar_log::{FileIndexMode, Snapshot, SnapshotBuilder, StatsLoading, TableHeader};

use crate::errors::error::{Result, ScanError};
use crate::execution::runtime::DEFAULT_DV_CACHE_BYTES;
use crate::schema::relax_schema;

/// Which version of the table to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VersionSpec {
    /// The newest version.
    #[default]
    Latest,
    /// A version number (time travel).
    Version(u64),
    /// The newest version committed at or before this time (ms since the
    /// epoch).
    TimestampMs(i64),
}

/// How to open a table; consuming `with_*` setters.
#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    storage: StorageOptions,
    version: VersionSpec,
    lazy_file_index: bool,
    stats: StatsLoading,
    dv_cache_bytes: Option<usize>,
    other_stores: Vec<(String, TableStore)>,
    confine_to_root: bool,
    data_cache_bytes: Option<usize>,
    cache_dir: Option<std::path::PathBuf>,
    cache_dir_bytes: Option<u64>,
}

impl From<StorageOptions> for TableOptions {
    /// Defaults with these storage options.
    fn from(storage: StorageOptions) -> Self {
        Self::new().with_storage_options(storage)
    }
}

/// Default memory budget of a table's byte-range cache on a remote store
/// ([`TableOptions::with_data_cache_bytes`]).
pub const DEFAULT_DATA_CACHE_BYTES: usize = 256 * 1024 * 1024;

/// Default budget of an on-disk cache directory
/// ([`TableOptions::with_cache_dir_bytes`]).
pub const DEFAULT_CACHE_DIR_BYTES: u64 = dar_io::DEFAULT_DISK_BUDGET;

impl TableOptions {
    /// The stores configured for other origins (see [`Self::with_store_for`]).
    pub(crate) fn other_stores(&self) -> &[(String, TableStore)] {
        &self.other_stores
    }

    /// Whether data and DV paths must lie inside the table root.
    pub(crate) fn confined_to_root(&self) -> bool {
        self.confine_to_root
    }

    /// The storage options (see [`Self::with_storage_options`]).
    pub fn storage_options(&self) -> &StorageOptions {
        &self.storage
    }

    /// Which version to load (see [`Self::with_version`],
    /// [`Self::with_timestamp_ms`]).
    pub fn version_spec(&self) -> VersionSpec {
        self.version
    }

    /// Defaults: latest version, eager file index, no storage options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Storage options (credentials, endpoints) for the object store.
    pub fn with_storage_options(mut self, storage: StorageOptions) -> Self {
        self.storage = storage;
        self
    }

    /// Load version `version`.
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = VersionSpec::Version(version);
        self
    }

    /// Load the newest version committed at or before `timestamp_ms`.
    pub fn with_timestamp_ms(mut self, timestamp_ms: i64) -> Self {
        self.version = VersionSpec::TimestampMs(timestamp_ms);
        self
    }

    /// Build the file index at the first scan rather than at open (opening
    /// is then only log replay).
    pub fn with_lazy_file_index(mut self, lazy: bool) -> Self {
        self.lazy_file_index = lazy;
        self
    }

    /// When the file statistics of each column are parsed (default:
    /// [`StatsLoading::OnDemand`], a column's when a predicate first needs
    /// it; opening and counting parse none). Results are the same.
    pub fn with_stats_loading(mut self, loading: StatsLoading) -> Self {
        self.stats = loading;
        self
    }

    /// Parses, while the table opens, the file statistics of the columns
    /// `predicate` names (SQL, as [`crate::ScanBuilder::with_predicate_sql`]
    /// takes it): for the query known before the table opens, such as a
    /// one-shot scan's. From a checkpoint they are then decoded in the pass
    /// that decodes its counts, not in a second pass at the first plan
    /// ([`StatsLoading::Columns`]); other columns' stay on demand. A
    /// predicate that does not parse selects no column (its scan reports
    /// the error).
    pub fn with_stats_for_predicate(self, predicate: &str) -> Self {
        let columns = dar_prune::parse_expr(predicate)
            .map(|e| {
                e.columns()
                    .into_iter()
                    .map(|c| c.parts().to_vec())
                    .collect()
            })
            .unwrap_or_default();
        self.with_stats_loading(StatsLoading::Columns(columns))
    }

    /// A store for the data files that the log places on another store
    /// than the table's (absolute URIs such as `s3://other-bucket/k`, as
    /// shallow clones write): `origin` is that store's `scheme://authority`
    /// (`s3://other-bucket`). Without one, such a file is an error naming
    /// it; dar never reads it from the table's own store.
    pub fn with_store_for(mut self, origin: impl Into<String>, store: TableStore) -> Self {
        self.other_stores.push((origin.into(), store));
        self
    }

    /// Refuse every data or DV file outside the table root (absolute paths
    /// elsewhere on the table's store, or on other stores), for services that
    /// read tables they do not trust. Sidecars always lie in the log's
    /// `_sidecars` folder. Default: off (such paths are legal Delta).
    pub fn with_paths_confined_to_root(mut self, confine: bool) -> Self {
        self.confine_to_root = confine;
        self
    }

    /// Memory budget of the table's cache of fetched byte ranges (page
    /// data and whole small files), shared by all its scans, so that a
    /// repeated query fetches none of the bytes an earlier one fetched
    /// (see [`dar_io::RangeCache`]; 0 turns it off). Default:
    /// [`DEFAULT_DATA_CACHE_BYTES`] on object storage, off on local disk
    /// (the operating system's page cache serves repeated reads there).
    pub fn with_data_cache_bytes(mut self, bytes: usize) -> Self {
        self.data_cache_bytes = Some(bytes);
        self
    }

    /// Keeps fetched footers, page indexes, pages, DVs and checkpoint parts
    /// in files under `dir` as well, so that later processes reading the
    /// same table skip those requests (off by default). Files are checked
    /// on every read; a damaged one is fetched again.
    pub fn with_cache_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Budget of the cache directory, for every process that shares it
    /// (default: the folder's own, [`DEFAULT_CACHE_DIR_BYTES`] for a new
    /// one); the least recently used entries go first.
    pub fn with_cache_dir_bytes(mut self, bytes: u64) -> Self {
        self.cache_dir_bytes = Some(bytes);
        self
    }

    /// The byte-range cache these options ask for on `backend`.
    fn range_cache(&self, backend: dar_io::Backend) -> dar_io::Result<dar_io::RangeCache> {
        let memory = self.data_cache_bytes.unwrap_or(if backend.is_remote() {
            DEFAULT_DATA_CACHE_BYTES
        } else {
            0
        });
        let cache = dar_io::RangeCache::new(memory);
        match &self.cache_dir {
            Some(dir) => cache.with_disk(dir, self.cache_dir_bytes),
            None => Ok(cache),
        }
    }

    /// Byte budget of the deletion-vector cache (default 64 MiB).
    pub fn with_dv_cache_bytes(mut self, bytes: usize) -> Self {
        self.dv_cache_bytes = Some(bytes);
        self
    }
}

/// A Delta table at one version: its store (with I/O metrics, footer
/// cache and byte-range cache), its snapshot, and a deletion-vector cache
/// shared by its scans.
/// Cheap to clone.
#[derive(Debug, Clone)]
pub struct Table {
    uri: String,
    store: TableStore,
    snapshot: Arc<Snapshot>,
    dv_cache: Arc<DvCache>,
    schema: SchemaRef,
    /// The schema as the Delta log declares it (nullability kept).
    declared: SchemaRef,
    options: TableOptions,
}

impl Table {
    /// Opens the newest version of the table at `uri` (a path, `file://`,
    /// `s3://`, `memory://`, ...).
    ///
    /// # Errors
    ///
    /// [`ScanError::Open`] when the URI does not make a store,
    /// [`ScanError::Log`] when the Delta log cannot be read or replayed
    /// (missing, corrupt, a version outside the history, or a reader
    /// feature dar cannot read). URIs in errors are redacted.
    pub async fn open(uri: &str) -> Result<Self> {
        Self::open_with(uri, TableOptions::new()).await
    }

    /// Opens the table at `uri` with `options`.
    ///
    /// # Errors
    ///
    /// As [`Table::open`].
    pub async fn open_with(uri: &str, options: TableOptions) -> Result<Self> {
        let store =
            TableStore::open(uri, options.storage.clone()).map_err(|source| ScanError::Open {
                uri: redact_uri(uri),
                source: Box::new(source),
            })?;
        Self::from_store(store, options).await
    }

    /// The version, protocol and metadata of the table at `uri` as
    /// `options` select it, read whether or not dar reads the table (see
    /// [`dar_log::SnapshotBuilder::inspect`]): what `dar info` reports of
    /// a table that [`Table::open_with`] refuses, with
    /// [`dar_log::ProtocolReport`] saying why.
    ///
    /// # Errors
    ///
    /// As [`Table::open_with`], except that no reader feature is refused.
    pub async fn inspect_with(uri: &str, options: &TableOptions) -> Result<TableHeader> {
        let store =
            TableStore::open(uri, options.storage.clone()).map_err(|source| ScanError::Open {
                uri: redact_uri(uri),
                source: Box::new(source),
            })?;
        let url = store.url().to_string();
        Self::snapshot_builder(&store, options)
            .inspect()
            .await
            .map_err(|source| ScanError::Log {
                uri: url,
                source: Box::new(source),
            })
    }

    /// The snapshot builder of `store` at the version `options` select.
    fn snapshot_builder(store: &TableStore, options: &TableOptions) -> SnapshotBuilder {
        let builder = Snapshot::builder(Arc::clone(store.store()), store.root().clone())
            .with_table_url(store.url())
            // Checkpoints through the table store's footer cache and cost
            // model, like the data files.
            .with_metadata_cache(store.metadata_cache().clone())
            .with_cost_model(Arc::clone(store.cost_model()))
            .with_local_files(store.local_files().cloned())
            .with_store_id(store.store_id().clone())
            .with_range_cache(store.range_cache().clone(), store.metrics().clone())
            .with_file_index(if options.lazy_file_index {
                FileIndexMode::Lazy
            } else {
                FileIndexMode::Eager
            })
            .with_stats_loading(options.stats.clone());
        match options.version {
            VersionSpec::Latest => builder,
            VersionSpec::Version(v) => builder.with_version(v),
            VersionSpec::TimestampMs(t) => builder.with_timestamp_ms(t),
        }
    }

    /// Opens the table of an already built store (for custom stores and
    /// tests). A store without a byte-range cache gets the one `options`
    /// ask for; a store built with one keeps it.
    ///
    /// # Errors
    ///
    /// [`ScanError::Log`], as [`Table::open`]; [`ScanError::Open`] when
    /// the cache directory cannot be created.
    pub async fn from_store(store: TableStore, options: TableOptions) -> Result<Self> {
        let uri = store.url().to_string();
        let open_error = |source| ScanError::Open {
            uri: uri.clone(),
            source: Box::new(source),
        };
        let store = if store.range_cache().is_enabled() {
            store
        } else {
            if let Some(dir) = &options.cache_dir {
                refuse_cache_inside(&store, dir).map_err(open_error)?;
            }
            let cache = options.range_cache(store.backend()).map_err(open_error)?;
            store.with_range_cache(cache)
        };
        if let Some(dir) = store.range_cache().disk_dir() {
            refuse_cache_inside(&store, dir).map_err(open_error)?;
        }
        let snapshot = Self::snapshot_builder(&store, &options)
            .build()
            .await
            .map_err(|source| ScanError::Log {
                uri: uri.clone(),
                source: Box::new(source),
            })?;
        let dv_cache = Arc::new(DvCache::new(
            options.dv_cache_bytes.unwrap_or(DEFAULT_DV_CACHE_BYTES),
        ));
        Self::assemble(uri, store, snapshot, dv_cache, options)
    }

    fn assemble(
        uri: String,
        store: TableStore,
        snapshot: Snapshot,
        dv_cache: Arc<DvCache>,
        options: TableOptions,
    ) -> Result<Self> {
        let schema = snapshot.arrow_schema().map_err(|source| ScanError::Log {
            uri: uri.clone(),
            source: Box::new(source),
        })?;
        Ok(Self {
            uri,
            store,
            snapshot: Arc::new(snapshot),
            dv_cache,
            schema: Arc::new(relax_schema(&schema)),
            declared: Arc::new(schema),
            options,
        })
    }

    /// Moves to the newest version, replaying only the new commits (a
    /// checkpoint written since is not read). When log cleanup removed
    /// commits this version needs, the newest version is loaded from its
    /// checkpoint instead. The store, footer cache, byte-range cache and DV
    /// cache are kept.
    ///
    /// # Errors
    ///
    /// [`ScanError::Log`] when the new commits cannot be read or replayed;
    /// the table then stays at its version.
    pub async fn refresh(&mut self) -> Result<()> {
        let log_error = |source| ScanError::Log {
            uri: self.uri.clone(),
            source: Box::new(source),
        };
        let snapshot = match self.snapshot.refresh().await {
            Ok(snapshot) => snapshot,
            // The commits after this version are gone: the log was cleaned
            // up past it. A load from the newest checkpoint still reads the
            // table (and says so, naming the version, if nothing covers
            // the gap).
            Err(dar_log::LogError::VersionGap { .. }) => {
                let latest = TableOptions {
                    version: VersionSpec::Latest,
                    ..self.options.clone()
                };
                Self::snapshot_builder(&self.store, &latest)
                    .build()
                    .await
                    .map_err(log_error)?
            }
            Err(e) => return Err(log_error(e)),
        };
        *self = Self::assemble(
            self.uri.clone(),
            self.store.clone(),
            snapshot,
            Arc::clone(&self.dv_cache),
            self.options.clone(),
        )?;
        Ok(())
    }

    /// The options the table was opened with.
    pub(crate) fn options(&self) -> &TableOptions {
        &self.options
    }

    /// The loaded version.
    pub fn version(&self) -> u64 {
        self.snapshot.version()
    }

    /// The logical Arrow schema of the table (every field nullable; in
    /// `name`/`id` column-mapping mode fields carry their physical name and
    /// id as metadata).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The snapshot.
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// The store (I/O metrics, footer cache, cost model).
    pub fn store(&self) -> &TableStore {
        &self.store
    }

    /// The deletion-vector cache shared by this table's scans.
    pub fn dv_cache(&self) -> &Arc<DvCache> {
        &self.dv_cache
    }

    /// The table URI (credentials removed).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    pub(crate) fn log_error(&self, source: dar_log::LogError) -> ScanError {
        ScanError::Log {
            uri: self.uri.clone(),
            source: Box::new(source),
        }
    }

    /// The table schema as the Delta log declares it: like
    /// [`Table::schema`], but with the declared nullability, which scans
    /// enforce (a non-null column that a file lacks or holds nulls in is an
    /// error).
    pub fn declared_schema(&self) -> &SchemaRef {
        &self.declared
    }
}

/// Refuses a cache folder inside the local table `store` reads (or the
/// table inside the folder's namespace): the cache would write into the
/// table, and a table's files are never the cache's to trim.
fn refuse_cache_inside(store: &TableStore, dir: &std::path::Path) -> dar_io::Result<()> {
    let Ok(root) = store.url().to_file_path() else {
        return Ok(());
    };
    let (Some(root), Some(cache)) = (resolved(&root), resolved(dir)) else {
        return Ok(());
    };
    let namespace = cache.join(dar_io::RangeCache::NAMESPACE);
    if cache.starts_with(&root) || root.starts_with(&namespace) {
        return Err(dar_io::Error::CacheDirRefused {
            path: dir.display().to_string(),
            reason: format!(
                "it is inside the table being read ('{}'); keep the cache somewhere else",
                root.display()
            ),
        });
    }
    Ok(())
}

/// `path` made absolute with links resolved as far as it exists (a cache
/// folder may not exist yet).
fn resolved(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let abs = std::path::absolute(path).ok()?;
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return Some(rest.iter().rev().fold(real, |p, c| p.join(c)));
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    }
}
