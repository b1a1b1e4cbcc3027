//! The dar runner: dar-scan in-process, timed from opening the table to the
//! last batch, on a multi-threaded tokio runtime (as an embedding service
//! would run it).

use std::time::Instant;

use arrow_array::RecordBatch;
use dar_scan::{ChangeBound, FileColumns, Table, TableOptions, files_batch};
use futures::TryStreamExt;

use super::{ReadSpec, RunnerResult, process_cpu_secs, runtime, storage_options};
use crate::workload::Action;

/// The scan `spec` asks of `table`: strings as views, as an embedding
/// engine that takes them (DataFusion, Polars, DuckDB) asks for them.
fn scan_plan(table: &Table, spec: &ReadSpec) -> Result<dar_scan::ScanPlan, String> {
    let mut scan = table
        .scan()
        .with_columns(&spec.columns)
        .with_view_types(true);
    if let Some(f) = &spec.filter {
        scan = scan.with_predicate_sql(f.clone());
    }
    if let Some(l) = spec.limit {
        scan = scan.with_limit(l);
    }
    scan.build().map_err(|e| e.to_string())
}

/// Runs a batch stream (a dar scan, a DataFusion query) to its last
/// batch, writing batches to `out` when given.
pub(super) async fn drain<E: std::fmt::Display>(
    mut stream: impl futures::Stream<Item = Result<RecordBatch, E>> + Unpin,
    mut out: Option<&mut IpcOut>,
) -> Result<u64, String> {
    let mut rows = 0u64;
    while let Some(batch) = stream.try_next().await.map_err(|e| e.to_string())? {
        rows += batch.num_rows() as u64;
        if let Some(o) = out.as_deref_mut() {
            o.write(&batch)?;
        }
    }
    Ok(rows)
}

/// A session's two timed queries on a table opened before: `query` runs
/// once without output, then again writing to the output; the result is
/// the second query's, with the first's time beside it.
pub(super) async fn run_twice(
    verify: bool,
    mut query: impl AsyncFnMut(Option<&mut IpcOut>) -> Result<u64, String>,
) -> Result<RunnerResult, String> {
    let (cpu0, t0) = (process_cpu_secs(), Instant::now());
    query(None).await?;
    let first = super::Phase {
        secs: t0.elapsed().as_secs_f64(),
        cpu_secs: process_cpu_secs() - cpu0,
    };
    let mut out = IpcOut::new(verify);
    let (cpu0, t0) = (process_cpu_secs(), Instant::now());
    let rows = query(Some(&mut out)).await?;
    let mut result = out.finish_run(rows, t0, cpu0)?;
    result.first = Some(first);
    Ok(result)
}

/// A session: the table opened once (not timed), the scan run twice on it.
fn read_dar_session(spec: &ReadSpec) -> Result<RunnerResult, String> {
    runtime()?.block_on(async {
        let options = TableOptions::new().with_storage_options(storage_options(spec));
        let table = Table::open_with(&spec.uri, options)
            .await
            .map_err(|e| e.to_string())?;
        run_twice(spec.verify, async |out| {
            drain(scan_plan(&table, spec)?.execute(), out).await
        })
        .await
    })
}

