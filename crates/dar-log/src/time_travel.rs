//! Commit timestamps and time travel by timestamp (protocol digest §10).
//!
//! A version's commit timestamp is its in-commit timestamp (ICT) when ICT is
//! active for it, else the modification time of its commit file,
//! monotonized: a time at or before its predecessor's becomes the
//! predecessor's plus 1 ms. Time travel to `T` picks the greatest version
//! whose commit timestamp is at or before `T`; `T` before the earliest
//! reconstructible version or after the latest one is an error.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

use crate::actions::{Metadata, Protocol};
use crate::commit::{Action, commit_info, parse_actions};
use crate::error::{LogError, Result};
use crate::listing::{LogFile, LogFileKind, LogSegment, list_log, log_dir, read_log_file};
use crate::replay::replay_segment;

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

async fn in_commit_timestamp(store: &dyn ObjectStore, f: &LogFile) -> Result<i64> {
    let path = f.location.to_string();
    let bytes = read_log_file(store, f).await?;
    let mut ict = None;
    parse_actions(&path, &bytes, |line, a| {
        if let Action::CommitInfo(raw) = a
            && ict.is_none()
        {
            ict = commit_info(&path, line, raw)?.in_commit_timestamp;
        }
        Ok(())
    })?;
    ict.ok_or_else(|| LogError::InvalidAction {
        path,
        detail: "in-commit timestamps are enabled but commitInfo.inCommitTimestamp is missing"
            .into(),
    })
}

/// The commit timestamp of every reconstructible version, ascending:
/// `(version, ms)`. In-commit timestamps where ICT is active (per the latest
/// metadata), monotonized file modification times before that.
pub async fn commit_timestamps(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
) -> Result<Vec<(u64, i64)>> {
    let dir = log_dir(root);
    let files = list_log(store.as_ref(), &dir, 0).await?;
    let latest_segment = LogSegment::build(dir.clone(), files.clone(), None)?;
    let latest = replay_segment(store, &latest_segment).await?;
    // The earliest reconstructible version: 0 when commit 0 exists, else the
    // oldest checkpoint with contiguous commits after it.
    let mut earliest = None;
    for f in files
        .iter()
        .filter(|f| f.kind != LogFileKind::Commit && f.kind != LogFileKind::Checksum)
    {
        let v = f.version;
        if earliest.is_some_and(|e| e <= v) {
            break;
        }
        if LogSegment::build(dir.clone(), files.clone(), Some(v))
            .is_ok_and(|s| s.checkpoint.is_some())
        {
            earliest = Some(v);
        }
    }
    if files
        .iter()
        .any(|f| f.version == 0 && f.kind == LogFileKind::Commit)
    {
        earliest = Some(0);
    }
    let earliest = earliest.unwrap_or(latest.version);
    let ict_from = ict_enablement(&latest.protocol, &latest.metadata).map(|(e, _)| e);
    let commits: Vec<&LogFile> = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit && f.version >= earliest)
        .collect();
    let before: Vec<&LogFile> = commits
        .iter()
        .copied()
        .filter(|f| ict_from.is_none_or(|e| f.version < e))
        .collect();
    let mut out: Vec<(u64, i64)> = before
        .iter()
        .map(|f| f.version)
        .zip(monotonized_times(before.iter().map(|f| f.last_modified_ms)))
        .collect();
    for f in commits
        .iter()
        .filter(|f| ict_from.is_some_and(|e| f.version >= e))
    {
        out.push((f.version, in_commit_timestamp(store.as_ref(), f).await?));
    }
    Ok(out)
}

/// The greatest version whose commit timestamp is at or before `timestamp_ms`.
pub async fn version_at_timestamp(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    timestamp_ms: i64,
) -> Result<u64> {
    let times = commit_timestamps(store, root).await?;
    let (Some(&(_, first)), Some(&(_, last))) = (times.first(), times.last()) else {
        return Err(LogError::NoLog {
            log_dir: log_dir(root).to_string(),
        });
    };
    let relation = if timestamp_ms < first {
        "before"
    } else if timestamp_ms > last {
        "after"
    } else {
        let idx = times.partition_point(|&(_, t)| t <= timestamp_ms);
        if let Some(&(v, _)) = times.get(idx.wrapping_sub(1)) {
            return Ok(v);
        }
        "before"
    };
    Err(LogError::TimestampOutOfRange {
        requested_ms: timestamp_ms,
        relation,
        earliest_ms: first,
        latest_ms: last,
    })
}
