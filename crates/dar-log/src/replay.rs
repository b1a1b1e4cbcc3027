//! Reconciliation, newest first (protocol digest §2.10).
//!
//! ```text
//! seen := {}                      // (path, dvUniqueId), filled from COMMITS only;
//!                                 // paths canonical URIs (crate::paths)
//! for commit in target, target-1, ..., cp+1:
//!     add(k)    -> if seen.insert(k) { keep }
//!                  (k added before in this same file: read once when the
//!                  two adds agree, else an error: crate::duplicates)
//!     remove(k) -> seen.insert(k) once the commit is done (an add of k in
//!                  the same commit stays live, whatever the order; in a
//!                  compaction file, a run of commits, at once)
//!     protocol / metaData / txn / domain: first (= newest) wins
//! checkpoint (or the previous snapshot, for refresh):
//!     add(k)    -> keep unless k in seen (a checkpoint's rows are unique:
//!                  crate::checkpoint checks them the same way)
//! drop domains whose newest action is a tombstone
//! ```

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;

use crate::actions::{CommitInfo, DomainMetadata, Metadata, Protocol, Txn};
use crate::add_columns::{AddColumns, AddColumnsBuilder, SeenAt, SeenKeys};
use crate::checkpoint::{CheckpointIo, append_add_line, read_checkpoint};
use crate::commit::{Action, commit_info, parse_actions};
use crate::duplicates::repeated_commit_add;
use crate::error::{LogError, Result};
use crate::listing::{
    KeptCommits, KeptCommitsBuilder, LogFile, LogFileKind, LogSegment, read_log_file,
};
use crate::paths::TablePaths;

/// How many bytes of commit files may be in flight ahead of the one being
/// parsed: within this, up to [`MAX_COMMIT_READAHEAD`] files.
const COMMIT_READAHEAD_BYTES: u64 = 64 << 20;

/// At most this many commit files in flight (at least 8): on object
/// storage each read is a round trip, so a log of many small commits
/// since the last checkpoint is read in a few rounds, not one per 8.
pub(crate) const MAX_COMMIT_READAHEAD: usize = 64;

/// At most this many commit files in flight where the store's cost model
/// says each read is a round trip (see [`CheckpointIo::reads_are_round_trips`]):
/// a replay of a long commit tail (hundreds of small commits) then takes
/// one or two rounds, not one per 64.
pub(crate) const MAX_REMOTE_COMMIT_READAHEAD: usize = 256;

/// Commit files to keep in flight for `commits`: as many as fit the byte
/// budget at their mean size, 8 to `max`.
pub(crate) fn commit_readahead(commits: &[LogFile], max: usize) -> usize {
    let n = commits.len().max(1) as u64;
    let mean = (commits.iter().map(|f| f.size).sum::<u64>() / n).max(1);
    usize::try_from(COMMIT_READAHEAD_BYTES / mean)
        .unwrap_or(usize::MAX)
        .clamp(8, max.max(8))
}

/// The reconciled state at one version.
#[derive(Debug, Clone)]
pub struct ReplayState {
    /// The version.
    pub version: u64,
    /// Latest protocol.
    pub protocol: Protocol,
    /// Latest metadata.
    pub metadata: Metadata,
    /// Newest txn per app id.
    pub txns: HashMap<String, Txn>,
    /// Live domains (tombstones dropped).
    pub domains: HashMap<String, DomainMetadata>,
    /// `commitInfo` of the commit at `version`, when replay read that commit
    /// (never when a checkpoint at `version` covers it: covered commits are
    /// not read, see [`crate::Snapshot::commit_info`]).
    pub commit_info: Option<CommitInfo>,
    /// The commit file at `version`, when the listing holds it (also when a
    /// checkpoint covers it): its modification time is the commit's file
    /// time, and its `commitInfo` is read on demand.
    pub commit_file: Option<LogFile>,
    /// Live adds, as raw column batches.
    pub adds: Vec<AddColumns>,
    /// The commit files this replay read (or was handed), when they fit
    /// [`crate::listing::KEPT_COMMIT_BYTES`]: a change feed on this state
    /// reads them from here.
    pub kept_commits: KeptCommits,
    /// The version of the checkpoint this state was rebuilt from (`None`:
    /// from version 0).
    pub checkpoint_version: Option<u64>,
    /// The log files this state was rebuilt from, as a listing from its
    /// checkpoint (see [`LogSegment::as_listing`]): a change feed whose
    /// range they cover lists nothing again. `None` past
    /// [`crate::listing::KEPT_LISTING_FILES`].
    pub listing: Option<Arc<[LogFile]>>,
}

