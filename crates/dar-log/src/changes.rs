//! The change data feed (protocol digest §12): which rows changed in each
//! commit of a version range, as typed per-file values.
//!
//! ```text
//! list _delta_log from 0 ─► resolve the range (versions, or timestamps:
//!   │                        start → first commit at or after, end → last
//!   │                        commit at or before; end defaults to latest)
//!   ├─ state at end (the open table's snapshot when it is the latest,
//!   │  else replayed): its protocol readable; CDF on and the schema
//!   │  readable, which stands for the start's while no commit of the range
//!   │  changes the metadata or protocol
//!   ▼
//! commits start..=end, read concurrently (64 MiB, 8-64 files ahead), each
//!   parsed once and dropped: ─► CommitChanges { version, timestamp,
//!   files (a FileIndex typed against the end schema), per file: source
//!   (cdc │ insert │ delete) and the paired DV of a replaced DV }
//!   └─ a commit after the start changed the metadata or protocol (or the
//!      end's failed the start's checks): the state at start replayed and
//!      checked, last
//! ```
//!
//! The rules, per commit:
//! - a commit with `cdc` actions yields the rows of its `cdc` files (which
//!   store `_change_type`) and nothing of its adds and removes;
//! - otherwise every `add` with `dataChange` yields inserts (the rows its
//!   DV keeps) and every `remove` with `dataChange` deletes (the rows its
//!   DV kept);
//! - an `add` and a `remove` of one path in one commit replace that file's
//!   DV: rows the new DV deletes and the old did not are deletes, rows the
//!   old DV deleted and the new does not are inserts; never the whole file;
//! - a `metaData` in the range must keep the feed on and a schema the end
//!   schema can read; a `protocol` must stay readable.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::ObjectStore;

use crate::actions::{Metadata, Protocol};
use crate::add_columns::{AddColumnsBuilder, AddRow};
use crate::checkpoint::CheckpointIo;
use crate::commit::{Action, DvLine, PartitionEntries, commit_info, parse_actions};
use crate::error::{LogError, Result};
use crate::file_index::FileIndex;
use crate::listing::{LogFile, LogFileKind, LogSegment, list_log, log_dir, read_log_file};
use crate::paths::TablePaths;
use crate::protocol::check_protocol;
use crate::replay::{ReplayState, commit_readahead, replay_segment};
use crate::schema::{
    COLUMN_MAPPING_MODE_KEY, ColumnMappingMode, DataType, StructField, StructType,
    is_allowed_widening,
};
use crate::time_travel::{
    earliest_version, file_time_series, ict_active_at, ict_enablement, in_commit_timestamp,
};

/// Table property that turns the change data feed on.
pub const ENABLE_CDF_KEY: &str = "delta.enableChangeDataFeed";

/// The columns a change data feed adds to the table's (names the table's
/// own columns may not take).
pub const CHANGE_COLUMNS: [&str; 3] = ["_change_type", "_commit_version", "_commit_timestamp"];

/// How many commit files are fetched ahead of the one being parsed by
/// [`ChangeFeed::commits`].
const COMMIT_READAHEAD: usize = 8;

/// One end of a change range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeBound {
    /// A version.
    Version(u64),
    /// A commit timestamp, ms since the epoch: as a start, the first commit
    /// at or after it; as an end, the last commit at or before it.
    TimestampMs(i64),
}

/// Where the rows of one change file come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeSource {
    /// A `cdc` file: its rows, with the `_change_type` the file stores.
    Cdc,
    /// Rows inserted (an `add`, or rows a replaced DV no longer deletes).
    Insert,
    /// Rows deleted (a `remove`, or rows a replaced DV newly deletes).
    Delete,
}

impl ChangeSource {
    /// The `_change_type` of the rows, when the source decides it (`None`
    /// for `cdc` files, whose rows carry their own).
    pub fn change_type(self) -> Option<&'static str> {
        match self {
            Self::Cdc => None,
            Self::Insert => Some("insert"),
            Self::Delete => Some("delete"),
        }
    }
}

