//! Commit timestamps and time travel by timestamp (protocol digest §10).
//!
//! A version's commit timestamp is its in-commit timestamp (ICT) when ICT is
//! active for it, else the modification time of its commit file,
//! monotonized: a time at or before its predecessor's becomes the
//! predecessor's plus 1 ms. Time travel to `T` picks the greatest version
//! whose commit timestamp is at or before `T`; `T` before the earliest
//! reconstructible version or after the latest one is an error.
//!
//! When ICT was switched on later (enablement version `E`, timestamp `Tₑ`),
//! file times before `E` and ICTs from `E` on need not be in order, so
//! time travel searches only the versions from `E` on when `T ≥ Tₑ`, else
//! only those before `E`. A version before `E` whose file time is at or
//! after `Tₑ` is then reachable by version only: loading by its commit
//! timestamp finds a version from `E` on (or is out of range).

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

use crate::actions::{CommitInfo, Metadata, Protocol};
use crate::checkpoint::CheckpointIo;
use crate::commit::first_commit_info;
use crate::error::{LogError, Result};
use crate::listing::{LogFile, LogFileKind, LogSegment, list_log, log_dir, read_log_file};
use crate::paths::TablePaths;
use crate::replay::{ReplayState, replay_segment};

const ENABLE_ICT: &str = "delta.enableInCommitTimestamps";
const ICT_VERSION: &str = "delta.inCommitTimestampEnablementVersion";
const ICT_TIMESTAMP: &str = "delta.inCommitTimestampEnablementTimestamp";

/// The version from which ICT is on, when it is on at all.
pub fn ict_enablement(protocol: &Protocol, metadata: &Metadata) -> Option<(u64, Option<i64>)> {
    let on = protocol.has_writer_feature("inCommitTimestamp")
        && metadata
            .configuration
            .get(ENABLE_ICT)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    if !on {
        return None;
    }
    let version = metadata
        .configuration
        .get(ICT_VERSION)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let ts = metadata
        .configuration
        .get(ICT_TIMESTAMP)
        .and_then(|v| v.parse().ok());
    Some((version, ts))
}

/// Whether `version`'s commit timestamp is its in-commit timestamp.
pub fn ict_active_at(protocol: &Protocol, metadata: &Metadata, version: u64) -> bool {
    ict_enablement(protocol, metadata).is_some_and(|(e, _)| version >= e)
}

/// Monotonize modification times of consecutive commits (ascending versions).
pub fn monotonized_times(times: impl IntoIterator<Item = i64>) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    for raw in times {
        let t = match out.last() {
            Some(&prev) if raw <= prev => prev + 1,
            _ => raw,
        };
        out.push(t);
    }
    out
}

pub(crate) async fn in_commit_timestamp(store: &dyn ObjectStore, f: &LogFile) -> Result<i64> {
    let path = f.location.to_string();
    let bytes = read_log_file(store, f).await?;
    let ict = first_commit_info(&path, &bytes).and_then(|c| c.in_commit_timestamp);
    ict.ok_or_else(|| LogError::InvalidAction {
        path,
        detail: "in-commit timestamps are enabled but commitInfo.inCommitTimestamp is missing"
            .into(),
    })
}

/// The earliest reconstructible version in a listing from version 0: 0 when
/// commit 0 exists, else the oldest checkpoint with contiguous commits after
/// it; `None` when there is neither.
pub(crate) fn earliest_version(dir: &Path, files: &[LogFile]) -> Option<u64> {
    if files
        .iter()
        .any(|f| f.version == 0 && f.kind == LogFileKind::Commit)
    {
        return Some(0);
    }
    let mut earliest = None;
    for f in files
        .iter()
        .filter(|f| f.kind != LogFileKind::Commit && f.kind != LogFileKind::Checksum)
    {
        let v = f.version;
        if earliest.is_some_and(|e| e <= v) {
            break;
        }
        if LogSegment::build(dir.clone(), files, Some(v)).is_ok_and(|s| s.checkpoint.is_some()) {
            earliest = Some(v);
        }
    }
    earliest
}

/// `(version, ms)` for the commits in `files` from `earliest` on and before
/// `ict_from`: their modification times, monotonized.
pub(crate) fn file_time_series(
    files: &[LogFile],
    earliest: u64,
    ict_from: Option<u64>,
) -> Vec<(u64, i64)> {
    let before: Vec<&LogFile> = files
        .iter()
        .filter(|f| {
            f.kind == LogFileKind::Commit
                && f.version >= earliest
                && ict_from.is_none_or(|e| f.version < e)
        })
        .collect();
    before
        .iter()
        .map(|f| f.version)
        .zip(monotonized_times(before.iter().map(|f| f.last_modified_ms)))
        .collect()
}

/// The commit timestamp of every reconstructible version, ascending:
/// `(version, ms)`. In-commit timestamps where ICT is active (per the latest
/// metadata), monotonized file modification times before that.
///
/// When ICT was switched on later, the two parts are not one sorted
/// sequence: file times before the enablement version may be later than the
/// in-commit timestamps after it. [`version_at_timestamp`] therefore
/// searches only one part (§10).
pub async fn commit_timestamps(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
) -> Result<Vec<(u64, i64)>> {
    let paths = TablePaths::for_store_root(root)?;
    Ok(commit_history(store, &CheckpointIo::new(), &paths)
        .await?
        .times)
}