/// Accumulates state while walking commits newest first.
struct Replayer<'p> {
    paths: &'p TablePaths,
    seen: SeenKeys,
    /// Log files read so far (their number in [`SeenAt`]).
    files_read: u32,
    adds: AddColumnsBuilder,
    protocol: Option<Protocol>,
    metadata: Option<Metadata>,
    txns: HashMap<String, Txn>,
    domains: HashMap<String, DomainMetadata>,
    commit_info: Option<CommitInfo>,
    /// Commit files already in hand: not read again.
    known: KeptCommits,
    /// The commit files of this replay, kept for a later reader.
    kept: KeptCommitsBuilder,
}

/// The bytes of the commit (or compaction) file `f`: from `known` when it
/// holds that file, else read; an empty file is an error naming it.
pub(crate) async fn read_commit_file(
    store: &dyn ObjectStore,
    known: &KeptCommits,
    f: &LogFile,
) -> Result<Bytes> {
    if let Some(bytes) = known.get(f) {
        return Ok(bytes);
    }
    let path = f.location.to_string();
    let bytes = read_log_file(store, f).await?;
    if bytes.is_empty() {
        return Err(LogError::EmptyCommit { path });
    }
    Ok(bytes)
}

impl<'p> Replayer<'p> {
    fn new(paths: &'p TablePaths, known: &KeptCommits) -> Self {
        Self {
            paths,
            seen: SeenKeys::default(),
            files_read: 0,
            adds: AddColumnsBuilder::default(),
            protocol: None,
            metadata: None,
            txns: HashMap::new(),
            domains: HashMap::new(),
            commit_info: None,
            known: known.clone(),
            kept: KeptCommitsBuilder::default(),
        }
    }

    /// Apply the commits of `commits` (ascending in the slice) newest first.
    /// A compaction file counts as one commit: its removes shadow older adds,
    /// its adds are kept unless a newer commit saw the key.
    async fn commits(
        &mut self,
        store: &Arc<dyn ObjectStore>,
        commits: &[LogFile],
        version: u64,
        max_ahead: usize,
    ) -> Result<()> {
        // A commit line of an add without stats is ~150 bytes; sizing the
        // builders and the key set from the bytes to read avoids regrowing
        // (and copying) them on large logs. Overestimates cost address
        // space only.
        let bytes: u64 = commits.iter().map(|f| f.size).sum();
        let rows = usize::try_from(bytes / 150).unwrap_or(0);
        if self.adds.is_empty() && rows > 1024 {
            self.adds = AddColumnsBuilder::with_capacity(rows, rows * 32);
            self.seen.reserve(rows);
        }
        // The read-ahead futures own what they use (a store handle and the
        // file's index): borrowing closures here made every future that
        // awaits a replay (`Snapshot::load`, `dar_scan::Table::open`) fail
        // rustc's `Send` check ("`FnOnce` is not general enough").
        self.kept = KeptCommitsBuilder::for_files(commits);
        let known = self.known.clone();
        let fetches = (0..commits.len()).rev().map(|i| {
            let store = Arc::clone(store);
            let known = known.clone();
            let f = commits[i].clone();
            async move {
                read_commit_file(store.as_ref(), &known, &f)
                    .await
                    .map(|b| (i, b))
            }
        });
        let mut stream =
            futures::stream::iter(fetches).buffered(commit_readahead(commits, max_ahead));
        while let Some((i, bytes)) = stream.try_next().await? {
            let f = &commits[i];
            // A compaction holds no commitInfo, and never ends at `version`.
            let is_target = f.kind == LogFileKind::Commit && f.version == version;
            self.commit(f, &bytes, is_target)?;
            self.kept.keep(f, &bytes);
        }
        Ok(())
    }

