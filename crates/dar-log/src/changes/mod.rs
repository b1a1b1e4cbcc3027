//! The change data feed (protocol digest §12): which rows changed in each
//! commit of a version range, as typed per-file values.
//!
//! ```text
//! ChangeFeed::open (range.rs)
//!   the open table's checkpoint (else _last_checkpoint's) ─► list
//!   │   _delta_log from it when it is at or before the start (else from
//!   │   version 0; from 0 for timestamp bounds, whose file times need
//!   │   every earlier commit)
//!   ├─ the latest configuration (the open table's snapshot when it is it)
//!   ├─ bounds: versions, or timestamps through the one history
//!   │  (crate::history): a start is the first commit at or after it (past
//!   │  the last commit: an error), an end the last at or before it (past
//!   │  the last commit: the latest version)
//!   └─ the end's configuration: readable; its schema is the feed's
//! ChangeFeed::commits (commit.rs)
//!   the state before the start, replayed (the start checks need it)
//!   ▼
//! commits start..=end (those the open table's replay kept are not read
//!   again), read ahead (64 MiB, 8-64 files), each parsed once
//!   and dropped, in order: its protocol and metadata evolve the
//!   configuration (TableConfiguration::evolve), which at the start and at
//!   each change must keep the feed on and a schema the end's reads; its
//!   timestamp is its in-commit timestamp where in-commit timestamps are on
//!   at that commit, else its file time ─► CommitChanges { version,
//!   timestamp, files (a FileIndex typed against the end schema), per
//!   file: source (cdc │ insert │ delete, select.rs) and the paired DV of
//!   a replaced DV }
//! ```
//!
//! The rules, per commit (select.rs):
//! - a commit with `cdc` actions yields the rows of its `cdc` files (which
//!   store `_change_type`) and nothing of its adds and removes;
//! - otherwise every `add` with `dataChange` yields inserts (the rows its
//!   DV keeps) and every `remove` with `dataChange` deletes (the rows its
//!   DV kept);
//! - an `add` and a `remove` of one path in one commit replace that file's
//!   DV: rows the new DV deletes and the old did not are deletes, rows the
//!   old DV deleted and the new does not are inserts; never the whole file;
//! - a `metaData` in the range must keep the feed on and a schema the end
//!   schema can read (`schema::compatibility`); a `protocol` must stay
//!   readable.

mod commit;
mod range;
mod select;

use std::sync::Arc;

use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::ObjectStore;

use crate::actions::Metadata;
use crate::checkpoint::CheckpointIo;
use crate::error::Result;
use crate::file_index::FileIndex;
use crate::listing::{KeptCommits, LogFile};
use crate::paths::TablePaths;
use crate::replay::{MAX_COMMIT_READAHEAD, commit_readahead, read_commit_file};
use crate::schema::{ColumnMappingMode, StructType};
use crate::table_configuration::TableConfiguration;

pub use crate::table_configuration::ENABLE_CDF_KEY;

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
    /// at or after it (after the last commit: an error); as an end, the
    /// last commit at or before it (after the last commit: the latest).
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
    /// Its commit timestamp, ms since the epoch: its in-commit timestamp
    /// when in-commit timestamps are on at this commit (by the
    /// configuration in force at it, not at the end), else its file's
    /// modification time, monotonized over the commits listed before it.
    pub timestamp_ms: i64,
    /// One row per change file, in the commit's action order.
    pub files: FileIndex,
    /// Per file: where its rows come from.
    pub sources: Vec<ChangeSource>,
    /// Per file: for one side of a replaced DV, the other side's DV: only
    /// the rows that DV deletes (and the file's own DV does not) change.
    pub paired_dv: Vec<Option<dar_dv::DvDescriptor>>,
}

/// A resolved change range of a table, ready to stream its commits.
#[derive(Debug, Clone)]
pub struct ChangeFeed {
    store: Arc<dyn ObjectStore>,
    paths: TablePaths,
    /// How checkpoints are read (for the state before the start).
    io: CheckpointIo,
    start: u64,
    end: u64,
    /// Commit files `start..=end`, ascending, one per version.
    commits: Arc<Vec<LogFile>>,
    /// Monotonized file times of `commits` (unused where ICT applies).
    file_times: Arc<Vec<i64>>,
    /// The listing the range came from (from a checkpoint at or before the
    /// start, or from version 0), to replay the state before the start.
    listing: Arc<Vec<LogFile>>,
    /// The configuration at the end version: its schema is the feed's.
    end_config: Arc<TableConfiguration>,
    /// Commit files already read (by the open table's replay): taken from
    /// here, not read again.
    read: KeptCommits,
}