/// The change files of one commit: a file index (typed against the end
/// version's schema) with, per file, where its rows come from.
#[derive(Debug)]
pub struct CommitChanges {
    /// The commit version.
    pub version: u64,
    /// Its commit timestamp, ms since the epoch: the in-commit timestamp
    /// when in-commit timestamps are on for it, else its file's
    /// modification time (monotonized, as time travel assigns it).
    pub timestamp_ms: i64,
    /// One row per change file, in the commit's action order.
    pub files: FileIndex,
    /// Per file: where its rows come from.
    pub sources: Vec<ChangeSource>,
    /// Per file: for one side of a replaced DV, the other side's DV: only
    /// the rows that DV deletes (and the file's own DV does not) change.
    pub paired_dv: Vec<Option<dar_dv::DvDescriptor>>,
    /// Per file: whether the log gave its size (a `remove` may not).
    pub has_size: Vec<bool>,
}

/// A resolved change range of a table, ready to stream its commits.
#[derive(Debug, Clone)]
pub struct ChangeFeed {
    store: Arc<dyn ObjectStore>,
    paths: TablePaths,
    start: u64,
    end: u64,
    /// Commit files `start..=end`, ascending, one per version.
    commits: Vec<LogFile>,
    /// The whole listing, to replay the state at the start when needed.
    listing: Arc<Vec<LogFile>>,
    /// How checkpoints are read (for that replay).
    io: CheckpointIo,
    /// Whether the end's state passed the start's checks: then, unless a
    /// commit after the start changes the metadata or protocol, the start
    /// state is the end's and is not replayed.
    end_passes_start_checks: bool,
    /// Monotonized file times of `commits` (unused where ICT applies).
    file_times: Vec<i64>,
    end_state: Arc<VersionState>,
    end_schema: Arc<StructType>,
    mapping: ColumnMappingMode,
}

/// What the feed needs of the table at one version: its protocol and
/// metadata (never its files).
#[derive(Debug, Clone)]
struct VersionState {
    version: u64,
    protocol: Protocol,
    metadata: Metadata,
}

impl From<ReplayState> for VersionState {
    fn from(s: ReplayState) -> Self {
        Self {
            version: s.version,
            protocol: s.protocol,
            metadata: s.metadata,
        }
    }
}

/// Whether `metadata` turns the feed on.
fn cdf_enabled(metadata: &Metadata) -> bool {
    metadata
        .configuration
        .get(ENABLE_CDF_KEY)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn mapping_of(protocol: &Protocol, metadata: &Metadata) -> Result<ColumnMappingMode> {
    let supports = protocol.min_reader_version == 2
        || (protocol.min_reader_version == 3 && protocol.has_reader_feature("columnMapping"));
    ColumnMappingMode::from_property(
        metadata
            .configuration
            .get(COLUMN_MAPPING_MODE_KEY)
            .map(String::as_str),
        supports,
    )
}

fn schema_of(metadata: &Metadata, version: u64) -> Result<StructType> {
    match &metadata.schema_string {
        Some(text) => StructType::from_json(text),
        None => Err(LogError::MissingSchema { version }),
    }
}

/// The field of `fields` that holds `field`'s data: by field id in id
/// mode, else by physical name in name mode, else by logical name.
fn counterpart<'a>(
    fields: &'a [StructField],
    field: &StructField,
    mode: ColumnMappingMode,
) -> Option<&'a StructField> {
    if mode == ColumnMappingMode::Id
        && let Some(id) = field.column_mapping_id()
    {
        return fields.iter().find(|f| f.column_mapping_id() == Some(id));
    }
    if mode.is_active()
        && let Some(p) = field.column_mapping_physical_name()
    {
        return fields
            .iter()
            .find(|f| f.column_mapping_physical_name() == Some(p));
    }
    fields.iter().find(|f| f.name == field.name)
}

