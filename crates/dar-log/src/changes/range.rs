//! Opening a change feed: the listing, the bounds resolved to versions,
//! the commits of the range and the configurations it is checked against.
//!
//! What is listed: a feed between versions lists `_delta_log` from the
//! checkpoint the open table was rebuilt from (or, without an open table,
//! the one `_last_checkpoint` names) when it is at or before the start
//! (object stores list from an offset, `list_with_offset`, to the end:
//! the range and what follows it, never what precedes the checkpoint), or
//! from version 0 when there is no such checkpoint (the state before the
//! start then needs the commits from 0). A timestamp bound lists from
//! version 0: file times are monotonized over every earlier commit. A
//! feed on an open table that ends at a version the table's own listing
//! covers (from a checkpoint before the start) lists nothing: it
//! takes that listing (an open end is the log's latest version, which
//! takes a listing).

use std::collections::HashMap;
use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

use super::{CHANGE_COLUMNS, ChangeBound, ChangeFeed};
use crate::checkpoint::CheckpointIo;
use crate::error::{LogError, Result};
use crate::history::{Bound, History, Resolution};
use crate::listing::{KeptCommits, LogFile, LogFileKind, LogSegment, list_log, log_dir, read_hint};
use crate::paths::TablePaths;
use crate::replay::replay_segment;
use crate::snapshot::TableHeader;
use crate::table_configuration::{InCommitTimestamps, TableConfiguration};

/// What the open table's snapshot tells a feed about its log.
pub(super) struct OpenTable<'a> {
    /// Its configuration: it stands for the latest state when it is the
    /// latest.
    pub config: &'a TableConfiguration,
    /// The commit files its replay read: taken from here, not read again,
    /// by every replay and commit read of the feed.
    pub kept: KeptCommits,
    /// The version of the checkpoint it was rebuilt from (`None`: from
    /// version 0).
    pub checkpoint: Option<u64>,
    /// The log files it was rebuilt from, as a listing from that
    /// checkpoint (`None` for a long log without checkpoints).
    pub listing: Option<Arc<[LogFile]>>,
}

impl OpenTable<'_> {
    /// Its listing, when it covers the versions `start..=end` and the
    /// state before `start`: from a checkpoint before the start (or
    /// version 0) through the end. Only an explicit end: an open end is
    /// the log's latest version when the feed opens, which takes a
    /// listing.
    fn listing_for(&self, start: u64, end: Option<ChangeBound>) -> Option<Vec<LogFile>> {
        let Some(ChangeBound::Version(end)) = end else {
            return None;
        };
        let covered = start <= end
            && end <= self.config.version()
            // The segment holds no commit its checkpoint covers.
            && self.checkpoint.is_none_or(|c| c < start);
        covered
            .then(|| self.listing.as_ref().map(|l| l.to_vec()))
            .flatten()
    }
}

