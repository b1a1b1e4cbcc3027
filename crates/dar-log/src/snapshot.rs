//! [`Snapshot`]: the table at one version, and [`SnapshotBuilder`] to load it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use object_store::ObjectStore;
use object_store::path::Path;

use crate::actions::{CommitInfo, DomainMetadata, Metadata, Protocol, Txn};
use crate::checkpoint::CheckpointIo;
use crate::commit::first_commit_info;
use crate::error::{LogError, Result};
use crate::file_index::{FileIndex, StatsLoading};
use crate::listing::{
    KeptCommits, LogFile, LogSegment, find_segment, list_log, log_dir, read_log_file,
};
use crate::paths::TablePaths;
use crate::replay::{ReplayState, replay_onto, replay_segment};
use crate::schema::{ColumnMappingMode, StructType};
use crate::table_configuration::TableConfiguration;
use crate::time_travel::{self, KnownCommits};

/// When the typed file index is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileIndexMode {
    /// While loading: bad partition values or stats fail the load.
    #[default]
    Eager,
    /// At the first call of [`Snapshot::file_index`]; loading only replays the log.
    Lazy,
}

/// Which version to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Latest,
    Version(u64),
    Timestamp(i64),
}

/// Loads a [`Snapshot`]; consuming `with_*` setters.
#[derive(Debug, Clone)]
pub struct SnapshotBuilder {
    store: Arc<dyn ObjectStore>,
    root: Path,
    target: Target,
    mode: FileIndexMode,
    stats: StatsLoading,
    log_compaction: bool,
    url: Option<url::Url>,
    checkpoints: CheckpointIo,
}

impl SnapshotBuilder {
    /// The table's URI (its root), against which the log's paths are
    /// resolved (absolute-path references keep its scheme and authority;
    /// URIs of other stores are told apart from it). Without it the store
    /// is taken to be a local file system and the table root `file:///root/`.
    pub fn with_table_url(mut self, url: &url::Url) -> Self {
        self.url = Some(url.clone());
        self
    }

    /// Load version `version` (time travel by version).
    pub fn with_version(mut self, version: u64) -> Self {
        self.target = Target::Version(version);
        self
    }

    /// Load the newest version whose commit timestamp is at or before
    /// `timestamp_ms` (ms since the epoch).
    pub fn with_timestamp_ms(mut self, timestamp_ms: i64) -> Self {
        self.target = Target::Timestamp(timestamp_ms);
        self
    }

    /// Choose when the file index is built (default: eagerly).
    pub fn with_file_index(mut self, mode: FileIndexMode) -> Self {
        self.mode = mode;
        self
    }

    /// Choose when the column statistics of the file index are parsed
    /// (default: [`StatsLoading::OnDemand`], each column's when a query
    /// first asks for it).
    pub fn with_stats_loading(mut self, loading: StatsLoading) -> Self {
        self.checkpoints = self.checkpoints.with_stats_loading(loading.clone());
        self.stats = loading;
        self
    }

    /// Whether checkpoint parts, sidecars and their stats decode side by
    /// side on the threads of a multi-thread Tokio runtime (default: true).
    /// Either way the snapshot is the same.
    pub fn with_parallel_decode(mut self, parallel: bool) -> Self {
        self.checkpoints = self.checkpoints.with_parallel_decode(parallel);
        self
    }

    /// Whether replay may read log compaction files
    /// (`pad20(x).pad20(y).compacted.json`, protocol digest §1.6) instead of
    /// the commits they cover (default: true). The result is the same either
    /// way; compaction saves requests. The commit at the loaded version is
    /// always read when no checkpoint covers it, and commit file times are
    /// unchanged.
    pub fn with_log_compaction(mut self, enabled: bool) -> Self {
        self.log_compaction = enabled;
        self
    }

    /// Reads checkpoint footers through `cache` (for example the table
    /// store's [`dar_io::TableStore::metadata_cache`]), so later loads that
    /// share it parse each checkpoint footer once. Without it, a builder and
    /// its clones share a cache of their own.
    pub fn with_metadata_cache(mut self, cache: dar_io::MetadataCache) -> Self {
        self.checkpoints = self.checkpoints.with_metadata_cache(cache);
        self
    }