/// The commit timestamps and, when ICT is on, its enablement version and
/// timestamp (per the latest metadata), with the listing and the latest
/// state they came from (a load by timestamp reuses both).
struct CommitHistory {
    times: Vec<(u64, i64)>,
    ict: Option<(u64, Option<i64>)>,
    files: Vec<LogFile>,
    latest: ReplayState,
}

async fn commit_history(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    paths: &TablePaths,
) -> Result<CommitHistory> {
    let dir = log_dir(paths.root());
    let files = list_log(store.as_ref(), &dir, 0).await?;
    let latest_segment = LogSegment::build(dir.clone(), &files, None)?;
    let latest = replay_segment(store, io, paths, &latest_segment, true).await?;
    let earliest = earliest_version(&dir, &files).unwrap_or(latest.version);
    let ict = ict_enablement(&latest.protocol, &latest.metadata);
    let ict_from = ict.map(|(e, _)| e);
    let mut times = file_time_series(&files, earliest, ict_from);
    for f in files.iter().filter(|f| {
        f.kind == LogFileKind::Commit
            && f.version >= earliest
            && ict_from.is_some_and(|e| f.version >= e)
    }) {
        times.push((f.version, in_commit_timestamp(store.as_ref(), f).await?));
    }
    Ok(CommitHistory {
        times,
        ict,
        files,
        latest,
    })
}

/// The part of `times` that time travel to `timestamp_ms` searches (§10):
/// with ICT switched on at version `E` with enablement timestamp `Tₑ`, the
/// versions from `E` on (by ICT) when `timestamp_ms >= Tₑ`, else those
/// before `E` (by file time). Without ICT, or with ICT on from the earliest
/// reconstructible version, all of them.
fn search_range(
    times: &[(u64, i64)],
    ict: Option<(u64, Option<i64>)>,
    timestamp_ms: i64,
) -> &[(u64, i64)] {
    let Some((e, enabled_at)) = ict else {
        return times;
    };
    let split = times.partition_point(|&(v, _)| v < e);
    let (before, from) = times.split_at(split);
    if before.is_empty() || from.is_empty() {
        return times;
    }
    // `Tₑ` is the ICT of version `E`; use that commit's own value when the
    // property is missing.
    let threshold = enabled_at.unwrap_or(from[0].1);
    if timestamp_ms >= threshold {
        from
    } else {
        before
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

/// The commit timestamp that time travel assigns to the snapshot `state`, so
/// that loading by that timestamp finds this version again (except for a
/// version before ICT enablement whose file time is at or after the
/// enablement timestamp; see the module doc). `None` when the
/// version has no commit file (rebuilt from a checkpoint after cleanup) or
/// ICT is active but its commit lacks `inCommitTimestamp`. `commit_info` is
/// the `commitInfo` of the commit at the snapshot's version, when readable.
pub(crate) async fn snapshot_commit_timestamp(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    state: &ReplayState,
    commit_info: Option<&CommitInfo>,
    known: KnownCommits<'_>,
) -> Result<Option<i64>> {
    let v = state.version;
    let ict_from = ict_enablement(&state.protocol, &state.metadata).map(|(e, _)| e);
    if ict_from.is_some_and(|e| v >= e) {
        // Same source as `commit_timestamps`: the commit's own commitInfo.
        return Ok(commit_info.and_then(|c| c.in_commit_timestamp));
    }
    if state.commit_file.is_none() {
        return Ok(None);
    }
    let series = match known {
        KnownCommits::FromZero(commits) => file_time_series(commits, 0, ict_from),
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
            let earliest = earliest_version(&dir, &files).unwrap_or(v);
            file_time_series(&files, earliest, ict_from)
        }
    };
    Ok(series.iter().find(|&&(ver, _)| ver == v).map(|&(_, t)| t))
}

/// The greatest version whose commit timestamp is at or before `timestamp_ms`.
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
    let root = paths.root();
    let CommitHistory {
        times,
        ict,
        files,
        latest,
    } = commit_history(store, io, paths).await?;
    let (Some(&(_, first)), Some(&(_, last))) = (times.first(), times.last()) else {
        return Err(LogError::NoLog {
            log_dir: log_dir(root).to_string(),
        });
    };
    let range = search_range(&times, ict, timestamp_ms);
    let range_first = range.first().map_or(first, |&(_, t)| t);
    let relation = if timestamp_ms > last {
        "after"
    } else {
        // Each part is ascending: file times are monotonized, ICTs strictly
        // increase.
        let idx = range.partition_point(|&(_, t)| t <= timestamp_ms);
        if let Some(&(version, at_ms)) = range.get(idx.wrapping_sub(1)) {
            return Ok(TimestampEntry {
                version,
                at_ms,
                files,
                latest,
            });
        }
        "before"
    };
    Err(LogError::TimestampOutOfRange {
        requested_ms: timestamp_ms,
        relation,
        earliest_ms: if relation == "before" {
            range_first
        } else {
            first
        },
        latest_ms: last,
    })
}