/// Why data written as `old` cannot be read as `new`, if it cannot.
fn type_readable(old: &DataType, new: &DataType, mode: ColumnMappingMode) -> Option<String> {
    match (old, new) {
        (DataType::Primitive(a), DataType::Primitive(b)) => (a != b
            && !is_allowed_widening(*a, *b))
        .then(|| format!("changes type from {a:?} to {b:?}")),
        (DataType::Struct(a), DataType::Struct(b)) => {
            struct_readable(a, b, mode).map(|(column, reason)| format!("field '{column}' {reason}"))
        }
        (DataType::Array(a), DataType::Array(b)) => {
            if a.contains_null && !b.contains_null {
                return Some("becomes an array without null elements".into());
            }
            type_readable(&a.element_type, &b.element_type, mode)
        }
        (DataType::Map(a), DataType::Map(b)) => {
            if a.value_contains_null && !b.value_contains_null {
                return Some("becomes a map without null values".into());
            }
            type_readable(&a.key_type, &b.key_type, mode)
                .or_else(|| type_readable(&a.value_type, &b.value_type, mode))
        }
        (DataType::Variant, DataType::Variant) => None,
        _ => Some("changes its kind of type".into()),
    }
}

/// The first column of `new` that data written as `old` cannot fill, and
/// why: a column that becomes non-nullable (or is added as
/// non-nullable), or a type that changes other than by widening.
fn struct_readable(
    old: &StructType,
    new: &StructType,
    mode: ColumnMappingMode,
) -> Option<(String, String)> {
    for field in &new.fields {
        match counterpart(&old.fields, field, mode) {
            None if !field.nullable => {
                return Some((field.name.clone(), "is added as non-nullable".into()));
            }
            None => {}
            Some(o) => {
                if o.nullable && !field.nullable {
                    return Some((field.name.clone(), "becomes non-nullable".into()));
                }
                if let Some(reason) = type_readable(&o.data_type, &field.data_type, mode) {
                    return Some((field.name.clone(), reason));
                }
            }
        }
    }
    None
}

/// The checks a `metaData` at `version` inside the range must pass.
fn check_metadata(
    metadata: &Metadata,
    version: u64,
    end: u64,
    end_schema: &StructType,
    end_metadata: &Metadata,
    mode: ColumnMappingMode,
) -> Result<()> {
    if !cdf_enabled(metadata) {
        return Err(LogError::ChangeDataFeedDisabled { version });
    }
    let schema = schema_of(metadata, version)?;
    if let Some((column, reason)) = struct_readable(&schema, end_schema, mode) {
        return Err(LogError::ChangeFeedSchema {
            version,
            end,
            column,
            reason,
        });
    }
    if metadata.partition_columns != end_metadata.partition_columns {
        return Err(LogError::ChangeFeedSchema {
            version,
            end,
            column: metadata.partition_columns.join(", "),
            reason: format!(
                "are the partition columns, not [{}]",
                end_metadata.partition_columns.join(", ")
            ),
        });
    }
    Ok(())
}

/// `(version, commit timestamp)` of every commit in `files` from the
/// earliest reconstructible version on, ascending: in-commit timestamps
/// where ICT is on (per `latest`), monotonized file times before that.
async fn commit_times(
    store: &Arc<dyn ObjectStore>,
    dir: &object_store::path::Path,
    files: &[LogFile],
    latest: &VersionState,
) -> Result<Vec<(u64, i64)>> {
    let earliest = earliest_version(dir, files).unwrap_or(latest.version);
    let ict_from = ict_enablement(&latest.protocol, &latest.metadata).map(|(e, _)| e);
    let mut times = file_time_series(files, earliest, ict_from);
    let ict_files: Vec<&LogFile> = files
        .iter()
        .filter(|f| {
            f.kind == LogFileKind::Commit
                && f.version >= earliest
                && ict_from.is_some_and(|e| f.version >= e)
        })
        .collect();
    // The futures own what they use: borrowing closures fail rustc's
    // `Send` check in the callers' futures ("`FnOnce` is not general
    // enough"), as in replay.
    let ict_files: Vec<LogFile> = ict_files.into_iter().cloned().collect();
    let ahead = commit_readahead(&ict_files);
    let ict: Vec<(u64, i64)> = futures::stream::iter(ict_files)
        .map(|f| {
            let store = Arc::clone(store);
            async move {
                in_commit_timestamp(store.as_ref(), &f)
                    .await
                    .map(|t| (f.version, t))
            }
        })
        .buffered(ahead)
        .try_collect()
        .await?;
    times.extend(ict);
    Ok(times)
}

