//! Commit files a replay read, kept for a later reader of the same log
//! (a change feed on an open table reads the commits its snapshot's
//! replay just read: over object storage, each is a round trip).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

use super::{LogFile, LogFileKind};

/// Commit bytes a replay keeps at most: a log tail larger than this (in
/// commit file sizes) keeps none, so the kept bytes never cost more than
/// this much memory for as long as the snapshot lives.
pub const KEPT_COMMIT_BYTES: u64 = 8 << 20;

/// Commit files already read, by version; cheap to clone. A kept file is
/// handed out only for a listed file of the same key and size (and the
/// same store version when both listings carry one): a commit file is
/// written once, but a table recreated at the same location is another
/// log.
#[derive(Debug, Clone, Default)]
pub struct KeptCommits {
    by_version: Arc<HashMap<u64, (LogFile, Bytes)>>,
}

impl KeptCommits {
    /// The kept bytes of `f`, when `f` is the same commit file as the one
    /// kept at its version.
    pub fn get(&self, f: &LogFile) -> Option<Bytes> {
        let (kept, bytes) = self.by_version.get(&f.version)?;
        let same = f.kind == LogFileKind::Commit
            && kept.location == f.location
            && kept.size == f.size
            && match (&kept.store_version, &f.store_version) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
        same.then(|| bytes.clone())
    }

    /// These commits and `other`'s (one set each of at most
    /// [`KEPT_COMMIT_BYTES`]), `other`'s file where both hold a version.
    #[must_use]
    pub fn with(&self, other: &KeptCommits) -> KeptCommits {
        if other.is_empty() || Arc::ptr_eq(&self.by_version, &other.by_version) {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let mut by_version = (*self.by_version).clone();
        by_version.extend(other.by_version.iter().map(|(v, f)| (*v, f.clone())));
        KeptCommits {
            by_version: Arc::new(by_version),
        }
    }

    /// Number of kept commits.
    pub fn len(&self) -> usize {
        self.by_version.len()
    }

    /// Whether no commit is kept.
    pub fn is_empty(&self) -> bool {
        self.by_version.is_empty()
    }

    /// Total size of the kept commit files.
    pub fn bytes(&self) -> u64 {
        self.by_version.values().map(|(_, b)| b.len() as u64).sum()
    }
}

/// Collects the commit files of one replay, when they fit
/// [`KEPT_COMMIT_BYTES`] (decided up front from their listed sizes).
#[derive(Debug, Default)]
pub(crate) struct KeptCommitsBuilder {
    on: bool,
    by_version: HashMap<u64, (LogFile, Bytes)>,
}

impl KeptCommitsBuilder {
    /// A builder for a replay of `files`: it keeps their commits only when
    /// the commit files' listed sizes add up to at most
    /// [`KEPT_COMMIT_BYTES`].
    pub(crate) fn for_files(files: &[LogFile]) -> Self {
        let total: u64 = files
            .iter()
            .filter(|f| f.kind == LogFileKind::Commit)
            .map(|f| f.size)
            .sum();
        Self {
            on: total <= KEPT_COMMIT_BYTES,
            by_version: HashMap::new(),
        }
    }

    /// Keeps `bytes`, the content of `f`, when `f` is a commit file and the
    /// builder keeps anything (a read whose size differs from the listed
    /// one is not kept: the budget was decided on listed sizes).
    pub(crate) fn keep(&mut self, f: &LogFile, bytes: &Bytes) {
        if self.on && f.kind == LogFileKind::Commit && bytes.len() as u64 == f.size {
            self.by_version
                .insert(f.version, (f.clone(), bytes.clone()));
        }
    }

    /// The kept commits.
    pub(crate) fn finish(self) -> KeptCommits {
        KeptCommits {
            by_version: Arc::new(self.by_version),
        }
    }
}

#[cfg(test)]
mod tests {
    use object_store::path::Path;

    use super::*;

    fn commit(version: u64, size: u64) -> LogFile {
        LogFile {
            location: Path::from(format!("t/_delta_log/{version:020}.json")),
            version,
            kind: LogFileKind::Commit,
            size,
            last_modified_ms: 0,
            store_version: None,
        }
    }

    #[test]
    fn a_kept_commit_is_handed_out_only_for_the_same_file() {
        let f = commit(3, 4);
        let mut b = KeptCommitsBuilder::for_files(std::slice::from_ref(&f));
        b.keep(&f, &Bytes::from_static(b"abcd"));
        // A short read is not kept.
        b.keep(&commit(4, 9), &Bytes::from_static(b"abc"));
        let kept = b.finish();
        assert_eq!((kept.len(), kept.bytes()), (1, 4));
        assert_eq!(kept.get(&f).as_deref(), Some(&b"abcd"[..]));
        assert_eq!(kept.get(&commit(4, 9)), None);
        // Another size, another key, another store version: not the file.
        assert_eq!(kept.get(&commit(3, 5)), None);
        let mut moved = f.clone();
        moved.location = Path::from("u/_delta_log/00000000000000000003.json");
        assert_eq!(kept.get(&moved), None);
        let mut a = f.clone();
        a.store_version = Some(dar_io::ObjectVersion::Tag("\"a\"".into()));
        let mut b = KeptCommitsBuilder::for_files(std::slice::from_ref(&a));
        b.keep(&a, &Bytes::from_static(b"abcd"));
        let kept = b.finish();
        let mut other = a.clone();
        other.store_version = Some(dar_io::ObjectVersion::Tag("\"b\"".into()));
        assert_eq!(kept.get(&other), None);
        assert!(kept.get(&a).is_some());
    }

    #[test]
    fn a_log_tail_over_the_budget_keeps_nothing() {
        let big = [commit(0, KEPT_COMMIT_BYTES), commit(1, 1)];
        let mut b = KeptCommitsBuilder::for_files(&big);
        b.keep(&big[1], &Bytes::from_static(b"x"));
        assert!(b.finish().is_empty());
    }
}
