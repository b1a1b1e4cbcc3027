//! Stage 5: the file's deletion vector, through the table's shared
//! [`dar_dv::DvCache`] (one exact ranged read per DV, none for inline or
//! empty ones). Skipped when no row group is left to read.

use std::sync::Arc;

use dar_dv::{DeletedRows, DvDescriptor};
use object_store::path::Path;

use crate::context::ScanContext;
use crate::error::{Result, ScanError};
use crate::metrics::Stage;
use crate::task::ScanTask;

/// The deleted rows of `task`'s file (`None` without a DV). `file_rows` is
/// the file's row count: a deleted index at or past it is an error.
pub(crate) async fn load(
    ctx: &ScanContext,
    task: &ScanTask,
    file_rows: u64,
) -> Result<Option<Arc<DeletedRows>>> {
    let Some(info) = &task.deletion_vector else {
        return Ok(None);
    };
    let err = |source| ScanError::DeletionVector {
        path: task.object_path.clone(),
        source: Box::new(source),
    };
    let dv = DvDescriptor::try_new(
        &info.storage_type,
        info.path_or_inline_dv.clone(),
        info.offset.map(i64::from),
        i64::from(info.size_in_bytes),
        info.cardinality,
    )
    .map_err(err)?
    .with_row_count(file_rows);
    let metrics = &ctx.inner.metrics;
    let _t = metrics.time(Stage::DeletionVector);
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
    let rows = ctx
        .inner
        .runtime
        .dv_cache
        .load_at(store.store(), &location, &dv)
        .await
        .map_err(err)?;
    Ok(Some(rows))
}
