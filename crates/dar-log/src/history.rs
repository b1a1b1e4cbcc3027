//! One history: the commit timestamps of a table and the one resolution of
//! a timestamp to a version (protocol digest §10), used by time travel and
//! by the change feed alike.
//!
//! A commit's timestamp is its in-commit timestamp (ICT) in the ICT era,
//! else its file's modification time, monotonized: a time at or before its
//! predecessor's becomes the predecessor's plus 1 ms. The eras are those of
//! the **latest** configuration (delta-kernel-rs and Delta-Spark do the
//! same): with ICT on since version `E` (enablement timestamp `Tₑ`), the
//! versions from `E` on are the ICT era, the ones before the file-time era;
//! with ICT off at the latest version, every commit is in the file-time era.
//!
//! The two eras need not form one sorted sequence (a table copied after
//! ICT was enabled has file times later than every ICT), so a timestamp `T`
//! is searched in one era only:
//!
//! ```text
//! T > latest commit's timestamp   after the history (time travel: error;
//!                                 a feed's end: the latest version)
//! T = Tₑ                          version E
//! T > Tₑ                          the ICT era, by bisection: O(log n)
//!                                 commits read, ICTs strictly increase
//! T < Tₑ, or no ICT era           the file-time era, in memory (the times
//!                                 come with the listing); at or after T
//!                                 past its end is E
//! ```
//!
//! "At or before" ([`Bound::AtOrBefore`]: time travel, a feed's end) finds
//! the greatest version whose timestamp is at most `T`; "at or after"
//! ([`Bound::AtOrAfter`]: a feed's start) the least whose timestamp is at
//! least `T`.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::path::Path;

use crate::commit::first_commit_info;
use crate::error::{LogError, Result};
use crate::listing::{LogFile, LogFileKind, LogSegment, read_log_file};
use crate::table_configuration::InCommitTimestamps;

/// Which side of a timestamp a version is looked for on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The greatest version whose timestamp is at or before it.
    AtOrBefore,
    /// The least version whose timestamp is at or after it.
    AtOrAfter,
}

/// A version with its commit timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CommitAt {
    pub(crate) version: u64,
    pub(crate) timestamp_ms: i64,
}

/// Where a timestamp falls in the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// The version the bound asks for.
    At(CommitAt),
    /// Before every commit of the era searched (`first`, its first
    /// commit), for [`Bound::AtOrBefore`].
    BeforeFirst { first: CommitAt },
    /// After the latest commit (`last`).
    AfterLast { last: CommitAt },
}

/// Monotonize modification times of consecutive commits (ascending versions).
pub fn monotonized_times(times: impl IntoIterator<Item = i64>) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    for raw in times {
        let t = match out.last() {
            Some(&prev) if raw <= prev => prev.saturating_add(1),
            _ => raw,
        };
        out.push(t);
    }
    out
}

/// The in-commit timestamp of commit `f`, which must have one.
pub(crate) async fn in_commit_timestamp(store: &dyn ObjectStore, f: &LogFile) -> Result<i64> {
    let path = f.location.to_string();
    let bytes = read_log_file(store, f).await?;
    let ict = first_commit_info(&path, &bytes).and_then(|c| c.in_commit_timestamp);
    ict.ok_or_else(|| missing_ict(path))
}

/// The error of a commit in the ICT era without `inCommitTimestamp`.
pub(crate) fn missing_ict(path: String) -> LogError {
    LogError::InvalidAction {
        path,
        detail: "in-commit timestamps are enabled but commitInfo.inCommitTimestamp is missing"
            .into(),
    }
}

/// The earliest reconstructible version of `files`, a listing (from
/// version 0, or from a checkpoint): 0 when commit 0 is listed, else the
/// oldest checkpoint with contiguous commits after it; `None` when there
/// is neither.
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

/// The commits of a listing from its earliest reconstructible version up
/// to `latest`, with their monotonized file times.
pub(crate) fn file_times(dir: &Path, files: &[LogFile], latest: u64) -> (Vec<LogFile>, Vec<i64>) {
    let earliest = earliest_version(dir, files).unwrap_or(latest);
    let commits: Vec<LogFile> = files
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit && (earliest..=latest).contains(&f.version))
        .cloned()
        .collect();
    let times = monotonized_times(commits.iter().map(|f| f.last_modified_ms));
    (commits, times)
}

