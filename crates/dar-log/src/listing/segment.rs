//! Choosing the files that rebuild one version: the newest complete
//! checkpoint at or below the target plus the contiguous commits after it
//! (protocol digest §1.3, §1.9). Pure: it sees a listing, never the store.

use std::collections::BTreeMap;
use std::sync::Arc;

use object_store::path::Path;

use super::name::LogFileKind;
use crate::error::{LogError, Result};

/// Most log files a segment hands out as a listing
/// ([`LogSegment::as_listing`]): a log without checkpoints is listed again
/// past this.
pub const KEPT_LISTING_FILES: usize = 10_000;

/// One classified file of `_delta_log/`.
#[derive(Debug, Clone)]
pub struct LogFile {
    /// Object key.
    pub location: Path,
    /// Version from the name.
    pub version: u64,
    /// What the name says it is.
    pub kind: LogFileKind,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time, ms since the epoch.
    pub last_modified_ms: i64,
    /// The store's version of the file (its ETag or version id) from the
    /// listing: the byte-range cache serves a checkpoint part from disk
    /// under it without asking the store again.
    pub store_version: Option<dar_io::ObjectVersion>,
}

/// How the chosen checkpoint is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointFormat {
    /// One `pad20(v).checkpoint.parquet` (V1 or V2 spec).
    Classic,
    /// A complete multi-part set (V1 spec).
    MultiPart,
    /// `pad20(v).checkpoint.<uuid>.parquet` (V2 spec).
    UuidParquet,
    /// `pad20(v).checkpoint.<uuid>.json` (V2 spec).
    UuidJson,
}

/// The checkpoint a segment starts from.
#[derive(Debug, Clone)]
pub struct CheckpointFiles {
    /// Checkpoint version.
    pub version: u64,
    /// How it is stored.
    pub format: CheckpointFormat,
    /// Its files (parts in order for multi-part).
    pub files: Vec<LogFile>,
}

/// The files that rebuild one version.
#[derive(Debug, Clone)]
pub struct LogSegment {
    /// The `_delta_log/` prefix.
    pub log_dir: Path,
    /// The snapshot version.
    pub version: u64,
    /// The starting checkpoint, if any.
    pub checkpoint: Option<CheckpointFiles>,
    /// Commits `cp+1..=version` (or `0..=version`), ascending.
    pub commits: Vec<LogFile>,
    /// The commit file at `version`, kept even when the checkpoint is at
    /// `version`: its modification time is the commit's file time, and its
    /// `commitInfo` is read only on demand ([`crate::Snapshot::commit_info`]),
    /// never while loading.
    pub version_commit: Option<LogFile>,
    /// Log compaction files (`pad20(x).pad20(y).compacted.json`) inside
    /// `commits`' range, ascending by first version; see
    /// [`LogSegment::replay_files`].
    pub compactions: Vec<LogFile>,
}

fn rank(cp: &CheckpointFiles) -> (u8, usize, String) {
    // UUID-named > multi-part (more parts wins) > classic; ties between UUID
    // checkpoints go to the greatest name (kernel-rs and Delta-Spark agree).
    let name = cp
        .files
        .first()
        .map(|f| f.location.to_string())
        .unwrap_or_default();
    match cp.format {
        CheckpointFormat::UuidJson | CheckpointFormat::UuidParquet => (3, 1, name),
        CheckpointFormat::MultiPart => (2, cp.files.len(), String::new()),
        CheckpointFormat::Classic => (1, 1, String::new()),
    }
}

/// The best complete checkpoint among the files of one version.
fn best_checkpoint(version: u64, files: &[&LogFile]) -> Option<CheckpointFiles> {
    let mut candidates = Vec::new();
    // Part numbers come from file names: keep only the parts that exist
    // (a name claiming 4294967295 parts must not size anything).
    let mut parts: BTreeMap<u32, BTreeMap<u32, &LogFile>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.size > 0) {
        let format = match f.kind {
            LogFileKind::ClassicCheckpoint => CheckpointFormat::Classic,
            LogFileKind::UuidCheckpoint { json: true } => CheckpointFormat::UuidJson,
            LogFileKind::UuidCheckpoint { json: false } => CheckpointFormat::UuidParquet,
            LogFileKind::MultiPartCheckpoint { part, parts: n } => {
                parts.entry(n).or_default().insert(part, *f);
                continue;
            }
            _ => continue,
        };
        candidates.push(CheckpointFiles {
            version,
            format,
            files: vec![(*f).clone()],
        });
    }
    for (n, found) in parts {
        // Only complete sets count: parts are 1..=n (the name grammar
        // checks that), so n distinct ones are all of them.
        if u32::try_from(found.len()).is_ok_and(|len| len == n) {
            candidates.push(CheckpointFiles {
                version,
                format: CheckpointFormat::MultiPart,
                files: found.into_values().cloned().collect(),
            });
        }
    }
    candidates.into_iter().max_by_key(rank)
}