    fn commit(&mut self, f: &LogFile, bytes: &[u8], is_target: bool) -> Result<()> {
        let path = f.location.to_string();
        // A commit's removes shadow older commits only: an `add` and a
        // `remove` of one logical file in the same commit (a DV "replaced" by
        // an identical one) leave the file live, whatever their order. A
        // compaction file is a run of commits, newest first, in file order:
        // its removes take effect at once.
        let defer_removes = f.kind == LogFileKind::Commit;
        let file = self.files_read;
        self.files_read = self.files_read.saturating_add(1);
        let mut removed = Vec::new();
        parse_actions(&path, bytes, |line, action| {
            match action {
                Action::Add(a) => {
                    let dv = a.deletion_vector.as_ref().map(|d| d.key_parts());
                    let (key, plain) = self.paths.file_key_and_plainness(&a.path, dv)?;
                    match self.seen.entry(key) {
                        Entry::Vacant(e) => {
                            e.insert(SeenAt::add(file, line));
                            append_add_line(&mut self.adds, &a, &path, line, plain)?;
                        }
                        // A newer file's action shadows this add; a second
                        // add in this file is read once, if it agrees.
                        Entry::Occupied(e) => {
                            if let Some(first) = e.get().add_line_in(file) {
                                repeated_commit_add(f, bytes, first, line, &a)?;
                            }
                        }
                    }
                }
                Action::Remove(r) => {
                    let dv = r.deletion_vector.as_ref().map(|d| d.key_parts());
                    let key = self.paths.file_key(&r.path, dv)?;
                    if defer_removes {
                        removed.push(key);
                    } else {
                        self.seen.entry(key).or_insert(SeenAt::remove(file));
                    }
                }
                Action::Protocol(p) => {
                    self.protocol.get_or_insert(p);
                }
                Action::Metadata(m) => {
                    self.metadata.get_or_insert(*m);
                }
                Action::Txn(t) => {
                    self.txns.entry(t.app_id.clone()).or_insert(t);
                }
                Action::DomainMetadata(d) => {
                    self.domains.entry(d.domain.clone()).or_insert(d);
                }
                Action::CommitInfo(raw) if is_target => {
                    self.commit_info = Some(commit_info(&path, line, raw)?);
                }
                // checkpointMetadata / sidecar are invalid in commits: ignore.
                Action::CommitInfo(_) | Action::Sidecar(_) | Action::Cdc(_) => {}
            }
            Ok(())
        })?;
        for key in removed {
            self.seen.entry(key).or_insert(SeenAt::remove(file));
        }
        Ok(())
    }

    /// Fold in an older, already reconciled state (a checkpoint or a previous snapshot).
    fn older(
        &mut self,
        protocol: Option<Protocol>,
        metadata: Option<Metadata>,
        txns: impl IntoIterator<Item = Txn>,
        domains: impl IntoIterator<Item = DomainMetadata>,
        adds: Vec<AddColumns>,
    ) -> Result<Vec<AddColumns>> {
        if self.protocol.is_none() {
            self.protocol = protocol;
        }
        if self.metadata.is_none() {
            self.metadata = metadata;
        }
        for t in txns {
            self.txns.entry(t.app_id.clone()).or_insert(t);
        }
        for d in domains {
            self.domains.entry(d.domain.clone()).or_insert(d);
        }
        // Each batch is dropped once filtered: no second copy of them all.
        adds.into_iter()
            .map(|a| a.without(&self.seen, self.paths))
            .filter(|a| a.as_ref().map_or(true, |a| !a.is_empty()))
            .collect()
    }