    /// Reads checkpoint parts and sidecars through `cache` (for example
    /// the table store's [`dar_io::TableStore::range_cache`], counted in
    /// its metrics).
    pub fn with_range_cache(
        mut self,
        cache: dar_io::RangeCache,
        metrics: dar_io::IoMetrics,
    ) -> Self {
        self.checkpoints = self.checkpoints.with_range_cache(cache, metrics);
        self
    }

    /// The identity of the table's store ([`dar_io::TableStore::store_id`]),
    /// the store part of the checkpoints' cache keys.
    pub fn with_store_id(mut self, store: dar_io::StoreId) -> Self {
        self.checkpoints = self.checkpoints.with_store_id(store);
        self
    }

    /// Reads of the table's files on local disk (the table store's
    /// [`dar_io::TableStore::local_files`]): the statistics of a local
    /// checkpoint are then read again from the file when a query needs
    /// them, not kept in memory (see [`CheckpointIo::with_local_files`]).
    pub fn with_local_files(mut self, local: Option<dar_io::LocalFiles>) -> Self {
        self.checkpoints = self.checkpoints.with_local_files(local);
        self
    }

    /// Plans the range reads of large checkpoints with `cost` (for example
    /// the table store's [`dar_io::TableStore::cost_model`]; default:
    /// dar-io's remote defaults).
    pub fn with_cost_model(mut self, cost: Arc<dar_io::CostModel>) -> Self {
        self.checkpoints = self.checkpoints.with_cost_model(cost);
        self
    }

    /// The protocol and metadata at the target version, whatever the
    /// protocol asks of readers: for reports of tables dar refuses (see
    /// [`crate::protocol::ProtocolReport`]). Only the log is replayed; no
    /// schema is parsed and no file index built.
    ///
    /// # Errors
    ///
    /// As [`SnapshotBuilder::build`], except that the protocol is not
    /// checked.
    pub async fn inspect(self) -> Result<TableHeader> {
        let (_, _, state, _) = self.replay().await?;
        Ok(TableHeader {
            version: state.version,
            protocol: state.protocol,
            metadata: state.metadata,
        })
    }

    /// Replay the log and build the snapshot.
    pub async fn build(self) -> Result<Snapshot> {
        let (paths, segment, state, found_time) = self.replay().await?;
        let config = TableConfiguration::try_new(
            state.protocol.clone(),
            state.metadata.clone(),
            state.version,
        )?;
        let commit_time = match found_time {
            // Its own in-commit timestamp (which time travel found by the
            // latest version's eras, where in-commit timestamps may have
            // been switched off since): the commit's, which replay read.
            Some(_) if config.uses_in_commit_timestamp() => {
                state.commit_info.as_ref().map(|c| c.in_commit_timestamp)
            }
            // A file time: time travel just computed it from the whole
            // series.
            Some(at) => Some(Some(at)),
            // Without a checkpoint the segment holds commits 0..=version
            // with their file times: known without another listing.
            None if segment.checkpoint.is_none() => Some(
                time_travel::snapshot_commit_timestamp(
                    &self.store,
                    &self.root,
                    &config,
                    state.commit_file.as_ref(),
                    state.commit_info.as_ref(),
                    KnownCommits::FromZero(&segment.commits),
                )
                .await?,
            ),
            // Otherwise it may need the log listed from version 0: left to
            // the first call of `commit_timestamp_ms`, so opening a table
            // never pays for it.
            None => None,
        };
        Snapshot::from_state(
            self.store,
            paths,
            state,
            config,
            self.mode,
            self.stats.clone(),
            commit_time,
        )
    }

