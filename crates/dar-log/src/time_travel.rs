//! Time travel by timestamp and the commit timestamp of a snapshot
//! (protocol digest §10).
//!
//! Time travel to `T` loads the greatest version whose commit timestamp is
//! at or before `T`, as the one history resolves it (the crate's
//! `history` module, shared with the change feed): the in-commit-timestamp
//! era of the latest configuration (by bisection) when `T` is at or after
//! its enablement timestamp, else the file-time era before it; `T`
//! before the earliest reconstructible version of the era searched, or
//! after the latest commit, is an error.
//!
//! A snapshot's own commit timestamp ([`crate::Snapshot::commit_timestamp_ms`])
//! is its version's: the in-commit timestamp when in-commit timestamps are
//! on at that version, else its file time monotonized. Where the latest
//! configuration has the same setting for that version (every table that
//! never switched in-commit timestamps off), loading by that timestamp
//! finds the version again, except for a version before ICT enablement
//! whose file time is at or after the enablement timestamp (reachable by
//! version only: its era is not searched for such a timestamp).

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

use crate::actions::CommitInfo;
use crate::checkpoint::CheckpointIo;
use crate::error::{LogError, Result};
use crate::history::{Bound, History, Resolution};
use crate::listing::{KeptCommits, LogFile, LogSegment, list_log, log_dir};
use crate::paths::TablePaths;
use crate::replay::{ReplayState, replay_segment};
use crate::table_configuration::{InCommitTimestamps, TableConfiguration};

pub use crate::history::monotonized_times;

/// The commit timestamp of every reconstructible version, ascending:
/// `(version, ms)`. In-commit timestamps in the ICT era of the latest
/// configuration, monotonized file modification times before it.
///
/// When ICT was switched on later, the two parts are not one sorted
/// sequence: file times before the enablement version may be later than
/// the in-commit timestamps after it. Time travel therefore searches only
/// one part (see the module doc).
///
/// # Errors
///
/// Listing or replaying the log fails; a commit of the ICT era cannot be
/// read or lacks `inCommitTimestamp`.
pub async fn commit_timestamps(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
) -> Result<Vec<(u64, i64)>> {
    let paths = TablePaths::for_store_root(root)?;
    let (history, _, _) = latest_history(store, &CheckpointIo::new(), &paths).await?;
    history.timestamps().await
}

/// The greatest version whose commit timestamp is at or before `timestamp_ms`.
///
/// # Errors
///
/// [`LogError::TimestampOutOfRange`] for a timestamp before the history or
/// after its latest commit; as [`commit_timestamps`].
pub async fn version_at_timestamp(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    timestamp_ms: i64,
) -> Result<u64> {
    let paths = TablePaths::for_store_root(root)?;
    Ok(
        entry_at_timestamp(store, &CheckpointIo::new(), &paths, timestamp_ms)
            .await?
            .version,
    )
}

/// The history of a table's log listed from version 0, with that listing
/// and the replayed latest version.
async fn latest_history(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    paths: &TablePaths,
) -> Result<(History, Vec<LogFile>, ReplayState)> {
    let dir = log_dir(paths.root());
    let files = list_log(store.as_ref(), &dir, 0).await?;
    let segment = LogSegment::build(dir.clone(), &files, None)?;
    let latest = replay_segment(store, io, paths, &segment, true, &KeptCommits::default()).await?;
    // Only the era split of the latest version is needed: a latest
    // protocol dar refuses does not stop travel to an older version.
    let ict = InCommitTimestamps::of(&latest.protocol, &latest.metadata);
    let history = History::new(Arc::clone(store), dir, &files, latest.version, ict);
    Ok((history, files, latest))
}

/// What [`entry_at_timestamp`] found, with the listing from version 0 and
/// the latest state it read on the way, so that loading the version found
/// neither lists the log again nor replays the latest version twice.
pub(crate) struct TimestampEntry {
    /// The greatest version whose commit timestamp is at or before the request.
    pub(crate) version: u64,
    /// That version's commit timestamp.
    pub(crate) at_ms: i64,
    /// The whole log listing, from version 0.
    pub(crate) files: Vec<LogFile>,
    /// The replayed latest version.
    pub(crate) latest: ReplayState,
}

/// The entry for [`version_at_timestamp`].
pub(crate) async fn entry_at_timestamp(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    paths: &TablePaths,
    timestamp_ms: i64,
) -> Result<TimestampEntry> {
    let (history, files, latest) = latest_history(store, io, paths).await?;
    let out_of_range = |relation, earliest_ms, latest_ms| LogError::TimestampOutOfRange {
        requested_ms: timestamp_ms,
        relation,
        earliest_ms,
        latest_ms,
    };
    match history.resolve(timestamp_ms, Bound::AtOrBefore).await? {
        Resolution::At(at) => Ok(TimestampEntry {
            version: at.version,
            at_ms: at.timestamp_ms,
            files,
            latest,
        }),
        Resolution::AfterLast { last } => {
            let first = history.first().await?;
            Err(out_of_range("after", first, last.timestamp_ms))
        }
        Resolution::BeforeFirst { first } => {
            let last = history.last().await?;
            Err(out_of_range("before", first.timestamp_ms, last))
        }
    }
}

/// What is already known about the commits before a snapshot's own commit,
/// so that [`snapshot_commit_timestamp`] can often skip listing the log.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KnownCommits<'a> {
    /// Every commit file from version 0 to the snapshot's, ascending (the
    /// segment of a snapshot rebuilt without a checkpoint).
    FromZero(&'a [LogFile]),
    /// The adjusted, file-time based timestamp of an earlier version, and
    /// every commit file after it up to the snapshot's (a refresh).
    After(i64, &'a [LogFile]),
    /// Nothing: the log is listed from version 0.
    Nothing,
}

/// The commit timestamp of the version of `config`: its in-commit
/// timestamp (from `commit_info`, the `commitInfo` of its commit) when
/// in-commit timestamps are on at that version, else its commit file's
/// time monotonized against the earlier commits (see the module doc).
/// `None` when the version has no commit file (rebuilt from a checkpoint
/// after cleanup) or its commit lacks the in-commit timestamp it needs.
pub(crate) async fn snapshot_commit_timestamp(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    config: &TableConfiguration,
    commit_file: Option<&LogFile>,
    commit_info: Option<&CommitInfo>,
    known: KnownCommits<'_>,
) -> Result<Option<i64>> {
    let v = config.version();
    if config.uses_in_commit_timestamp() {
        return Ok(commit_info.and_then(|c| c.in_commit_timestamp));
    }
    if commit_file.is_none() {
        return Ok(None);
    }
    let series: Vec<(u64, i64)> = match known {
        KnownCommits::FromZero(commits) => commits
            .iter()
            .map(|f| f.version)
            .zip(monotonized_times(
                commits.iter().map(|f| f.last_modified_ms),
            ))
            .collect(),
        KnownCommits::After(prev, commits) => {
            // Continue the monotonized sequence from the earlier version.
            let times = monotonized_times(
                std::iter::once(prev).chain(commits.iter().map(|f| f.last_modified_ms)),
            );
            commits
                .iter()
                .map(|f| f.version)
                .zip(times.into_iter().skip(1))
                .collect()
        }
        KnownCommits::Nothing => {
            let dir = log_dir(root);
            let files = list_log(store.as_ref(), &dir, 0).await?;
            let (commits, times) = crate::history::file_times(&dir, &files, v);
            commits.iter().map(|f| f.version).zip(times).collect()
        }
    };
    Ok(series.iter().find(|&&(ver, _)| ver == v).map(|&(_, t)| t))
}