    fn finish(
        self,
        seg_log_dir: &str,
        version: u64,
        commit_file: Option<LogFile>,
        older_adds: Vec<AddColumns>,
        checkpoint_version: Option<u64>,
        listing: Option<Arc<[LogFile]>>,
    ) -> Result<ReplayState> {
        let protocol = self.protocol.ok_or_else(|| LogError::MissingProtocol {
            log_dir: seg_log_dir.to_string(),
            version,
        })?;
        let metadata = self.metadata.ok_or_else(|| LogError::MissingMetadata {
            log_dir: seg_log_dir.to_string(),
            version,
        })?;
        let mut adds = Vec::with_capacity(older_adds.len() + 1);
        if !self.adds.is_empty() {
            adds.push(self.adds.finish());
        }
        adds.extend(older_adds);
        let mut domains = self.domains;
        domains.retain(|_, d| !d.removed);
        Ok(ReplayState {
            version,
            protocol,
            metadata,
            txns: self.txns,
            domains,
            commit_info: self.commit_info,
            commit_file,
            adds,
            kept_commits: self.kept.finish(),
            checkpoint_version,
            listing,
        })
    }
}

/// Replay a segment: its commits newest first (with `use_compaction`, log
/// compaction files standing in for runs of them, see
/// [`LogSegment::replay_files`]), then its checkpoint. No commit that the
/// checkpoint covers is read, not even the one at its version (protocol
/// digest §1.3): real tables exist whose covered commits are incomplete.
/// Checkpoint Parquet is read through `io`; a commit file `known` holds
/// is taken from it, not read.
pub async fn replay_segment(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    paths: &TablePaths,
    seg: &LogSegment,
    use_compaction: bool,
    known: &KeptCommits,
) -> Result<ReplayState> {
    let mut r = Replayer::new(paths, known);
    let max_ahead = if io.reads_are_round_trips() {
        MAX_REMOTE_COMMIT_READAHEAD
    } else {
        MAX_COMMIT_READAHEAD
    };
    r.commits(
        store,
        &seg.replay_files(use_compaction),
        seg.version,
        max_ahead,
    )
    .await?;
    let log_dir = seg.log_dir.to_string();
    let older = match &seg.checkpoint {
        Some(cp) => {
            // The checkpoint's parts filter their own adds (in parallel);
            // nothing is left for `older` to filter.
            let removed = Arc::new(std::mem::take(&mut r.seen));
            let newer = (r.protocol.as_ref(), r.metadata.as_ref());
            let content = read_checkpoint(store, io, paths, cp, &removed, newer).await?;
            r.older(
                content.protocol,
                content.metadata,
                content.txns,
                content.domains,
                content.adds,
            )?
        }
        None => Vec::new(),
    };
    let checkpoint = seg.checkpoint.as_ref().map(|c| c.version);
    r.finish(
        &log_dir,
        seg.version,
        seg.version_commit.clone(),
        older,
        checkpoint,
        seg.as_listing(),
    )
}

/// Replay only `commits` (ascending, directly after `old.version`) onto `old`.
pub async fn replay_onto(
    store: &Arc<dyn ObjectStore>,
    paths: &TablePaths,
    log_dir: &str,
    old: &ReplayState,
    commits: &[LogFile],
) -> Result<ReplayState> {
    let Some(last) = commits.last() else {
        return Ok(old.clone());
    };
    let mut r = Replayer::new(paths, &KeptCommits::default());
    r.commits(store, commits, last.version, MAX_COMMIT_READAHEAD)
        .await?;
    let older = r.older(
        Some(old.protocol.clone()),
        Some(old.metadata.clone()),
        old.txns.values().cloned(),
        old.domains.values().cloned(),
        old.adds.clone(),
    )?;
    // The old listing and the new commits: a listing from the same
    // checkpoint.
    let listing = old.listing.as_ref().and_then(|l| {
        let files = l.len() + commits.len();
        (files <= crate::listing::KEPT_LISTING_FILES)
            .then(|| l.iter().chain(commits).cloned().collect::<Arc<[LogFile]>>())
    });
    r.finish(
        log_dir,
        last.version,
        Some(last.clone()),
        older,
        old.checkpoint_version,
        listing,
    )
}