    /// The table paths, the log segment at the target version, its
    /// replayed state and (for time travel by timestamp) the commit time
    /// found.
    async fn replay(&self) -> Result<(TablePaths, LogSegment, ReplayState, Option<i64>)> {
        let paths = match &self.url {
            Some(url) => TablePaths::new(url, &self.root),
            None => TablePaths::for_store_root(&self.root)?,
        };
        let (segment, state, found_time) = match self.target {
            Target::Timestamp(t) => {
                // Time travel listed the whole log and replayed the latest
                // version: build the segment from that listing, and reuse
                // that state when the latest version is the one found.
                let e = time_travel::entry_at_timestamp(&self.store, &self.checkpoints, &paths, t)
                    .await?;
                let segment = LogSegment::build(log_dir(&self.root), &e.files, Some(e.version))?;
                let state = if e.latest.version == e.version && self.log_compaction {
                    e.latest
                } else {
                    // The commits the latest replay read are not read again.
                    replay_segment(
                        &self.store,
                        &self.checkpoints,
                        &paths,
                        &segment,
                        self.log_compaction,
                        &e.latest.kept_commits,
                    )
                    .await?
                };
                (segment, state, Some(e.at_ms))
            }
            Target::Latest | Target::Version(_) => {
                let version = match self.target {
                    Target::Version(v) => Some(v),
                    _ => None,
                };
                let segment = find_segment(self.store.as_ref(), &self.root, version).await?;
                let state = replay_segment(
                    &self.store,
                    &self.checkpoints,
                    &paths,
                    &segment,
                    self.log_compaction,
                    &KeptCommits::default(),
                )
                .await?;
                (segment, state, None)
            }
        };
        Ok((paths, segment, state, found_time))
    }
}

/// What [`SnapshotBuilder::inspect`] returns: the version, protocol and
/// metadata of a table, read whether or not dar reads the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableHeader {
    /// The snapshot version.
    pub version: u64,
    /// The protocol in effect.
    pub protocol: Protocol,
    /// The metadata in effect.
    pub metadata: Metadata,
}

/// A Delta table at one version: protocol, metadata, schema, table
/// properties, txns, domains and the active files.
#[derive(Debug)]
pub struct Snapshot {
    store: Arc<dyn ObjectStore>,
    root: Path,
    paths: TablePaths,
    state: Arc<ReplayState>,
    /// The protocol and metadata of this version and what follows from them.
    config: TableConfiguration,
    mode: FileIndexMode,
    stats: StatsLoading,
    file_index: OnceLock<Arc<FileIndex>>,
    /// The adjusted commit timestamp (see [`Snapshot::commit_timestamp_ms`]),
    /// filled while loading where it was free, else at the first call.
    commit_time_ms: tokio::sync::OnceCell<Option<i64>>,
    /// The `commitInfo` of the commit at this version: filled by replay when
    /// it read that commit, else read leniently at the first call of
    /// [`Snapshot::commit_info`] (a checkpoint at this version covers it).
    commit_info: tokio::sync::OnceCell<Option<CommitInfo>>,
}

impl Snapshot {
    /// A builder for the table at `root` in `store` (latest version, eager index).
    pub fn builder(store: Arc<dyn ObjectStore>, root: Path) -> SnapshotBuilder {
        SnapshotBuilder {
            store,
            root,
            target: Target::Latest,
            mode: FileIndexMode::default(),
            stats: StatsLoading::default(),
            log_compaction: true,
            url: None,
            checkpoints: CheckpointIo::new(),
        }
    }

    /// Load the latest version with an eagerly built file index.
    pub async fn load(store: Arc<dyn ObjectStore>, root: Path) -> Result<Self> {
        Self::builder(store, root).build().await
    }

    fn from_state(
        store: Arc<dyn ObjectStore>,
        paths: TablePaths,
        state: ReplayState,
        config: TableConfiguration,
        mode: FileIndexMode,
        stats: StatsLoading,
        commit_time_ms: Option<Option<i64>>,
    ) -> Result<Self> {
        let commit_info = match &state.commit_info {
            Some(c) => tokio::sync::OnceCell::new_with(Some(Some(c.clone()))),
            None if state.commit_file.is_none() => tokio::sync::OnceCell::new_with(Some(None)),
            None => tokio::sync::OnceCell::new(),
        };
        let mut state = state;
        let file_index = OnceLock::new();
        if mode == FileIndexMode::Eager {
            let index = FileIndex::build_sharing(
                &paths,
                config.schema(),
                config.column_mapping_mode(),
                &state.metadata,
                &mut state.adds,
                stats.clone(),
            )?;
            let _ = file_index.set(Arc::new(index));
        }
        let snap = Self {
            store,
            root: paths.root().clone(),
            paths,
            commit_info,
            state: Arc::new(state),
            config,
            mode,
            stats,
            file_index,
            commit_time_ms: tokio::sync::OnceCell::new_with(commit_time_ms),
        };
        Ok(snap)
    }