/// Opens the feed of `start..=end` (see [`ChangeFeed::open`]), of the
/// table `open` when it is one.
pub(super) async fn open(
    store: Arc<dyn ObjectStore>,
    paths: TablePaths,
    io: &CheckpointIo,
    start: ChangeBound,
    end: Option<ChangeBound>,
    open: Option<OpenTable<'_>>,
) -> Result<ChangeFeed> {
    let dir = log_dir(paths.root());
    let by_time = matches!(start, ChangeBound::TimestampMs(_))
        || matches!(end, Some(ChangeBound::TimestampMs(_)));
    let kept_listing = match (start, &open) {
        (ChangeBound::Version(s), Some(t)) if !by_time => t.listing_for(s, end),
        _ => None,
    };
    let files = match (kept_listing, start, &open) {
        // The open table's own listing covers the range: nothing listed.
        (Some(files), _, _) => files,
        (None, ChangeBound::Version(s), Some(t)) if !by_time => {
            // The open table's checkpoint stands for `_last_checkpoint`
            // (one round trip fewer): from it when it is at or before the
            // start and still complete, else from version 0.
            list_from_checkpoint(store.as_ref(), &dir, t.checkpoint.filter(|&c| c <= s)).await?
        }
        (None, ChangeBound::Version(s), None) if !by_time => {
            list_before(store.as_ref(), &dir, s).await?
        }
        _ => list_log(store.as_ref(), &dir, 0).await?,
    };
    let (known, read) = match open {
        Some(t) => (Some(t.config), t.kept),
        None => (None, KeptCommits::default()),
    };
    let Some(latest) = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit || f.kind.is_checkpoint())
        .map(|f| f.version)
        .max()
    else {
        return Err(LogError::NoLog {
            log_dir: dir.to_string(),
        });
    };
    // A replay of the state at `v`, with the commits it read (or was
    // handed) kept for the feed's later reads.
    let replay = |v: u64, read: KeptCommits| {
        let (store, paths, dir, files) = (&store, &paths, dir.clone(), &files);
        async move {
            let segment = LogSegment::build(dir, files, Some(v))?;
            let s = replay_segment(store, io, paths, &segment, true, &read).await?;
            let header = TableHeader {
                version: s.version,
                protocol: s.protocol,
                metadata: s.metadata,
            };
            Ok::<_, LogError>((header, read.with(&s.kept_commits)))
        }
    };
    let mut read = read;
    let latest_state = match known {
        Some(c) if c.version() == latest => Latest::Known(c.clone()),
        _ => {
            let (header, kept) = replay(latest, read).await?;
            read = kept;
            Latest::Replayed(header)
        }
    };
    let (start, end, history) = if by_time {
        let ict = latest_state.in_commit_timestamps();
        let history = History::new(Arc::clone(&store), dir.clone(), &files, latest, ict);
        let start = start_version(&history, start).await?;
        let end = end_version(&history, end, latest).await?;
        (start, end, Some(history))
    } else {
        let version = |b: Option<ChangeBound>| match b {
            Some(ChangeBound::Version(v)) => v,
            _ => latest,
        };
        (version(Some(start)), version(end), None)
    };
    check_range(start, end, latest)?;
    let commits = range_commits(&dir, &files, start, end)?;
    let file_times = match &history {
        Some(h) => commits.iter().map(|f| h.file_time(f.version)).collect(),
        None => {
            let (listed, times) = crate::history::file_times(&dir, &files, latest);
            let by_version: HashMap<u64, i64> =
                listed.iter().map(|f| f.version).zip(times).collect();
            commits
                .iter()
                .map(|f| by_version.get(&f.version).copied())
                .collect::<Vec<_>>()
        }
    };
    // A commit the earliest reconstructible version does not cover keeps
    // its raw file time.
    let file_times = commits
        .iter()
        .zip(file_times)
        .map(|(f, t)| t.unwrap_or(f.last_modified_ms))
        .collect();
    let end_config = match latest_state {
        Latest::Known(c) if end == latest => c,
        Latest::Replayed(h) if end == latest => {
            TableConfiguration::try_new(h.protocol, h.metadata, h.version)?
        }
        _ => {
            let (h, kept) = replay(end, read).await?;
            read = kept;
            TableConfiguration::try_new(h.protocol, h.metadata, h.version)?
        }
    };
    check_end(&end_config)?;
    Ok(ChangeFeed {
        store,
        paths,
        io: io.clone(),
        start,
        end,
        commits: Arc::new(commits),
        file_times: Arc::new(file_times),
        listing: Arc::new(files),
        end_config: Arc::new(end_config),
        read,
    })
}

/// The latest version's state: the open table's configuration, or
/// replayed (its protocol may be one dar refuses when the range ends
/// before it).
enum Latest {
    Known(TableConfiguration),
    Replayed(TableHeader),
}

impl Latest {
    fn in_commit_timestamps(&self) -> InCommitTimestamps {
        match self {
            Self::Known(c) => c.in_commit_timestamps(),
            Self::Replayed(h) => InCommitTimestamps::of(&h.protocol, &h.metadata),
        }
    }
}

/// The log files from the checkpoint `_last_checkpoint` names when it is
/// at or before `start` and complete, else from version 0.
async fn list_before(store: &dyn ObjectStore, dir: &Path, start: u64) -> Result<Vec<LogFile>> {
    let hint = read_hint(store, dir).await?;
    list_from_checkpoint(store, dir, hint.map(|h| h.version).filter(|&v| v <= start)).await
}

/// The log files from the checkpoint at `checkpoint` when it is still
/// there and complete, else from version 0.
async fn list_from_checkpoint(
    store: &dyn ObjectStore,
    dir: &Path,
    checkpoint: Option<u64>,
) -> Result<Vec<LogFile>> {
    if let Some(v) = checkpoint.filter(|&v| v > 0) {
        let files = list_log(store, dir, v).await?;
        // A checkpoint named by a hint or an earlier open may be gone or
        // incomplete.
        if LogSegment::build(dir.clone(), &files, Some(v)).is_ok_and(|s| s.checkpoint.is_some()) {
            return Ok(files);
        }
    }
    list_log(store, dir, 0).await
}