/// `xtask read dar SPEC`.
pub fn read_dar(spec: &ReadSpec) -> Result<RunnerResult, String> {
    if spec.session {
        return read_dar_session(spec);
    }
    runtime()?.block_on(async {
        let mut out = IpcOut::new(spec.verify);
        let (cpu0, t0) = (process_cpu_secs(), Instant::now());
        let mut options = TableOptions::new().with_storage_options(storage_options(spec));
        // One query, known before the table opens: its columns' stats are
        // parsed while it opens, as `dar files` / `dar scan --filter` do.
        if let Some(f) = &spec.filter {
            options = options.with_stats_for_predicate(f);
        }
        let table = Table::open_with(&spec.uri, options)
            .await
            .map_err(|e| e.to_string())?;
        let mut rows = 0u64;
        match spec.action {
            Action::Files => {
                let index = table.snapshot().file_index().map_err(|e| e.to_string())?;
                let files = files_batch(index, FileColumns::Summary).map_err(|e| e.to_string())?;
                let i = files
                    .schema()
                    .index_of("num_records")
                    .map_err(|e| e.to_string())?;
                let listing = files.project(&[i]).map_err(|e| e.to_string())?;
                rows += listing.num_rows() as u64;
                out.write(&listing)?;
            }
            Action::Count => {
                let index = table.snapshot().file_index().map_err(|e| e.to_string())?;
                let batch = count_batch(index).map_err(|e| e.to_string())?;
                rows += 1;
                out.write(&batch)?;
            }
            Action::Plan => {
                // Planned as a count: pruning only, no column resolved.
                let mut scan = table.scan().with_columns(Vec::<String>::new());
                if let Some(f) = &spec.filter {
                    scan = scan.with_predicate_sql(f.clone());
                }
                let plan = scan.build().map_err(|e| e.to_string())?;
                let batch = plan_row(plan.tasks().len() as i64).map_err(|e| e.to_string())?;
                rows += 1;
                out.write(&batch)?;
            }
            Action::Scan | Action::Changes => {
                let batches = match spec.changes_from {
                    None => scan_plan(&table, spec)?.execute(),
                    Some(from) => {
                        // The table's columns; the change columns come
                        // too. Through the version the open found, and
                        // run commit by commit, as `dar changes` does:
                        // each commit's files are read as soon as it is
                        // parsed, not after every commit.
                        let end = ChangeBound::Version(table.version());
                        let mut changes = table
                            .changes(ChangeBound::Version(from), Some(end))
                            .with_columns(&spec.columns)
                            .with_view_types(true);
                        if let Some(f) = &spec.filter {
                            changes = changes.with_predicate_sql(f.clone());
                        }
                        if let Some(l) = spec.limit {
                            changes = changes.with_limit(l);
                        }
                        changes.open().await.map_err(|e| e.to_string())?.execute()
                    }
                };
                rows += drain(batches, Some(&mut out)).await?;
            }
        }
        out.finish_run(rows, t0, cpu0)
    })
}

/// Batches as an Arrow IPC stream on stdout, when verifying.
pub(super) struct IpcOut {
    on: bool,
    writer: Option<arrow_ipc::writer::StreamWriter<std::io::Stdout>>,
}

impl IpcOut {
    pub(super) fn new(on: bool) -> Self {
        IpcOut { on, writer: None }
    }

    pub(super) fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        if !self.on {
            return Ok(());
        }
        if self.writer.is_none() {
            self.writer = Some(
                arrow_ipc::writer::StreamWriter::try_new(std::io::stdout(), &batch.schema())
                    .map_err(|e| e.to_string())?,
            );
        }
        match self.writer.as_mut() {
            Some(w) => w.write(batch).map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    /// Stops the clocks started at `t0` / `cpu0` (process CPU seconds),
    /// then ends the output: the result of a run that returned `rows`.
    pub(super) fn finish_run(
        self,
        rows: u64,
        t0: Instant,
        cpu0: f64,
    ) -> Result<RunnerResult, String> {
        let result = RunnerResult {
            rows,
            secs: t0.elapsed().as_secs_f64(),
            cpu_secs: process_cpu_secs() - cpu0,
            first: None,
        };
        self.finish()?;
        Ok(result)
    }

    fn finish(self) -> Result<(), String> {
        match self.writer {
            Some(mut w) => w.finish().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}

/// The one-row count of `index`: its files, and its rows from the log
/// (`numRecords` minus deletion-vector cardinalities).
fn count_batch(index: &dar_log::FileIndex) -> Result<RecordBatch, arrow_schema::ArrowError> {
    let records: i64 = index.stats.num_records.iter().flatten().sum();
    let deleted: i64 = index.dv.cardinality.iter().flatten().sum();
    count_row(index.len() as i64, records - deleted)
}

/// The batch a plan case returns: `files`, the files kept, one row.
pub fn plan_row(files: i64) -> Result<RecordBatch, arrow_schema::ArrowError> {
    RecordBatch::try_from_iter([(
        "files",
        std::sync::Arc::new(arrow_array::Int64Array::from(vec![files])) as arrow_array::ArrayRef,
    )])
}

/// The batch a count case returns: `files` and `rows`, one row.
pub fn count_row(files: i64, rows: i64) -> Result<RecordBatch, arrow_schema::ArrowError> {
    RecordBatch::try_from_iter([
        (
            "files",
            std::sync::Arc::new(arrow_array::Int64Array::from(vec![files]))
                as arrow_array::ArrayRef,
        ),
        (
            "rows",
            std::sync::Arc::new(arrow_array::Int64Array::from(vec![rows])) as arrow_array::ArrayRef,
        ),
    ])
}