impl ChangeFeed {
    /// Resolves the change range `start..=end` (`end` defaults to the
    /// latest version) of the table at `paths` in `store`, replays the
    /// states at both ends, and checks that a feed can be read.
    ///
    /// # Errors
    ///
    /// [`LogError::ChangeRange`] for a start after the end or beyond the
    /// latest version, or a timestamp outside the history;
    /// [`LogError::ChangeCommitMissing`] when a commit of the range is no
    /// longer in the log; [`LogError::ChangeFeedSchema`] for an end schema
    /// that takes a change column's name; any error of replaying the end
    /// state. The feed off, or a schema the end's cannot read, at the start
    /// or at a commit of the range is an error of [`ChangeFeed::commits`],
    /// naming that version.
    pub async fn open(
        store: Arc<dyn ObjectStore>,
        paths: TablePaths,
        io: &CheckpointIo,
        start: ChangeBound,
        end: Option<ChangeBound>,
    ) -> Result<Self> {
        Self::open_knowing(store, paths, io, start, end, None).await
    }

    /// [`ChangeFeed::open`] for the table of `snapshot`: when the snapshot
    /// is still the latest version, its protocol and metadata stand for the
    /// latest state, so the log is not replayed a second time (for a table
    /// opened just before, the commits since its last checkpoint are then
    /// read once for the table and once for the feed, not twice for the
    /// feed).
    ///
    /// # Errors
    ///
    /// As [`ChangeFeed::open`].
    pub async fn open_at(
        snapshot: &crate::Snapshot,
        io: &CheckpointIo,
        start: ChangeBound,
        end: Option<ChangeBound>,
    ) -> Result<Self> {
        let known = VersionState {
            version: snapshot.version(),
            protocol: snapshot.protocol().clone(),
            metadata: snapshot.metadata().clone(),
        };
        Self::open_knowing(
            Arc::clone(snapshot.store()),
            snapshot.paths().clone(),
            io,
            start,
            end,
            Some(known),
        )
        .await
    }