/// The start version of a timestamp bound: the first commit at or after it.
async fn start_version(history: &History, start: ChangeBound) -> Result<u64> {
    let t = match start {
        ChangeBound::Version(v) => return Ok(v),
        ChangeBound::TimestampMs(t) => t,
    };
    match history.resolve(t, Bound::AtOrAfter).await? {
        Resolution::At(c) | Resolution::BeforeFirst { first: c } => Ok(c.version),
        Resolution::AfterLast { last } => Err(LogError::ChangeRange {
            reason: format!(
                "start timestamp {t} ms is after the last commit ({} ms, version {})",
                last.timestamp_ms, last.version
            ),
        }),
    }
}

/// The end version of a bound: the last commit at or before a timestamp
/// (the latest version for one after the last commit).
async fn end_version(history: &History, end: Option<ChangeBound>, latest: u64) -> Result<u64> {
    let t = match end {
        None => return Ok(latest),
        Some(ChangeBound::Version(v)) => return Ok(v),
        Some(ChangeBound::TimestampMs(t)) => t,
    };
    match history.resolve(t, Bound::AtOrBefore).await? {
        Resolution::At(c) => Ok(c.version),
        Resolution::AfterLast { .. } => Ok(latest),
        Resolution::BeforeFirst { first } => Err(LogError::ChangeRange {
            reason: format!(
                "end timestamp {t} ms is before the first commit ({} ms, version {})",
                first.timestamp_ms, first.version
            ),
        }),
    }
}

fn check_range(start: u64, end: u64, latest: u64) -> Result<()> {
    let reason = if start > latest {
        format!("start version {start} is beyond the latest version {latest}")
    } else if end > latest {
        format!("end version {end} is beyond the latest version {latest}")
    } else if start > end {
        format!("start version {start} is after end version {end}")
    } else {
        return Ok(());
    };
    Err(LogError::ChangeRange { reason })
}

/// The commit files `start..=end` of `files`, one per version.
fn range_commits(dir: &Path, files: &[LogFile], start: u64, end: u64) -> Result<Vec<LogFile>> {
    let by_version: HashMap<u64, &LogFile> = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit && (start..=end).contains(&f.version))
        .map(|f| (f.version, f))
        .collect();
    (start..=end)
        .map(|v| match by_version.get(&v) {
            Some(f) => Ok((*f).clone()),
            None => Err(LogError::ChangeCommitMissing {
                version: v,
                log_dir: dir.to_string(),
            }),
        })
        .collect()
}

/// The end's checks: a schema, none of whose columns takes a change
/// column's name.
fn check_end(end: &TableConfiguration) -> Result<()> {
    let version = end.version();
    if !end.has_schema() {
        return Err(LogError::MissingSchema { version });
    }
    match end
        .schema()
        .fields
        .iter()
        .find(|f| CHANGE_COLUMNS.contains(&f.name.as_str()))
    {
        Some(f) => Err(LogError::ChangeFeedSchema {
            version,
            end: version,
            column: f.name.clone(),
            reason: "is a name the change data feed reserves for its own column".into(),
        }),
        None => Ok(()),
    }
}

impl ChangeFeed {
    /// The protocol and metadata before the first commit of the range:
    /// the state at `start - 1`, or at `start` when only a checkpoint at
    /// the start rebuilds it (its commits before were cleaned up; reading
    /// the start's own protocol and metadata again changes nothing);
    /// `None` from version 0.
    pub(super) async fn state_before_start(&self) -> Result<Option<TableHeader>> {
        let Some(before) = self.start.checked_sub(1) else {
            return Ok(None);
        };
        let dir = log_dir(self.paths.root());
        let segment = match LogSegment::build(dir.clone(), &self.listing, Some(before)) {
            Ok(s) => s,
            Err(_) => LogSegment::build(dir, &self.listing, Some(self.start))?,
        };
        let s = replay_segment(
            &self.store,
            &self.io,
            &self.paths,
            &segment,
            true,
            &self.read,
        )
        .await?;
        Ok(Some(TableHeader {
            version: s.version,
            protocol: s.protocol,
            metadata: s.metadata,
        }))
    }
}