impl LogSegment {
    /// Select the segment for `target` (latest when `None`) from a listing
    /// sorted by version. `files` may start at any version (a hint).
    pub fn build(log_dir: Path, files: &[LogFile], target: Option<u64>) -> Result<Self> {
        let mut by_version: BTreeMap<u64, Vec<&LogFile>> = BTreeMap::new();
        for f in files {
            if target.is_none_or(|t| f.version <= t) {
                by_version.entry(f.version).or_default().push(f);
            }
        }
        let checkpoint = by_version
            .iter()
            .rev()
            .find_map(|(v, fs)| best_checkpoint(*v, fs));
        let commits_all: Vec<&LogFile> = by_version
            .values()
            .flatten()
            .filter(|f| f.kind == LogFileKind::Commit)
            .copied()
            .collect();
        let latest_all = files
            .iter()
            .filter(|f| f.kind == LogFileKind::Commit || f.kind.is_checkpoint())
            .map(|f| f.version)
            .max();
        let Some(latest_all) = latest_all else {
            return Err(LogError::NoLog {
                log_dir: log_dir.to_string(),
            });
        };
        let cp_version = checkpoint.as_ref().map(|c| c.version);
        let mut expected = cp_version.map_or(0, |v| v + 1);
        if checkpoint.is_none() {
            let earliest = commits_all.first().map_or(latest_all, |f| f.version);
            if earliest != 0 {
                return Err(LogError::TruncatedHistory {
                    log_dir: log_dir.to_string(),
                    target: target.unwrap_or(latest_all),
                    earliest,
                });
            }
        }
        let mut commits = Vec::new();
        let mut version_commit = None;
        for f in commits_all {
            if Some(f.version) == cp_version {
                version_commit = Some(f.clone());
            }
            if cp_version.is_some_and(|cp| f.version <= cp) {
                continue;
            }
            if f.version != expected {
                return Err(LogError::VersionGap {
                    log_dir: log_dir.to_string(),
                    missing: expected,
                });
            }
            expected += 1;
            commits.push(f.clone());
        }
        let version = commits.last().map(|f| f.version).or(cp_version);
        let Some(version) = version else {
            return Err(LogError::NoLog {
                log_dir: log_dir.to_string(),
            });
        };
        if let Some(t) = target
            && t != version
        {
            // Either beyond the end, or a gap right at the end of the listing.
            let earliest = files
                .iter()
                .find(|f| f.kind == LogFileKind::Commit)
                .map_or(version, |f| f.version)
                .min(cp_version.unwrap_or(u64::MAX));
            return Err(LogError::VersionNotFound {
                requested: t,
                earliest,
                latest: latest_all.max(version),
            });
        }
        if let Some(last) = commits.last()
            && last.version == version
        {
            version_commit = Some(last.clone());
        }
        let lo = commits.first().map_or(u64::MAX, |f| f.version);
        let compactions = files
            .iter()
            .filter(|f| match f.kind {
                LogFileKind::Compaction { end } => f.version >= lo && end <= version,
                _ => false,
            })
            .cloned()
            .collect();
        Ok(Self {
            log_dir,
            version,
            checkpoint,
            commits,
            version_commit,
            compactions,
        })
    }

    /// The segment's files as a listing from its checkpoint (or from
    /// version 0 without one), in key order: what a change feed would list
    /// again for a range this segment covers. `None` past
    /// [`KEPT_LISTING_FILES`] files.
    pub fn as_listing(&self) -> Option<Arc<[LogFile]>> {
        let checkpoint = self.checkpoint.iter().flat_map(|c| c.files.iter());
        let mut files: Vec<LogFile> = checkpoint
            .chain(&self.commits)
            .chain(&self.version_commit)
            .chain(&self.compactions)
            .cloned()
            .collect();
        if files.len() > KEPT_LISTING_FILES {
            return None;
        }
        files.sort_by(|a, b| a.location.as_ref().cmp(b.location.as_ref()));
        files.dedup_by(|a, b| a.location == b.location);
        Some(files.into())
    }

    /// The files replay reads instead of `commits`: with `use_compaction`,
    /// compaction files stand in for runs of commits (never the commit at
    /// `version`, whose `commitInfo` the snapshot needs); else `commits`.
    /// Ascending; every version after the checkpoint is covered once.
    pub fn replay_files(&self, use_compaction: bool) -> Vec<LogFile> {
        if use_compaction {
            super::compaction::plan(&self.commits, &self.compactions)
        } else {
            self.commits.clone()
        }
    }
}

#[cfg(test)]
#[path = "segment_tests.rs"]
mod tests;