impl ChangeFeed {
    /// Resolves the change range `start..=end` (`end` defaults to the
    /// latest version) of the table at `paths` in `store`, reads the
    /// configuration at its end and checks that a feed can be read.
    ///
    /// # Errors
    ///
    /// [`LogError::ChangeRange`] for a start after the end or beyond the
    /// latest version, a start timestamp after the last commit or an end
    /// timestamp before the first; [`LogError::ChangeCommitMissing`] when a
    /// commit of the range is no longer in the log;
    /// [`LogError::ChangeFeedSchema`] for an end schema that takes a change
    /// column's name; any error of replaying the end state. The feed off,
    /// or a schema the end's cannot read, at the start or at a commit of
    /// the range is an error of [`ChangeFeed::commits`], naming that
    /// version.
    ///
    /// [`LogError::ChangeRange`]: crate::LogError::ChangeRange
    /// [`LogError::ChangeCommitMissing`]: crate::LogError::ChangeCommitMissing
    /// [`LogError::ChangeFeedSchema`]: crate::LogError::ChangeFeedSchema
    pub async fn open(
        store: Arc<dyn ObjectStore>,
        paths: TablePaths,
        io: &CheckpointIo,
        start: ChangeBound,
        end: Option<ChangeBound>,
    ) -> Result<Self> {
        range::open(store, paths, io, start, end, None).await
    }

    /// [`ChangeFeed::open`] for the table of `snapshot`: when the snapshot
    /// is still the latest version, its configuration stands for the
    /// latest state, so the log is not replayed a second time; the
    /// commit files its replay read (within
    /// [`crate::listing::KEPT_COMMIT_BYTES`]) are not read again; and its
    /// checkpoint stands for `_last_checkpoint` (the log is listed from it
    /// when it is at or before the start, else from version 0).
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
        range::open(
            Arc::clone(snapshot.store()),
            snapshot.paths().clone(),
            io,
            start,
            end,
            Some(range::OpenTable {
                config: snapshot.table_configuration(),
                kept: snapshot.kept_commits().clone(),
                checkpoint: snapshot.checkpoint_version(),
                listing: snapshot.listing().cloned(),
            }),
        )
        .await
    }

    /// The first version of the range.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The last version of the range.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The configuration at the end version.
    pub fn table_configuration(&self) -> &TableConfiguration {
        &self.end_config
    }

    /// The schema at the end version (the feed's columns).
    pub fn schema(&self) -> &StructType {
        self.end_config.schema()
    }

    /// The column-mapping mode at the end version.
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.end_config.column_mapping_mode()
    }

    /// The metadata at the end version.
    pub fn metadata(&self) -> &Metadata {
        self.end_config.metadata()
    }

    /// Number of commits in the range.
    pub fn num_commits(&self) -> usize {
        self.commits.len()
    }

    /// The commits of the range as a stream, ascending: the state before
    /// the start replayed first, then each commit file read (8 ahead,
    /// concurrently), parsed once into its [`CommitChanges`] and dropped.
    /// The feed off or an unreadable schema at the start is the first
    /// item, an error naming the start; a `metaData` or `protocol` that
    /// ends the feed's readability is an error naming its version, after
    /// the commits before it.
    pub fn commits(&self) -> BoxStream<'static, Result<CommitChanges>> {
        self.commits_ahead(COMMIT_READAHEAD)
    }

    /// [`ChangeFeed::commits`] with up to `ahead` commit files in flight
    /// (at least one, and no more than 64 MiB of them at their mean size):
    /// on object storage, where each read is a round trip, as many as a
    /// scan has files in flight. Reads stay at most that far ahead of the
    /// commit being consumed.
    pub fn commits_ahead(&self, ahead: usize) -> BoxStream<'static, Result<CommitChanges>> {
        let feed = Arc::new(self.clone());
        let ahead = ahead.clamp(1, commit_readahead(&self.commits, MAX_COMMIT_READAHEAD));
        let before = Arc::clone(&feed);
        futures::stream::once(async move { before.state_before_start().await })
            .map_ok(move |before| {
                let reads = futures::stream::iter((0..feed.commits.len()).map({
                    let feed = Arc::clone(&feed);
                    move |i| {
                        let feed = Arc::clone(&feed);
                        async move { feed.read_commit(i).await.map(|bytes| (i, bytes)) }
                    }
                }))
                .buffered(ahead);
                let reader = commit::CommitReader::new(Arc::clone(&feed), before);
                futures::stream::try_unfold((reads, reader), |(mut reads, mut reader)| async move {
                    let Some((i, bytes)) = reads.try_next().await? else {
                        return Ok(None);
                    };
                    let changes = reader.read(i, &bytes)?;
                    Ok(Some((changes, (reads, reader))))
                })
            })
            .try_flatten()
            .boxed()
    }

    /// The bytes of commit `i` of the range (kept ones are not read).
    async fn read_commit(&self, i: usize) -> Result<bytes::Bytes> {
        read_commit_file(self.store.as_ref(), &self.read, &self.commits[i]).await
    }
}