    /// The version.
    pub fn version(&self) -> u64 {
        self.state.version
    }

    /// The protocol and metadata of this version and what follows from
    /// them (schema, column mapping, change feed, in-commit timestamps).
    pub fn table_configuration(&self) -> &TableConfiguration {
        &self.config
    }

    /// The commit files the replay of this snapshot read, when they fit
    /// [`crate::listing::KEPT_COMMIT_BYTES`]: a change feed on the table
    /// takes them from here instead of reading them again.
    pub(crate) fn kept_commits(&self) -> &KeptCommits {
        &self.state.kept_commits
    }

    /// The version of the checkpoint this snapshot was rebuilt from
    /// (`None`: from version 0).
    pub(crate) fn checkpoint_version(&self) -> Option<u64> {
        self.state.checkpoint_version
    }

    /// The log files this snapshot was rebuilt from, as a listing from its
    /// checkpoint (`None` for a long log without checkpoints).
    pub(crate) fn listing(&self) -> Option<&Arc<[LogFile]>> {
        self.state.listing.as_ref()
    }

    /// The protocol in effect.
    pub fn protocol(&self) -> &Protocol {
        self.config.protocol()
    }

    /// What dar reads of the protocol, feature by feature (for a loaded
    /// snapshot the verdict is always that dar reads it).
    pub fn protocol_report(&self) -> crate::protocol::ProtocolReport {
        self.config.protocol_report()
    }

    /// The metadata in effect.
    pub fn metadata(&self) -> &Metadata {
        self.config.metadata()
    }

    /// The table schema (logical names; physical names and ids in field
    /// metadata). For a log without `schemaString` ([`Snapshot::has_schema`]
    /// is false), only the partition columns, as strings.
    pub fn schema(&self) -> &StructType {
        self.config.schema()
    }

    /// Whether the log's `metaData` holds a schema (`schemaString`). Without
    /// one the files can be listed but no row can be read.
    pub fn has_schema(&self) -> bool {
        self.config.has_schema()
    }

    /// The table schema in Arrow form.
    pub fn arrow_schema(&self) -> Result<arrow_schema::Schema> {
        self.config.arrow_schema()
    }

