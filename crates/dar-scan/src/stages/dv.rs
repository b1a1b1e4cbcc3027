//! Stage 5: the file's deletion vector, through the table's shared
//! [`dar_dv::DvCache`] (no I/O for inline or empty DVs). Files whose DVs
//! share a DV file get their bytes from one planned read of that file
//! ([`DvFiles`]): Delta writes the DVs of one commit into one file, so a
//! scan of 200 files with DVs costs one request, not 200.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use dar_dv::{DeletedRows, DvDescriptor, StorageType};
use dar_io::ObjectClass;
use object_store::ObjectStoreExt;
use object_store::path::Path;
use tokio::sync::OnceCell;

use crate::context::ScanContext;
use crate::error::{Result, ScanError};
use crate::metrics::Stage;
use crate::task::ScanTask;

/// DV bytes of one file held for a scan at most; a DV file with more is
/// read DV by DV.
const MAX_SHARED_READ_BYTES: u64 = 16 * 1024 * 1024;

/// The DVs of one DV file that a scan's files need, read together once.
#[derive(Debug, Default)]
struct SharedRead {
    ranges: Vec<Range<u64>>,
    /// `ranges` as a set: a plan and its subsets register the same DVs.
    registered: HashSet<(u64, u64)>,
    bytes: u64,
    fetched: OnceCell<Vec<(Range<u64>, Bytes)>>,
}

/// One planned read per DV file for all the files of a scan that need it.
#[derive(Debug, Default)]
pub(crate) struct DvFiles {
    files: Mutex<HashMap<Path, Arc<SharedRead>>>,
}

impl DvFiles {
    /// Notes the DVs of `tasks`, so that the first file to need a DV of a
    /// DV file fetches those of all of them at once. A DV noted twice is
    /// read once.
    pub(crate) fn register(&self, ctx: &ScanContext, tasks: &[ScanTask]) {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        for task in tasks {
            let Ok(Some((dv, location))) = locate(ctx, task, task.num_records) else {
                continue;
            };
            if dv.storage_type() == StorageType::Inline || dv.is_empty() {
                continue;
            }
            let range = dar_dv::fetch_range(&dv);
            let read = files.entry(location).or_default();
            // Already being read: later DVs are read on their own.
            let Some(read) = Arc::get_mut(read).filter(|r| !r.fetched.initialized()) else {
                continue;
            };
            let len = range.end - range.start;
            if read.bytes + len <= MAX_SHARED_READ_BYTES
                && read.registered.insert((range.start, range.end))
            {
                read.bytes += len;
                read.ranges.push(range);
            }
        }
    }

    fn shared(&self, location: &Path) -> Option<Arc<SharedRead>> {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files
            .get(location)
            .filter(|r| !r.ranges.is_empty())
            .cloned()
    }
}

/// `range` of the DV file at `location`: from the scan's shared read of
/// that file when it covers the range, else one ranged read.
async fn dv_bytes(
    ctx: &ScanContext,
    location: &Path,
    range: Range<u64>,
) -> object_store::Result<Bytes> {
    let store = ctx.inner.runtime.store.store();
    if let Some(read) = ctx.inner.dv_files.shared(location) {
        let params = ctx.inner.runtime.store.cost_model().params();
        let fetched = read
            .fetched
            .get_or_try_init(|| async {
                let buffers = dar_io::fetch_ranges(
                    store,
                    location,
                    &read.ranges,
                    &params,
                    ObjectClass::DeletionVector,
                )
                .await
                .map_err(|e| object_store::Error::Generic {
                    store: "dar",
                    source: Box::new(e),
                })?;
                Ok::<_, object_store::Error>(read.ranges.iter().cloned().zip(buffers).collect())
            })
            .await?;
        if let Some((r, b)) = fetched
            .iter()
            .find(|(r, _)| r.start <= range.start && range.end <= r.end)
        {
            let from = (range.start - r.start) as usize;
            return Ok(b.slice(from..from + (range.end - range.start) as usize));
        }
    }
    store.get_range(location, range).await
}

/// `task`'s DV descriptor (bounded by `file_rows` when known) and the
/// store path of its DV file (empty for inline DVs); `None` without a DV.
fn locate(
    ctx: &ScanContext,
    task: &ScanTask,
    file_rows: Option<u64>,
) -> Result<Option<(DvDescriptor, Path)>> {
    let Some(info) = &task.deletion_vector else {
        return Ok(None);
    };
    let err = |source| ScanError::DeletionVector {
        path: task.object_path.clone(),
        source: Box::new(source),
    };
    let mut dv = DvDescriptor::try_new(
        &info.storage_type,
        info.path_or_inline_dv.clone(),
        info.offset.map(i64::from),
        i64::from(info.size_in_bytes),
        info.cardinality,
    )
    .map_err(err)?;
    if let Some(rows) = file_rows {
        dv = dv.with_row_count(rows);
    }
    let store = &ctx.inner.runtime.store;
    let location = match dv.uuid_and_prefix().map_err(err)? {
        Some((uuid, prefix)) => {
            let name = format!("deletion_vector_{uuid}.bin");
            if prefix.is_empty() {
                store.child(&name)
            } else {
                store.child(&format!("{prefix}/{name}"))
            }
        }
        None => match dv.file_url(store.url()).map_err(err)? {
            // `p`: an absolute URI, which must be on the table's store.
            Some(url) => dar_dv::store_path(&dv, store.url(), &url).map_err(err)?,
            None => Path::default(),
        },
    };
    if ctx.inner.runtime.confine_to_root
        && !location.as_ref().is_empty()
        && !ctx.inner.is_inside_root(location.as_ref())
    {
        return Err(ScanError::OutsideRoot {
            what: "deletion vector",
            path: info.path_or_inline_dv.clone(),
        });
    }
    Ok(Some((dv, location)))
}

/// The deleted rows of `task`'s file (`None` without a DV). `file_rows` is
/// the file's row count: a deleted index at or past it is an error.
pub(crate) async fn load(
    ctx: &ScanContext,
    task: &ScanTask,
    file_rows: u64,
) -> Result<Option<Arc<DeletedRows>>> {
    let Some((dv, location)) = locate(ctx, task, Some(file_rows))? else {
        return Ok(None);
    };
    let _t = ctx.inner.metrics.time(Stage::DeletionVector);
    let rows = ctx
        .inner
        .runtime
        .dv_cache
        .load_at_with(&location, &dv, |range| dv_bytes(ctx, &location, range))
        .await
        .map_err(|source| ScanError::DeletionVector {
            path: task.object_path.clone(),
            source: Box::new(source),
        })?;
    Ok(Some(rows))
}