    async fn open_knowing(
        store: Arc<dyn ObjectStore>,
        paths: TablePaths,
        io: &CheckpointIo,
        start: ChangeBound,
        end: Option<ChangeBound>,
        known: Option<VersionState>,
    ) -> Result<Self> {
        let dir = log_dir(paths.root());
        let files = list_log(store.as_ref(), &dir, 0).await?;
        let Some(latest) = files.iter().map(|f| f.version).max() else {
            return Err(LogError::NoLog {
                log_dir: dir.to_string(),
            });
        };
        let latest_state = match known {
            Some(k) if k.version == latest => k,
            _ => {
                let segment = LogSegment::build(dir.clone(), &files, None)?;
                replay_segment(&store, io, &paths, &segment, true)
                    .await?
                    .into()
            }
        };
        let latest = latest.max(latest_state.version);
        let needs_times = matches!(start, ChangeBound::TimestampMs(_))
            || matches!(end, Some(ChangeBound::TimestampMs(_)));
        let times = if needs_times {
            commit_times(&store, &dir, &files, &latest_state).await?
        } else {
            Vec::new()
        };
        let start = match start {
            ChangeBound::Version(v) => v,
            ChangeBound::TimestampMs(t) => times
                .iter()
                .filter(|(_, at)| *at >= t)
                .map(|(v, _)| *v)
                .min()
                .ok_or_else(|| LogError::ChangeRange {
                    reason: format!(
                        "start timestamp {t} ms is after the last commit ({} ms, version {latest})",
                        times.last().map_or(0, |(_, at)| *at)
                    ),
                })?,
        };
        let end = match end {
            None => latest,
            Some(ChangeBound::Version(v)) => v,
            Some(ChangeBound::TimestampMs(t)) => times
                .iter()
                .filter(|(_, at)| *at <= t)
                .map(|(v, _)| *v)
                .max()
                .ok_or_else(|| LogError::ChangeRange {
                    reason: format!(
                        "end timestamp {t} ms is before the first commit ({} ms)",
                        times.first().map_or(0, |(_, at)| *at)
                    ),
                })?,
        };
        if start > latest {
            return Err(LogError::ChangeRange {
                reason: format!("start version {start} is beyond the latest version {latest}"),
            });
        }
        if end > latest {
            return Err(LogError::ChangeRange {
                reason: format!("end version {end} is beyond the latest version {latest}"),
            });
        }
        if start > end {
            return Err(LogError::ChangeRange {
                reason: format!("start version {start} is after end version {end}"),
            });
        }
        let by_version: HashMap<u64, &LogFile> = files
            .iter()
            .filter(|f| f.kind == LogFileKind::Commit && (start..=end).contains(&f.version))
            .map(|f| (f.version, f))
            .collect();
        let mut commits = Vec::with_capacity(by_version.len());
        for v in start..=end {
            match by_version.get(&v) {
                Some(f) => commits.push((*f).clone()),
                None => {
                    return Err(LogError::ChangeCommitMissing {
                        version: v,
                        log_dir: dir.to_string(),
                    });
                }
            }
        }
        let replay_at = |v: u64| {
            let store = Arc::clone(&store);
            let paths = paths.clone();
            let dir = dir.clone();
            let files = &files;
            async move {
                let segment = LogSegment::build(dir, files, Some(v))?;
                replay_segment(&store, io, &paths, &segment, true)
                    .await
                    .map(VersionState::from)
            }
        };
        let end_state = if latest_state.version == end {
            latest_state
        } else {
            replay_at(end).await?
        };
        check_protocol(&end_state.protocol, end)?;
        let end_schema = schema_of(&end_state.metadata, end)?;
        let mapping = mapping_of(&end_state.protocol, &end_state.metadata)?;
        if let Some(f) = end_schema
            .fields
            .iter()
            .find(|f| CHANGE_COLUMNS.contains(&f.name.as_str()))
        {
            return Err(LogError::ChangeFeedSchema {
                version: end,
                end,
                column: f.name.clone(),
                reason: "is a name the change data feed reserves for its own column".into(),
            });
        }
        // Unless a commit after the start changes the metadata or protocol,
        // the end's state is the start's. Whether it passes the start's
        // checks decides if the start is replayed (after the commits, which
        // name the version of a change that fails them).
        let end_passes_start_checks = check_metadata(
            &end_state.metadata,
            start,
            end,
            &end_schema,
            &end_state.metadata,
            mapping,
        )
        .is_ok();
        let earliest = earliest_version(&dir, &files).unwrap_or(start);
        let series: HashMap<u64, i64> = file_time_series(&files, earliest, None)
            .into_iter()
            .collect();
        let file_times = commits
            .iter()
            .map(|f| {
                series
                    .get(&f.version)
                    .copied()
                    .unwrap_or(f.last_modified_ms)
            })
            .collect();
        Ok(Self {
            store,
            paths,
            start,
            end,
            commits,
            listing: Arc::new(files),
            io: io.clone(),
            end_passes_start_checks,
            file_times,
            end_state: Arc::new(end_state),
            end_schema: Arc::new(end_schema),
            mapping,
        })
    }

    /// The first version of the range.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The last version of the range.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The schema at the end version (the feed's columns).
    pub fn schema(&self) -> &StructType {
        &self.end_schema
    }

