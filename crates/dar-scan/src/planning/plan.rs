//! [`ScanPlan`]: the pruned files of a scan as [`ScanTask`]s, and running
//! them as one bounded stream (through the one executor, `exec.rs`).

use std::sync::{Arc, Once};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};

use dar_log::Snapshot;

use crate::errors::error::{Result, ScanError};
use crate::execution::context::ScanContext;
use crate::execution::exec;
use crate::execution::metrics::ScanMetrics;
use crate::execution::stages::{self, open::FileToOpen};
use crate::planning::split;
use crate::planning::statistics::{PlanStatistics, statistics};
use crate::planning::task::ScanTask;

/// The files a scan reads (after file pruning) and the shared context to
/// read them.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    context: ScanContext,
    tasks: Vec<ScanTask>,
    /// Whether this plan's DVs were noted in the context's shared DV-file
    /// reads; shared with the subsets of [`ScanPlan::with_tasks`], whose
    /// files the parent's already cover.
    dvs_noted: Arc<Once>,
    /// Where the tasks sit in the snapshot's file index, when the plan was
    /// made from a table here (for statistics).
    index: Option<IndexRows>,
}

/// The snapshot a plan came from, and the file-index row of each task.
#[derive(Debug, Clone)]
struct IndexRows {
    snapshot: Arc<Snapshot>,
    rows: Vec<usize>,
}

impl ScanPlan {
    /// A plan that reads `tasks` with `context`: on the machine that
    /// planned them, or on another one with a context built from the
    /// received spec ([`ScanContext::new`]).
    pub fn new(context: ScanContext, tasks: Vec<ScanTask>) -> Self {
        Self {
            context,
            tasks,
            dvs_noted: Arc::new(Once::new()),
            index: None,
        }
    }

    /// A plan of the files at `rows` of `snapshot`'s file index.
    pub(crate) fn from_index(
        context: ScanContext,
        tasks: Vec<ScanTask>,
        snapshot: Arc<Snapshot>,
        rows: Vec<usize>,
    ) -> Self {
        Self {
            index: Some(IndexRows { snapshot, rows }),
            ..Self::new(context, tasks)
        }
    }

    /// Notes the DVs of this plan's files for one read per DV file, once
    /// for the plan and its subsets. Not under a limit: a limit reads as
    /// few files as it can, and their DVs alone.
    fn note_dvs(&self) {
        if self.context.spec().limit.is_none() {
            self.note_all_dvs();
        }
    }

    /// Notes the DVs of this plan's files, limit or not (resolving reads
    /// every file anyway).
    fn note_all_dvs(&self) {
        let (_, runtime, running) = self.context.parts();
        self.dvs_noted
            .call_once(|| stages::dv::note(&self.tasks, runtime, &running.dv_files));
    }

    /// The tasks, one per kept file, in file-index order.
    pub fn tasks(&self) -> &[ScanTask] {
        &self.tasks
    }

    /// The file-index row of each task (rows of the snapshot's
    /// [`dar_log::FileIndex`]), when the plan was built from a table here
    /// ([`crate::ScanBuilder::build`]; not for a plan of received tasks or
    /// a subset).
    pub fn index_rows(&self) -> Option<&[usize]> {
        self.index.as_ref().map(|ix| ix.rows.as_slice())
    }

    /// A plan that reads `tasks` (for example one partition of an engine's
    /// scan, a subset of this plan's tasks) with this plan's context: the
    /// same options, a limit that applies to the subset alone, and the
    /// same running metrics. The DVs of this plan's files that share a DV
    /// file stay one read across the subsets.
    pub fn with_tasks(&self, tasks: Vec<ScanTask>) -> Self {
        self.note_dvs();
        Self {
            context: self.context.clone(),
            tasks,
            dvs_noted: Arc::clone(&self.dvs_noted),
            index: None,
        }
    }

    /// This plan's tasks in at most `n` parts of about equal bytes (an
    /// engine's partitions; see [`crate::split_by_bytes`]), each a plan
    /// like [`ScanPlan::with_tasks`] that also knows its
    /// [`ScanPlan::statistics`]. Never more parts than tasks, at least one.
    pub fn split(&self, n: usize) -> Vec<ScanPlan> {
        self.note_dvs();
        split::balance(&split::sizes(&self.tasks), n)
            .into_iter()
            .map(|group| Self {
                context: self.context.clone(),
                tasks: group.iter().map(|i| self.tasks[*i].clone()).collect(),
                dvs_noted: Arc::clone(&self.dvs_noted),
                index: self.index.as_ref().map(|ix| IndexRows {
                    snapshot: Arc::clone(&ix.snapshot),
                    rows: group.iter().map(|i| ix.rows[*i]).collect(),
                }),
            })
            .collect()
    }

