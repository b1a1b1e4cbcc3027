//! Commit timestamps and time travel by timestamp (protocol digest §10).
//!
//! A version's commit timestamp is its in-commit timestamp (ICT) when ICT is
//! active for it, else the modification time of its commit file,
//! monotonized: a time at or before its predecessor's becomes the
//! predecessor's plus 1 ms. Time travel to `T` picks the greatest version
//! whose commit timestamp is at or before `T`; `T` before the earliest
//! reconstructible version or after the latest one is an error.

use std::sync::Arc;

use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::actions::{Metadata, Protocol};
use crate::commit::{Action, commit_info, parse_actions};
use crate::error::{LogError, Result};
use crate::listing::{LogFile, LogFileKind, LogSegment, list_log, log_dir};
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
    let bytes = store
        .get(&f.location)
        .await
        .map_err(|e| LogError::store(path.clone(), e))?
        .bytes()
        .await
        .map_err(|e| LogError::store(path.clone(), e))?;
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

/// The greatest version whose commit timestamp is at or before `timestamp_ms`.
pub async fn version_at_timestamp(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    timestamp_ms: i64,
) -> Result<u64> {
    let dir = log_dir(root);
    let files = list_log(store.as_ref(), &dir, 0).await?;
    // The earliest reconstructible version: 0 when commit 0 exists, else the
    // oldest complete checkpoint.
    let earliest = if files
        .iter()
        .any(|f| f.version == 0 && f.kind == LogFileKind::Commit)
    {
        0
    } else {
        let mut found = None;
        for f in files.iter().filter(|f| f.kind != LogFileKind::Commit) {
            if LogSegment::build(dir.clone(), files.clone(), Some(f.version))
                .is_ok_and(|s| s.checkpoint.is_some())
            {
                found = Some(f.version);
                break;
            }
        }
        found.ok_or_else(|| LogError::NoLog {
            log_dir: dir.to_string(),
        })?
    };
    let latest_segment = LogSegment::build(dir.clone(), files.clone(), None)?;
    let latest = replay_segment(store, &latest_segment).await?;
    let commits: Vec<LogFile> = files
        .into_iter()
        .filter(|f| f.kind == LogFileKind::Commit && f.version >= earliest)
        .collect();
    let ict = ict_enablement(&latest.protocol, &latest.metadata);
    // Versions before ICT enablement use file times; from it on, ICT.
    let ict_from = ict.map(|(e, _)| e);
    let use_ict = match ict {
        Some((_, Some(te))) => timestamp_ms >= te,
        Some((_, None)) => true,
        None => false,
    };
    let (candidates, times): (Vec<&LogFile>, Vec<i64>) = if use_ict {
        let e = ict_from.unwrap_or(0);
        let c: Vec<&LogFile> = commits.iter().filter(|f| f.version >= e).collect();
        let mut t = Vec::with_capacity(c.len());
        for f in &c {
            t.push(in_commit_timestamp(store.as_ref(), f).await?);
        }
        (c, t)
    } else {
        let c: Vec<&LogFile> = commits
            .iter()
            .filter(|f| ict_from.is_none_or(|e| f.version < e))
            .collect();
        let t = monotonized_times(c.iter().map(|f| f.last_modified_ms));
        (c, t)
    };
    let (Some(first), Some(last)) = (times.first().copied(), times.last().copied()) else {
        return Err(LogError::NoLog {
            log_dir: dir.to_string(),
        });
    };
    if timestamp_ms < first {
        return Err(LogError::TimestampOutOfRange {
            requested_ms: timestamp_ms,
            relation: "before",
            earliest_ms: first,
            latest_ms: last,
        });
    }
    let ends_at_latest = candidates
        .last()
        .is_some_and(|f| f.version == latest.version);
    if timestamp_ms > last && ends_at_latest {
        return Err(LogError::TimestampOutOfRange {
            requested_ms: timestamp_ms,
            relation: "after",
            earliest_ms: first,
            latest_ms: last,
        });
    }
    let idx = times.partition_point(|&t| t <= timestamp_ms);
    // idx >= 1 because timestamp_ms >= first.
    Ok(candidates
        .get(idx.saturating_sub(1))
        .map_or(earliest, |f| f.version))
}