    /// The column-mapping mode at the end version.
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.mapping
    }

    /// The metadata at the end version.
    pub fn metadata(&self) -> &Metadata {
        &self.end_state.metadata
    }

    /// Checks the state at the start version (the feed on, a schema the
    /// end schema reads, a readable protocol) by replaying it.
    async fn check_start(&self) -> Result<()> {
        let dir = log_dir(self.paths.root());
        let segment = LogSegment::build(dir, &self.listing, Some(self.start))?;
        let state = replay_segment(&self.store, &self.io, &self.paths, &segment, true).await?;
        check_protocol(&state.protocol, self.start)?;
        check_metadata(
            &state.metadata,
            self.start,
            self.end,
            &self.end_schema,
            &self.end_state.metadata,
            self.mapping,
        )
    }

    /// Number of commits in the range.
    pub fn num_commits(&self) -> usize {
        self.commits.len()
    }

    /// The commits of the range as a stream, ascending: each commit file
    /// read (8 ahead, concurrently), parsed once into its
    /// [`CommitChanges`] and dropped. A `metaData` or `protocol` that ends
    /// the feed's readability is an error naming its version. When a commit
    /// after the start changes either, the stream ends by replaying the
    /// start state and checking it (an error naming the start version).
    pub fn commits(&self) -> BoxStream<'static, Result<CommitChanges>> {
        self.commits_ahead(COMMIT_READAHEAD)
    }

    /// [`ChangeFeed::commits`] with up to `ahead` commit files in flight
    /// (at least one, and no more than 64 MiB of them at their mean size):
    /// on object storage, where each read is a round trip, as many as a
    /// scan has files in flight.
    pub fn commits_ahead(&self, ahead: usize) -> BoxStream<'static, Result<CommitChanges>> {
        let feed = Arc::new(self.clone());
        let tail = Arc::clone(&feed);
        let fetches = (0..self.commits.len()).map(move |i| {
            let feed = Arc::clone(&feed);
            async move {
                let f = &feed.commits[i];
                let bytes = read_log_file(feed.store.as_ref(), f).await?;
                if bytes.is_empty() {
                    return Err(LogError::EmptyCommit {
                        path: f.location.to_string(),
                    });
                }
                Ok((feed, i, bytes))
            }
        });
        let ahead = ahead.clamp(1, commit_readahead(&self.commits));
        // Whether the start state must be replayed and checked once every
        // commit is read: the end's state failed the start's checks, or a
        // commit after the start changed the metadata or protocol.
        let check_start = Arc::new(AtomicBool::new(!self.end_passes_start_checks));
        let seen = Arc::clone(&check_start);
        let commits =
            futures::stream::iter(fetches)
                .buffered(ahead)
                .and_then(move |(feed, i, bytes)| {
                    let seen = Arc::clone(&seen);
                    async move {
                        let (changes, changes_table) = feed.commit(i, &bytes)?;
                        if changes_table && changes.version > feed.start {
                            seen.store(true, Ordering::Relaxed);
                        }
                        Ok(changes)
                    }
                });
        let start = futures::stream::once(async move {
            if check_start.load(Ordering::Relaxed) {
                tail.check_start().await?;
            }
            Ok(None)
        })
        .try_filter_map(|none: Option<CommitChanges>| async move { Ok(none) });
        commits.chain(start).boxed()
    }

    /// The changes of commit `i` of the range, from its `bytes`, and
    /// whether it holds a `metaData` or `protocol` action.
    fn commit(&self, i: usize, bytes: &Bytes) -> Result<(CommitChanges, bool)> {
        let f = &self.commits[i];
        let version = f.version;
        let path = f.location.to_string();
        let end_meta = &self.end_state.metadata;
        let mut actions = Vec::new();
        let mut ict = None;
        let mut changes_table = false;
        parse_actions(&path, bytes, |line, action| {
            match action {
                Action::Metadata(m) => {
                    changes_table = true;
                    check_metadata(
                        &m,
                        version,
                        self.end,
                        &self.end_schema,
                        end_meta,
                        self.mapping,
                    )?
                }
                Action::Protocol(p) => {
                    changes_table = true;
                    check_protocol(&p, version)?
                }
                Action::CommitInfo(raw) if ict.is_none() => {
                    ict = commit_info(&path, line, raw)?.in_commit_timestamp;
                }
                Action::Add(_) | Action::Remove(_) | Action::Cdc(_) => {
                    actions.push((line, action));
                }
                _ => {}
            }
            Ok(())
        })?;
        let timestamp_ms =
            if ict_active_at(&self.end_state.protocol, &self.end_state.metadata, version) {
                ict.ok_or_else(|| {
                    LogError::InvalidAction {
                path: path.clone(),
                detail:
                    "in-commit timestamps are enabled but commitInfo.inCommitTimestamp is missing"
                        .into(),
            }
                })?
            } else {
                self.file_times[i]
            };
        let rows = self.select(&path, version, &actions)?;
        let mut builder = AddColumnsBuilder::default();
        let mut sources = Vec::with_capacity(rows.len());
        let mut paired_dv = Vec::with_capacity(rows.len());
        let mut has_size = Vec::with_capacity(rows.len());
        for row in rows {
            let (_, plain) = self
                .paths
                .file_key_and_plainness(row.path, row.dv.map(|d| d.key_parts()))?;
            builder
                .append(AddRow {
                    path: row.path,
                    partition_values: row.partition_values,
                    size: row.size.unwrap_or(0),
                    modification_time: 0,
                    stats: row.stats,
                    dv: row.dv.map(|d| {
                        (
                            d.storage_type.as_ref(),
                            d.path_or_inline_dv.as_ref(),
                            d.offset,
                            d.size_in_bytes,
                            d.cardinality,
                        )
                    }),
                    plain_path: plain,
                })
                .map_err(|source| LogError::MalformedJson {
                    path: path.clone(),
                    line: row.line,
                    source,
                })?;
            sources.push(row.source);
            paired_dv.push(
                row.paired
                    .map(|d| {
                        dar_dv::DvDescriptor::try_new(
                            &d.storage_type,
                            d.path_or_inline_dv.as_ref(),
                            d.offset.map(i64::from),
                            i64::from(d.size_in_bytes),
                            d.cardinality,
                        )
                        .map_err(|e| LogError::InvalidDeletionVector {
                            path: row.path.to_string(),
                            source: Box::new(e),
                        })
                    })
                    .transpose()?,
            );
            has_size.push(row.size.is_some());
        }
        let files = FileIndex::build(
            &self.paths,
            &self.end_schema,
            self.mapping,
            end_meta,
            &[builder.finish()],
            crate::file_index::StatsLoading::OnDemand,
        )?;
        let changes = CommitChanges {
            version,
            timestamp_ms,
            files,
            sources,
            paired_dv,
            has_size,
        };
        Ok((changes, changes_table))
    }

    /// The change files of one commit's file actions, by the protocol's
    /// rules (see the module doc).
    fn select<'a>(
        &self,
        path: &str,
        version: u64,
        actions: &'a [(usize, Action<'a>)],
    ) -> Result<Vec<ChangeRow<'a>>> {
        let has_cdc = actions.iter().any(|(_, a)| matches!(a, Action::Cdc(_)));
        let mut rows = Vec::new();
        if has_cdc {
            for (line, a) in actions {
                if let Action::Cdc(c) = a {
                    rows.push(ChangeRow {
                        line: *line,
                        path: &c.path,
                        partition_values: c.partition_values,
                        size: Some(c.size),
                        stats: None,
                        dv: None,
                        paired: None,
                        source: ChangeSource::Cdc,
                    });
                }
            }
            return Ok(rows);
        }
        let key = |p: &str| self.paths.file_key(p, None);
        let mut added = std::collections::HashSet::new();
        for (_, a) in actions {
            if let Action::Add(a) = a
                && a.data_change
            {
                added.insert(key(&a.path)?);
            }
        }
        // Removes of a path that the commit also adds: the old DV of a
        // replaced DV.
        let mut replaced: HashMap<crate::add_columns::FileKey, Option<&DvLine<'a>>> =
            HashMap::new();
        let partitioned = !self.end_state.metadata.partition_columns.is_empty();
        for (line, a) in actions {
            let Action::Remove(r) = a else { continue };
            if !r.data_change {
                continue;
            }
            let k = key(&r.path)?;
            if added.contains(&k) {
                replaced.insert(k, r.deletion_vector.as_ref());
                continue;
            }
            let partition_values = match r.partition_values {
                Some(pv) => pv,
                None if partitioned => {
                    return Err(LogError::InvalidAction {
                        path: path.to_string(),
                        detail: format!(
                            "line {line}: the remove of '{}' at version {version} has no partitionValues, which a change data feed of a partitioned table needs",
                            r.path
                        ),
                    });
                }
                None => PartitionEntries(None),
            };
            rows.push(ChangeRow {
                line: *line,
                path: &r.path,
                partition_values,
                size: r.size,
                stats: r.stats.as_deref(),
                dv: r.deletion_vector.as_ref(),
                paired: None,
                source: ChangeSource::Delete,
            });
        }
        for (line, a) in actions {
            let Action::Add(a) = a else { continue };
            if !a.data_change {
                continue;
            }
            let base = ChangeRow {
                line: *line,
                path: &a.path,
                partition_values: a.partition_values,
                size: Some(a.size),
                stats: a.stats.as_deref(),
                dv: a.deletion_vector.as_ref(),
                paired: None,
                source: ChangeSource::Insert,
            };
            match replaced.get(&key(&a.path)?) {
                None => rows.push(base),
                Some(old) => {
                    let new = a.deletion_vector.as_ref();
                    let same = match (old, new) {
                        (Some(o), Some(n)) => o.unique_id() == n.unique_id(),
                        (None, None) => true,
                        _ => false,
                    };
                    if same {
                        continue;
                    }
                    // Rows the new DV deletes and the old did not.
                    if let Some(n) = new {
                        rows.push(ChangeRow {
                            dv: *old,
                            paired: Some(n),
                            source: ChangeSource::Delete,
                            ..base
                        });
                    }
                    // Rows the old DV deleted and the new does not.
                    if let Some(o) = old {
                        rows.push(ChangeRow {
                            dv: new,
                            paired: Some(o),
                            source: ChangeSource::Insert,
                            ..base
                        });
                    }
                }
            }
        }
        Ok(rows)
    }
}