    /// The column-mapping mode in effect.
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.config.column_mapping_mode()
    }

    /// Logical partition column names, in order.
    pub fn partition_columns(&self) -> &[String] {
        &self.config.metadata().partition_columns
    }

    /// Table properties (`metaData.configuration`).
    pub fn table_properties(&self) -> &HashMap<String, String> {
        &self.config.metadata().configuration
    }

    /// Newest `txn` per application id.
    pub fn txns(&self) -> &HashMap<String, Txn> {
        &self.state.txns
    }

    /// The newest transaction version of `app_id`.
    pub fn app_version(&self, app_id: &str) -> Option<i64> {
        self.state.txns.get(app_id).map(|t| t.version)
    }

    /// Live domain metadata, by domain name.
    pub fn domains(&self) -> &HashMap<String, DomainMetadata> {
        &self.state.domains
    }

    /// `commitInfo` of the commit at this version. `None` when that commit
    /// file was cleaned up (the version was rebuilt from a checkpoint), or
    /// when a checkpoint at this version covers it and its `commitInfo`
    /// cannot be read: loading never reads a covered commit, so the first
    /// call reads it here, leniently (only its `commitInfo`; a missing,
    /// unreadable or malformed one is `None`, not an error).
    pub async fn commit_info(&self) -> Option<&CommitInfo> {
        self.commit_info
            .get_or_init(|| async {
                let f = self.state.commit_file.as_ref()?;
                let bytes = read_log_file(self.store.as_ref(), f).await.ok()?;
                first_commit_info(f.location.as_ref(), &bytes)
            })
            .await
            .as_ref()
    }

    /// The commit timestamp of this version (ms since the epoch), its own
    /// (protocol digest §10): the in-commit timestamp when in-commit
    /// timestamps are on at this version, else the commit file's
    /// modification time monotonized against earlier commits (a time at or
    /// before its predecessor's becomes the predecessor's + 1 ms). Time
    /// travel assigns the same timestamp, so
    /// `with_timestamp_ms(s.commit_timestamp_ms())` loads this version
    /// again, except where a later version switched in-commit timestamps
    /// off or on (time travel searches by the latest version's setting;
    /// see [`crate::time_travel`]).
    ///
    /// Free when the snapshot was loaded by timestamp, uses ICT, was rebuilt
    /// without a checkpoint (the listing already holds every earlier
    /// commit's time) or was refreshed from a snapshot whose time was known.
    /// Otherwise the first call lists the log from version 0 (any earlier
    /// commit can shift the sequence); the result is kept. Loading never pays
    /// for this: on object storage a long log takes many list requests.
    /// `None` when the commit file at this version was cleaned up (the
    /// version was rebuilt from a checkpoint) or ICT is active but the commit
    /// lacks `inCommitTimestamp`.
    pub async fn commit_timestamp_ms(&self) -> Result<Option<i64>> {
        self.commit_time_ms
            .get_or_try_init(|| async {
                let info = if self.config.uses_in_commit_timestamp() {
                    self.commit_info().await
                } else {
                    None
                };
                time_travel::snapshot_commit_timestamp(
                    &self.store,
                    &self.root,
                    &self.config,
                    self.state.commit_file.as_ref(),
                    info,
                    KnownCommits::Nothing,
                )
                .await
            })
            .await
            .copied()
    }

    /// Number of active files (cheap: no typing needed).
    pub fn num_files(&self) -> usize {
        self.state.adds.iter().map(|a| a.len()).sum()
    }

    /// The store the snapshot reads from.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The table root inside the store.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How the log's paths resolve against the table root.
    pub fn paths(&self) -> &TablePaths {
        &self.paths
    }

    /// The columnar index of active files, built at load ([`FileIndexMode::Eager`])
    /// or on this first call ([`FileIndexMode::Lazy`]).
    pub fn file_index(&self) -> Result<&Arc<FileIndex>> {
        if let Some(fi) = self.file_index.get() {
            return Ok(fi);
        }
        let built = Arc::new(FileIndex::build(
            &self.paths,
            self.config.schema(),
            self.config.column_mapping_mode(),
            &self.state.metadata,
            &self.state.adds,
            self.stats.clone(),
        )?);
        Ok(self.file_index.get_or_init(|| built))
    }

    /// A snapshot of the newest version, replaying only the commits after
    /// this one onto this snapshot's state. Returns an equal snapshot when
    /// nothing is new.
    pub async fn refresh(&self) -> Result<Self> {
        let dir = log_dir(&self.root);
        let from = self.state.version + 1;
        let files = list_log(self.store.as_ref(), &dir, from).await?;
        let mut commits = Vec::new();
        for f in files
            .into_iter()
            .filter(|f| f.kind == crate::listing::LogFileKind::Commit)
        {
            let expected = from + commits.len() as u64;
            if f.version != expected {
                return Err(LogError::VersionGap {
                    log_dir: dir.to_string(),
                    missing: expected,
                });
            }
            commits.push(f);
        }
        let state = replay_onto(
            &self.store,
            &self.paths,
            dir.as_ref(),
            &self.state,
            &commits,
        )
        .await?;
        let config = TableConfiguration::try_new(
            state.protocol.clone(),
            state.metadata.clone(),
            state.version,
        )?;
        let known = self.commit_time_ms.get().copied();
        let commit_time = if commits.is_empty() {
            known
        } else {
            // Continue the file-time sequence from this snapshot's adjusted
            // time when that time is known and file based; else leave it to
            // the first call of `commit_timestamp_ms`.
            match known {
                Some(Some(t)) if !self.config.uses_in_commit_timestamp() => Some(
                    time_travel::snapshot_commit_timestamp(
                        &self.store,
                        &self.root,
                        &config,
                        state.commit_file.as_ref(),
                        state.commit_info.as_ref(),
                        KnownCommits::After(t, &commits),
                    )
                    .await?,
                ),
                _ => None,
            }
        };
        Self::from_state(
            Arc::clone(&self.store),
            self.paths.clone(),
            state,
            config,
            self.mode,
            self.stats.clone(),
            commit_time,
        )
    }
}
