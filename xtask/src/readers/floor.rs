//! The arrow-rs floor: the table's Parquet files read by parquet's async
//! reader through the same object store, with the same projection, the
//! same row filter and the row selection of the same DVs, and no Delta
//! logic (no log replay: the file list comes from the manifest). Files are
//! decoded on tasks of a 2-thread runtime, as many at a time as dar reads
//! (`dar_scan::default_files_in_flight`)
//! (one at a time under a limit, stopping once it has enough rows).

use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use dar_io::TableStore;
use futures::{StreamExt, TryStreamExt};
use object_store::ObjectStore;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderOptions, RowFilter, RowSelection, RowSelector,
};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::statistics::Statistics;

use super::dar::IpcOut;
use super::{ReadSpec, RunnerResult, process_cpu_secs, runtime, storage_options};
use crate::fixtures::FileEntry;
use crate::workload::{W5_DATE, W5_FILTER, w5_matches};

/// `xtask read floor SPEC`.
pub fn read_floor(spec: &ReadSpec) -> Result<RunnerResult, String> {
    if spec.filter.as_deref().is_some_and(|f| f != W5_FILTER) {
        return Err(format!(
            "the floor knows only the W5 filter, not {:?}",
            spec.filter
        ));
    }
    runtime()?.block_on(async {
        let mut out = IpcOut::new(spec.verify);
        let (cpu0, t0) = (process_cpu_secs(), Instant::now());
        let table = TableStore::builder(spec.uri.clone())
            .with_env(Vec::new())
            .with_options(storage_options(spec))
            .build()
            .map_err(|e| e.to_string())?;
        let store = Arc::clone(table.store());
        let at_once = if spec.limit.is_some() {
            1
        } else {
            dar_scan::default_files_in_flight(table.backend().is_remote())
        };
        let spec = Arc::new(spec.clone());
        let mut files = futures::stream::iter(spec.files.clone())
            .map(|f| {
                let (store, spec) = (Arc::clone(&store), Arc::clone(&spec));
                let path = table.child(&f.path);
                tokio::spawn(async move { read_file(store, path, &f, &spec).await })
            })
            .buffered(at_once);
        let mut rows = 0u64;
        'files: while let Some(joined) = files.next().await {
            let batches = joined.map_err(|e| e.to_string())??;
            for b in batches {
                let b = match spec.limit {
                    Some(l) if rows + b.num_rows() as u64 > l as u64 => {
                        b.slice(0, (l as u64 - rows) as usize)
                    }
                    _ => b,
                };
                rows += b.num_rows() as u64;
                out.write(&b)?;
                if spec.limit.is_some_and(|l| rows >= l as u64) {
                    break 'files;
                }
            }
        }
        out.finish_run(rows, t0, cpu0)
    })
}

async fn read_file(
    store: Arc<dyn ObjectStore>,
    path: object_store::path::Path,
    file: &FileEntry,
    spec: &ReadSpec,
) -> Result<Vec<RecordBatch>, String> {
    let fail = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    // arrow-rs's own object-store reader, as a user of arrow-rs alone gets it.
    #[allow(
        deprecated,
        reason = "the floor is plain arrow-rs; its replacement is a hand-written AsyncFileReader"
    )]
    let reader = parquet::arrow::async_reader::ParquetObjectReader::new(store, path.clone())
        .with_file_size(file.size);
    let filtered = spec.filter.is_some();
    let policy = if filtered {
        PageIndexPolicy::Optional
    } else {
        PageIndexPolicy::Skip
    };
    let options = ArrowReaderOptions::new().with_page_index_policy(policy);
    let mut builder = ParquetRecordBatchStreamBuilder::new_with_options(reader, options)
        .await
        .map_err(|e| fail(&e))?;
    let schema = builder.schema().clone();
    let roots: Vec<usize> = spec
        .columns
        .iter()
        .map(|c| schema.index_of(c).map_err(|e| fail(&e)))
        .collect::<Result<_, _>>()?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    // Rows to read: not deleted by the DV, and (W5) in a row group whose
    // ship-date statistics admit the date.
    let meta = builder.metadata().clone();
    let mut keep_group = vec![true; meta.num_row_groups()];
    if filtered {
        let date_col = schema.index_of("l_shipdate").map_err(|e| fail(&e))?;
        for (g, rg) in meta.row_groups().iter().enumerate() {
            if let Some(Statistics::Int32(s)) = rg.column(date_col).statistics()
                && let (Some(min), Some(max)) = (s.min_opt(), s.max_opt())
            {
                keep_group[g] = *min <= W5_DATE && W5_DATE <= *max;
            }
        }
    }
    let mut selectors: Vec<RowSelector> = Vec::new();
    let mut start = 0u64;
    let mut deleted = file.deleted.iter().peekable();
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let end = start + rg.num_rows() as u64;
        if !keep_group[g] {
            selectors.push(RowSelector::skip((end - start) as usize));
        } else {
            let mut at = start;
            while let Some(&&d) = deleted.peek() {
                if d >= end {
                    break;
                }
                deleted.next();
                if d < at {
                    continue;
                }
                selectors.push(RowSelector::select((d - at) as usize));
                selectors.push(RowSelector::skip(1));
                at = d + 1;
            }
            selectors.push(RowSelector::select((end - at) as usize));
        }
        start = end;
    }
    builder = builder
        .with_projection(mask)
        .with_batch_size(8192)
        .with_row_selection(RowSelection::from(selectors));
    if filtered {
        let idx = |n: &str| schema.index_of(n).map_err(|e| fail(&e));
        let (d, m, l) = (idx("l_shipdate")?, idx("l_shipmode")?, idx("l_linenumber")?);
        let pmask = ProjectionMask::roots(builder.parquet_schema(), [d, m, l]);
        let predicate = ArrowPredicateFn::new(pmask, |b: RecordBatch| w5_matches(&b));
        builder = builder.with_row_filter(RowFilter::new(vec![Box::new(predicate)]));
    }
    if let Some(l) = spec.limit {
        builder = builder.with_limit(l);
    }
    builder
        .build()
        .map_err(|e| fail(&e))?
        .try_collect()
        .await
        .map_err(|e| fail(&e))
}
