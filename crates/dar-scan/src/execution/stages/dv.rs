//! Stage 5: the file's deletion vector, through the table's shared
//! [`dar_dv::DvCache`] (no I/O for inline or empty DVs). Files whose DVs
//! share a DV file get their bytes from one planned read of that file
//! ([`crate::execution::running::DvFiles`], noted once per plan by [`note`]).

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use dar_dv::{DeletedRows, DvDescriptor, StorageType};
use dar_io::ObjectClass;
use object_store::path::Path;

use crate::errors::error::{Result, ScanError};
use crate::execution::metrics::Stage;
use crate::execution::running::{DvFiles, RunningScan, SharedRead};
use crate::execution::runtime::ScanRuntime;
use crate::planning::task::ScanTask;

/// Notes the DVs of `tasks` kept in DV files, so that the first file to
/// need one fetches those of all of them at once.
pub(crate) fn note(tasks: &[ScanTask], runtime: &ScanRuntime, dv_files: &DvFiles) {
    let in_files = |(dv, location): (DvDescriptor, Path)| {
        (dv.storage_type() != StorageType::Inline && !dv.is_empty())
            .then(|| (location, dar_dv::fetch_range(&dv)))
    };
    dv_files.note(tasks.iter().flat_map(|task| {
        // A change data feed's replaced DV: the other side's too.
        let paired = task
            .paired_dv
            .as_ref()
            .and_then(|p| locate_dv(task, p, task.num_records, runtime).ok());
        let own = locate(task, task.num_records, runtime).ok().flatten();
        own.into_iter().chain(paired).filter_map(in_files)
    }));
}

/// `range` of the DV file at `location`: from the scan's shared read of
/// that file when it covers the range, else one ranged read.
async fn dv_bytes(
    runtime: &ScanRuntime,
    dv_files: &DvFiles,
    location: &Path,
    range: Range<u64>,
) -> object_store::Result<Bytes> {
    let store = &runtime.store;
    let as_store_error = |e: dar_io::Error| object_store::Error::Generic {
        store: "dar",
        source: Box::new(e),
    };
    if let Some(read) = dv_files.shared(location) {
        let fetched = read
            .fetched
            .get_or_try_init(|| async {
                let buffers = store
                    .fetch_ranges(location, &read.ranges, ObjectClass::DeletionVector)
                    .await
                    .map_err(as_store_error)?;
                Ok::<_, object_store::Error>(read.ranges.iter().cloned().zip(buffers).collect())
            })
            .await?;
        if let Some(bytes) = SharedRead::slice(fetched, &range) {
            return Ok(bytes);
        }
    }
    let mut one = store
        .fetch_ranges(
            location,
            std::slice::from_ref(&range),
            ObjectClass::DeletionVector,
        )
        .await
        .map_err(as_store_error)?;
    Ok(one.pop().unwrap_or_default())
}

/// `task`'s DV descriptor (bounded by `file_rows` when known) and the
/// store path of its DV file (empty for inline DVs); `None` without a DV.
fn locate(
    task: &ScanTask,
    file_rows: Option<u64>,
    runtime: &ScanRuntime,
) -> Result<Option<(DvDescriptor, Path)>> {
    let Some(dv) = &task.deletion_vector else {
        return Ok(None);
    };
    locate_dv(task, dv, file_rows, runtime).map(Some)
}

/// `dv` (one of `task`'s DVs) bounded by `file_rows` when known, and the
/// store path of its DV file (empty for inline DVs).
fn locate_dv(
    task: &ScanTask,
    dv: &DvDescriptor,
    file_rows: Option<u64>,
    runtime: &ScanRuntime,
) -> Result<(DvDescriptor, Path)> {
    let err = |source| ScanError::DeletionVector {
        path: task.object_path.clone(),
        source: Box::new(source),
    };
    let mut dv = dv.clone();
    if let Some(rows) = file_rows {
        dv = dv.with_row_count(rows);
    }
    let store = &runtime.store;
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
    if runtime.confine_to_root
        && !location.as_ref().is_empty()
        && !runtime.is_inside_root(location.as_ref())
    {
        return Err(ScanError::OutsideRoot {
            what: "deletion vector",
            path: dv.path_or_inline_dv().to_string(),
        });
    }
    Ok((dv, location))
}

/// The deleted rows of `task`'s file (`None` without a DV). `file_rows` is
/// the file's row count: a deleted index at or past it is an error.
pub(crate) async fn load(
    task: &ScanTask,
    file_rows: u64,
    runtime: &ScanRuntime,
    running: &RunningScan,
) -> Result<Option<Arc<DeletedRows>>> {
    let Some((dv, location)) = locate(task, Some(file_rows), runtime)? else {
        return Ok(None);
    };
    read(task, dv, location, runtime, running).await.map(Some)
}

/// The rows to skip in `task`'s file when it has a paired DV (a change
/// data feed over a replaced DV): all but those the paired DV deletes and
/// the file's own DV (`own`, already loaded) does not.
pub(crate) async fn paired(
    task: &ScanTask,
    paired: &DvDescriptor,
    own: Option<&DeletedRows>,
    file_rows: u64,
    runtime: &ScanRuntime,
    running: &RunningScan,
) -> Result<Arc<DeletedRows>> {
    let (dv, location) = locate_dv(task, paired, Some(file_rows), runtime)?;
    let other = read(task, dv, location, runtime, running).await?;
    Ok(Arc::new(DeletedRows::all_but_difference(
        &other, own, file_rows,
    )))
}

/// Whether a replaced DV changes any row of `task`'s side: whether
/// `paired` deletes a row that the file's own DV does not. Both are read
/// through the DV cache (bounded by the log's row count when it has one),
/// so a side that changes nothing, such as the insert side of a DV that
/// only grew, is dropped before its file is opened.
pub(crate) async fn pair_changes_rows(
    task: &ScanTask,
    paired: &DvDescriptor,
    runtime: &ScanRuntime,
    running: &RunningScan,
) -> Result<bool> {
    let (dv, location) = locate_dv(task, paired, task.num_records, runtime)?;
    let other = read(task, dv, location, runtime, running).await?;
    Ok(match locate(task, task.num_records, runtime)? {
        Some((dv, location)) => {
            let own = read(task, dv, location, runtime, running).await?;
            !other.as_treemap().is_subset(own.as_treemap())
        }
        None => !other.is_empty(),
    })
}

/// The deleted rows of `dv`, one of `task`'s DVs, through the DV cache.
async fn read(
    task: &ScanTask,
    dv: DvDescriptor,
    location: Path,
    runtime: &ScanRuntime,
    running: &RunningScan,
) -> Result<Arc<DeletedRows>> {
    let _t = running.metrics.time(Stage::DeletionVector);
    let rows = runtime
        .dv_cache
        .load_at_with(runtime.store.store_id().as_str(), &location, &dv, |range| {
            dv_bytes(runtime, &running.dv_files, &location, range)
        })
        .await
        .map_err(|source| ScanError::DeletionVector {
            path: task.object_path.clone(),
            source: Box::new(source),
        })?;
    Ok(rows)
}