/// One change file as the commit states it.
#[derive(Clone, Copy)]
struct ChangeRow<'a> {
    line: usize,
    path: &'a str,
    partition_values: PartitionEntries<'a>,
    size: Option<i64>,
    stats: Option<&'a str>,
    dv: Option<&'a DvLine<'a>>,
    paired: Option<&'a DvLine<'a>>,
    source: ChangeSource,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, t: &str, nullable: bool) -> StructField {
        StructField::new(
            name,
            DataType::Primitive(crate::schema::PrimitiveType::parse(t).unwrap()),
            nullable,
        )
    }

    #[test]
    fn schema_rules_name_the_column() {
        let mode = ColumnMappingMode::None;
        let old = StructType::new(vec![field("a", "integer", true)]);
        let widened = StructType::new(vec![field("a", "long", true), field("b", "string", true)]);
        assert!(struct_readable(&old, &widened, mode).is_none());
        let strict = StructType::new(vec![field("a", "integer", false)]);
        let (c, r) = struct_readable(&old, &strict, mode).unwrap();
        assert_eq!((c.as_str(), r.as_str()), ("a", "becomes non-nullable"));
        let narrowed = StructType::new(vec![field("a", "short", true)]);
        assert_eq!(struct_readable(&old, &narrowed, mode).unwrap().0, "a");
        let added = StructType::new(vec![field("a", "integer", true), field("z", "long", false)]);
        assert_eq!(
            struct_readable(&old, &added, mode).unwrap().1,
            "is added as non-nullable"
        );
        // Dropping a column is readable: the end schema lacks it.
        let wider = StructType::new(vec![
            field("a", "integer", true),
            field("b", "string", true),
        ]);
        assert!(struct_readable(&wider, &old, mode).is_none());
        // Narrowing back is not.
        assert!(struct_readable(&widened, &old, mode).is_some());
    }

    #[test]
    fn renamed_columns_match_by_physical_name() {
        let mode = ColumnMappingMode::Name;
        let phys = |f: StructField, p: &str| {
            f.with_metadata(
                crate::schema::COLUMN_MAPPING_PHYSICAL_NAME_KEY,
                serde_json::json!(p),
            )
        };
        let old = StructType::new(vec![phys(field("a", "integer", true), "col-1")]);
        let renamed = StructType::new(vec![phys(field("b", "integer", false), "col-1")]);
        // Found under its new name: becoming non-nullable is still caught.
        assert_eq!(
            struct_readable(&old, &renamed, mode).unwrap(),
            ("b".to_string(), "becomes non-nullable".to_string())
        );
    }
}