/// The commits of a table, from its earliest reconstructible version to
/// its latest, with the eras of the latest configuration (module doc).
#[derive(Debug, Clone)]
pub(crate) struct History {
    store: Arc<dyn ObjectStore>,
    dir: Path,
    /// Ascending.
    commits: Vec<LogFile>,
    /// Monotonized file times of `commits`, all of them (a feed gives a
    /// commit past an ICT era its file time).
    file_times: Vec<i64>,
    /// Index of the first commit of the ICT era (`commits.len()` without one).
    ict_from: usize,
    /// `Tₑ` as the table records it.
    ict_enabled_at: Option<i64>,
}

impl History {
    /// The history of `files`, a listing from version 0 (or from the
    /// oldest checkpoint kept), whose latest version is `latest` with
    /// in-commit timestamps as `ict` says.
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        dir: Path,
        files: &[LogFile],
        latest: u64,
        ict: InCommitTimestamps,
    ) -> Self {
        let (commits, file_times) = file_times(&dir, files, latest);
        let (ict_from, ict_enabled_at) = match ict {
            InCommitTimestamps::Off => (commits.len(), None),
            InCommitTimestamps::Since {
                version,
                timestamp_ms,
            } => (
                commits.partition_point(|f| f.version < version),
                timestamp_ms,
            ),
        };
        Self {
            store,
            dir,
            commits,
            file_times,
            ict_from,
            ict_enabled_at,
        }
    }

    /// The monotonized file time of commit `version`, when listed.
    pub(crate) fn file_time(&self, version: u64) -> Option<i64> {
        let i = self
            .commits
            .binary_search_by_key(&version, |f| f.version)
            .ok()?;
        self.file_times.get(i).copied()
    }

    /// The timestamp of `commits[i]`: its ICT in the ICT era, else its
    /// monotonized file time.
    async fn timestamp_at(&self, i: usize) -> Result<CommitAt> {
        let f = &self.commits[i];
        let timestamp_ms = if i >= self.ict_from {
            in_commit_timestamp(self.store.as_ref(), f).await?
        } else {
            self.file_times[i]
        };
        Ok(CommitAt {
            version: f.version,
            timestamp_ms,
        })
    }

    /// The timestamp of the earliest commit.
    pub(crate) async fn first(&self) -> Result<i64> {
        self.edge(0).await
    }

    /// The timestamp of the latest commit.
    pub(crate) async fn last(&self) -> Result<i64> {
        self.edge(self.commits.len().saturating_sub(1)).await
    }

    async fn edge(&self, i: usize) -> Result<i64> {
        if self.commits.is_empty() {
            return Err(LogError::NoLog {
                log_dir: self.dir.to_string(),
            });
        }
        Ok(self.timestamp_at(i).await?.timestamp_ms)
    }

    /// Every commit's timestamp, ascending by version (the ICTs read
    /// concurrently).
    pub(crate) async fn timestamps(&self) -> Result<Vec<(u64, i64)>> {
        use futures::{StreamExt, TryStreamExt};
        let ict_era = &self.commits[self.ict_from..];
        let ahead = crate::replay::commit_readahead(ict_era, crate::replay::MAX_COMMIT_READAHEAD);
        // The futures own what they use: borrowing closures fail rustc's
        // `Send` check in the callers' futures, as in replay.
        let ict: Vec<(u64, i64)> = futures::stream::iter(ict_era.to_vec())
            .map(|f| {
                let store = Arc::clone(&self.store);
                async move {
                    let t = in_commit_timestamp(store.as_ref(), &f).await?;
                    Ok::<_, LogError>((f.version, t))
                }
            })
            .buffered(ahead)
            .try_collect()
            .await?;
        let mut times: Vec<(u64, i64)> = self.commits[..self.ict_from]
            .iter()
            .map(|f| f.version)
            .zip(self.file_times.iter().copied())
            .collect();
        times.extend(ict);
        Ok(times)
    }

    /// Where `timestamp_ms` falls, on the side `bound` asks for (module doc).
    ///
    /// # Errors
    ///
    /// [`LogError::NoLog`] when no commit is left; a commit of the ICT era
    /// that cannot be read or lacks its in-commit timestamp.
    pub(crate) async fn resolve(&self, timestamp_ms: i64, bound: Bound) -> Result<Resolution> {
        let Some(last) = self.commits.len().checked_sub(1) else {
            return Err(LogError::NoLog {
                log_dir: self.dir.to_string(),
            });
        };
        let latest = self.timestamp_at(last).await?;
        if timestamp_ms == latest.timestamp_ms {
            return Ok(Resolution::At(latest));
        }
        if timestamp_ms > latest.timestamp_ms {
            return Ok(Resolution::AfterLast { last: latest });
        }
        let all = 0..self.commits.len();
        if self.ict_from == 0 {
            return self.search_ict(all, timestamp_ms, bound).await;
        }
        if self.ict_from == self.commits.len() {
            return Ok(self.search_file_times(all.end, timestamp_ms, bound, None));
        }
        let enabled = match self.ict_enabled_at {
            Some(t) => CommitAt {
                version: self.commits[self.ict_from].version,
                timestamp_ms: t,
            },
            None => self.timestamp_at(self.ict_from).await?,
        };
        if timestamp_ms == enabled.timestamp_ms {
            Ok(Resolution::At(enabled))
        } else if timestamp_ms > enabled.timestamp_ms {
            self.search_ict(self.ict_from..all.end, timestamp_ms, bound)
                .await
        } else {
            Ok(self.search_file_times(self.ict_from, timestamp_ms, bound, Some(enabled)))
        }
    }

    /// The file-time era `commits[..end]`, in memory (monotonized times
    /// strictly increase). At or after a time past its end is `next`, the
    /// first commit of the ICT era.
    fn search_file_times(
        &self,
        end: usize,
        timestamp_ms: i64,
        bound: Bound,
        next: Option<CommitAt>,
    ) -> Resolution {
        let times = &self.file_times[..end];
        let at = |i: usize| CommitAt {
            version: self.commits[i].version,
            timestamp_ms: times[i],
        };
        match bound {
            Bound::AtOrBefore => match times.partition_point(|&t| t <= timestamp_ms) {
                0 => Resolution::BeforeFirst { first: at(0) },
                i => Resolution::At(at(i - 1)),
            },
            Bound::AtOrAfter => {
                let i = times.partition_point(|&t| t < timestamp_ms);
                match (i < end, next) {
                    (true, _) => Resolution::At(at(i)),
                    (false, Some(next)) => Resolution::At(next),
                    (false, None) => Resolution::AfterLast { last: at(end - 1) },
                }
            }
        }
    }

    /// The ICT era `commits[range]` (ICTs strictly increase), by bisection:
    /// one commit read per probe, O(log n) in all.
    async fn search_ict(
        &self,
        range: std::ops::Range<usize>,
        timestamp_ms: i64,
        bound: Bound,
    ) -> Result<Resolution> {
        let mut probed: Vec<CommitAt> = Vec::new();
        let (mut lo, mut hi) = (range.start, range.end);
        // The first index past those that lie before the answer's side.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let at = self.timestamp_at(mid).await?;
            probed.push(at);
            let right = match bound {
                Bound::AtOrBefore => at.timestamp_ms <= timestamp_ms,
                Bound::AtOrAfter => at.timestamp_ms < timestamp_ms,
            };
            if right {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let index = match bound {
            Bound::AtOrBefore if lo == range.start => {
                let first = self.probed_or_read(&probed, range.start).await?;
                return Ok(Resolution::BeforeFirst { first });
            }
            Bound::AtOrBefore => lo - 1,
            Bound::AtOrAfter if lo == range.end => {
                let last = self.probed_or_read(&probed, range.end - 1).await?;
                return Ok(Resolution::AfterLast { last });
            }
            Bound::AtOrAfter => lo,
        };
        Ok(Resolution::At(self.probed_or_read(&probed, index).await?))
    }

    async fn probed_or_read(&self, probed: &[CommitAt], i: usize) -> Result<CommitAt> {
        let version = self.commits[i].version;
        match probed.iter().find(|c| c.version == version) {
            Some(c) => Ok(*c),
            None => self.timestamp_at(i).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonized_times_never_go_back() {
        assert_eq!(monotonized_times([5, 5, 3, 9]), [5, 6, 7, 9]);
        assert_eq!(monotonized_times([i64::MAX, 0]), [i64::MAX, i64::MAX]);
    }
}
