//! Listing `_delta_log/`: the `_last_checkpoint` hint, a listing that starts
//! at the hint, and the segment that rebuilds a version.

mod compaction;
mod kept;
mod name;
mod segment;

use futures::TryStreamExt;
use futures::future::Either;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use serde::Deserialize;

pub(crate) use kept::KeptCommitsBuilder;
pub use kept::{KEPT_COMMIT_BYTES, KeptCommits};
pub use name::{LogFileKind, ParsedName, pad20, parse_log_file_name};
pub use segment::{CheckpointFiles, CheckpointFormat, KEPT_LISTING_FILES, LogFile, LogSegment};

use crate::error::{LogError, Result};

/// The fields of `_last_checkpoint` this reader uses (protocol digest §1.5).
#[derive(Debug, Clone, Deserialize)]
pub struct LastCheckpointHint {
    /// Checkpoint version.
    pub version: u64,
    /// Number of parts, when multi-part.
    #[serde(default)]
    pub parts: Option<u32>,
}

/// The `_delta_log/` prefix of a table root.
pub fn log_dir(root: &Path) -> Path {
    root.clone().join("_delta_log")
}

/// Read `_last_checkpoint`. Missing or unparseable means no hint (it is only a hint).
pub async fn read_hint(
    store: &dyn ObjectStore,
    log_dir: &Path,
) -> Result<Option<LastCheckpointHint>> {
    let path = log_dir.clone().join("_last_checkpoint");
    let bytes = match store.get(&path).await {
        Ok(r) => r.bytes().await,
        Err(e) => Err(e),
    };
    match bytes {
        Ok(b) => Ok(serde_json::from_slice(&b).ok()),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(LogError::store(path.to_string(), e)),
    }
}

/// Read one log file (commit or JSON checkpoint) whole; a store failure names
/// the file.
pub(crate) async fn read_log_file(store: &dyn ObjectStore, f: &LogFile) -> Result<bytes::Bytes> {
    let store_err = |e| LogError::store(f.location.to_string(), e);
    store
        .get(&f.location)
        .await
        .map_err(store_err)?
        .bytes()
        .await
        .map_err(store_err)
}

/// List the log files of version `from` and above, sorted by version.
pub async fn list_log(store: &dyn ObjectStore, log_dir: &Path, from: u64) -> Result<Vec<LogFile>> {
    let prefix = format!("{log_dir}/");
    let stream = if from == 0 {
        store.list(Some(log_dir))
    } else {
        // Keys sort by version thanks to zero padding; the bare digits sort
        // before every file of that version.
        let offset = Path::from(format!("{prefix}{}", pad20(from)));
        store.list_with_offset(Some(log_dir), &offset)
    };
    let metas: Vec<_> = stream
        .try_collect()
        .await
        .map_err(|e| LogError::store(log_dir.to_string(), e))?;
    let mut files: Vec<LogFile> = metas
        .into_iter()
        .filter_map(|m| {
            let key = m.location.as_ref();
            let name = key.strip_prefix(prefix.as_str())?;
            // Sub-directories (`_sidecars/`, `_staged_commits/`) are not log files.
            let parsed = parse_log_file_name(name)?;
            (parsed.version >= from).then(|| LogFile {
                version: parsed.version,
                kind: parsed.kind,
                size: m.size,
                last_modified_ms: m.last_modified.timestamp_millis(),
                // Only a tag the store also answers reads with (some
                // S3-compatible servers list none).
                store_version: (m.e_tag.is_some() || m.version.is_some())
                    .then(|| dar_io::ObjectVersion::of(&m)),
                location: m.location,
            })
        })
        .collect();
    // Local file systems list unsorted.
    files.sort_by(|a, b| a.location.as_ref().cmp(b.location.as_ref()));
    Ok(files)
}

/// Find the segment that rebuilds `target` (latest when `None`).
///
/// The `_last_checkpoint` hint and a listing of the whole log are requested
/// at once. A short log's listing arrives in the same round trip as the
/// hint and is used directly (the segment finds the newest checkpoint
/// itself), so opening costs one round instead of two. When the hint comes
/// first, a listing from the hint races the full one; a long log's full
/// listing then loses and is dropped. A hint that is stale in the wrong
/// direction or points at a missing or incomplete checkpoint falls back to
/// the full listing.
pub async fn find_segment(
    store: &dyn ObjectStore,
    root: &Path,
    target: Option<u64>,
) -> Result<LogSegment> {
    let dir = log_dir(root);
    let (list_dir, hint_dir) = (dir.clone(), dir.clone());
    let mut full = std::pin::pin!(list_log(store, &list_dir, 0));
    let hint = std::pin::pin!(read_hint(store, &hint_dir));
    let (hint, mut full_failed) = match futures::future::select(full.as_mut(), hint).await {
        Either::Left((Ok(files), _)) => return LogSegment::build(dir, &files, target),
        // A failed full listing: the hint may still avoid it.
        Either::Left((Err(_), hint)) => (hint.await?, true),
        Either::Right((hint, _)) => (hint?, false),
    };
    let hint = hint.filter(|h| target.is_none_or(|t| h.version <= t));
    if let Some(hint) = hint
        && hint.version > 0
    {
        // The full listing may still finish first (a short log): then the
        // listing from the hint is not waited for.
        let hinted = std::pin::pin!(list_log(store, &dir, hint.version));
        let files = if full_failed {
            hinted.await?
        } else {
            match futures::future::select(full.as_mut(), hinted).await {
                Either::Left((Ok(files), _)) => {
                    return LogSegment::build(dir.clone(), &files, target);
                }
                Either::Left((Err(_), hinted)) => {
                    full_failed = true;
                    hinted.await?
                }
                Either::Right((files, _)) => files?,
            }
        };
        let has_checkpoint = files.iter().any(|f| f.size > 0 && f.kind.is_checkpoint());
        if has_checkpoint {
            match LogSegment::build(dir.clone(), &files, target) {
                Ok(seg) if seg.checkpoint.is_some() => return Ok(seg),
                // The hinted checkpoint is incomplete: look further back.
                // A version that is not there is reported from the full
                // listing, so its message names the same earliest version
                // however the two listings raced.
                Ok(_)
                | Err(LogError::TruncatedHistory { .. } | LogError::VersionNotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    // The full listing still in flight, or a fresh one if it failed.
    let files = if full_failed {
        list_log(store, &dir, 0).await?
    } else {
        full.await?
    };
    LogSegment::build(dir, &files, target)
}