    /// What the log says about the rows this plan returns (row count,
    /// bytes, per output column null count and bounds), with Delta's rules
    /// for what is exact (see the `statistics` module table). Column
    /// statistics are unknown for a plan rebuilt from received tasks
    /// ([`ScanPlan::new`], [`ScanPlan::with_tasks`]).
    pub fn statistics(&self) -> PlanStatistics {
        let index = self
            .index
            .as_ref()
            .and_then(|ix| ix.snapshot.file_index().ok().map(|fi| (fi, &ix.rows[..])));
        statistics(
            self.context.state(),
            index.map(|(fi, _)| fi.as_ref()),
            &self.tasks,
            index.map(|(_, rows)| rows),
        )
    }

    /// The shared context, to execute tasks one by one.
    pub fn context(&self) -> &ScanContext {
        &self.context
    }

    /// The output schema.
    pub fn schema(&self) -> &SchemaRef {
        self.context.schema()
    }

    /// The running metrics handle of this scan.
    pub fn metrics(&self) -> &ScanMetrics {
        self.context.metrics()
    }

    /// Reads every footer (and DV) and fills each task's
    /// [`crate::FileAccess`]: which row groups and rows to read. Files left
    /// with nothing to read are dropped. Useful to ship fully pruned tasks
    /// elsewhere; [`ScanPlan::execute`] does the same work lazily otherwise.
    ///
    /// # Errors
    ///
    /// The first file that cannot be planned: its footer or DV cannot be
    /// read ([`ScanError::Io`], [`ScanError::Parquet`],
    /// [`ScanError::DeletionVector`]), its row count disagrees with the log
    /// ([`ScanError::RowCountMismatch`]), or it lies where the table may
    /// not read ([`ScanError::OutsideRoot`], [`ScanError::OtherStore`]).
    pub async fn resolve(self) -> Result<Self> {
        let ctx = self.context.clone();
        let concurrency = ctx.runtime().files_in_flight();
        self.note_all_dvs();
        let rows = self.index.as_ref().map(|ix| ix.rows.clone());
        let tasks: Vec<Option<ScanTask>> = futures::stream::iter(self.tasks)
            .map(|task| {
                let ctx = ctx.clone();
                async move {
                    if task.access.is_some() {
                        return Ok::<_, ScanError>(Some(task));
                    }
                    let file = FileToOpen::new(task, ctx.state())?;
                    let task = Arc::clone(&file.task);
                    let Some((_, access)) = stages::plan(&ctx, file).await? else {
                        return Ok(None);
                    };
                    if access.row_groups.is_empty() {
                        return Ok(None);
                    }
                    let mut task = Arc::unwrap_or_clone(task);
                    task.access = Some(access);
                    Ok(Some(task))
                }
            })
            .buffered(concurrency)
            .try_collect()
            .await?;
        // Files left with nothing to read leave the index rows too.
        let index = self.index.map(|ix| IndexRows {
            rows: tasks
                .iter()
                .zip(rows.unwrap_or_default())
                .filter(|(t, _)| t.is_some())
                .map(|(_, r)| r)
                .collect(),
            snapshot: ix.snapshot,
        });
        Ok(Self {
            context: self.context,
            tasks: tasks.into_iter().flatten().collect(),
            dvs_noted: self.dvs_noted,
            index,
        })
    }

    /// Runs every task as one stream: at most `concurrency` files in
    /// flight (being opened or decoded), in file order unless the scan is
    /// unordered; stops all I/O at the limit and after the first error.
    ///
    /// Polled inside a Tokio runtime and without a limit, each file runs on
    /// its own task, so files decode on every worker thread; otherwise files
    /// are opened and decoded on the polling task.
    ///
    /// # Errors
    ///
    /// The stream's items: the first file that cannot be read or decoded
    /// (see [`ScanPlan::resolve`]), a file whose data breaks the table's
    /// schema ([`ScanError::SchemaMismatch`],
    /// [`ScanError::NullInNonNullable`], [`ScanError::MissingNonNullable`]),
    /// or a decoding task that stopped ([`ScanError::TaskFailed`]); no
    /// batch follows an error.
    pub fn execute(&self) -> BoxStream<'static, Result<RecordBatch>> {
        self.note_dvs();
        exec::run(&self.context, self.tasks.clone())
    }

    /// Runs every task and collects the batches.
    ///
    /// # Errors
    ///
    /// As [`ScanPlan::execute`].
    pub async fn collect(&self) -> Result<Vec<RecordBatch>> {
        self.execute().try_collect().await
    }
}

impl ScanTask {
    /// Runs this one task with `ctx` (the scan's shared context), as a plan
    /// of one task does: the scan's limit applies to this task alone.
    ///
    /// # Errors
    ///
    /// As [`ScanPlan::execute`].
    pub fn execute(&self, ctx: &ScanContext) -> BoxStream<'static, Result<RecordBatch>> {
        ScanPlan::new(ctx.clone(), vec![self.clone()]).execute()
    }
}
