//! [`ScanPlan`]: the pruned files of a scan as [`ScanTask`]s, and running
//! them as one bounded stream.

use std::sync::{Arc, Once};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt, TryStreamExt};

use crate::context::ScanContext;
use crate::error::Result;
use crate::limit::LimitStream;
use crate::metrics::ScanMetrics;
use crate::readahead;
use crate::stages;
use crate::task::ScanTask;

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
}

async fn open_stream(ctx: ScanContext, task: ScanTask) -> BoxStream<'static, Result<RecordBatch>> {
    match stages::open(ctx, task).await {
        Ok(s) => s,
        Err(e) => futures::stream::once(futures::future::ready(Err(e))).boxed(),
    }
}

/// Files opened and decoded on the polling task.
fn inline_files(
    ctx: &ScanContext,
    tasks: Vec<ScanTask>,
    concurrency: usize,
) -> BoxStream<'static, Result<RecordBatch>> {
    let open_ctx = ctx.clone();
    let opens = futures::stream::iter(tasks).map(move |t| open_stream(open_ctx.clone(), t));
    if ctx.inner.spec.ordered {
        // The file being decoded plus up to `concurrency - 1` opened
        // (footer, page index, DV) ahead of it.
        opens
            .buffered(concurrency.saturating_sub(1).max(1))
            .flatten()
            .boxed()
    } else {
        // Each file from open to last batch is one inner stream; at most
        // `concurrency` of them are polled at once.
        opens
            .map(|open| open.flatten_stream().boxed())
            .flatten_unordered(concurrency)
            .boxed()
    }
}

/// Files each opened and decoded on a spawned task (inline when polled
/// outside a Tokio runtime).
fn spawned_files(
    ctx: &ScanContext,
    tasks: Vec<ScanTask>,
    concurrency: usize,
) -> BoxStream<'static, Result<RecordBatch>> {
    let file_ctx = ctx.clone();
    // Called as the consumer pulls the file in: inside its runtime.
    let file = move |t: ScanTask| {
        let path = t.object_path.clone();
        let batches = open_stream(file_ctx.clone(), t).flatten_stream().boxed();
        let budget = &file_ctx.inner.read_ahead;
        readahead::spawn_file(path, batches, budget)
    };
    if ctx.inner.spec.ordered {
        // The file being consumed plus the next ones, all running.
        readahead::InOrder::new(tasks.into_iter().map(file), concurrency).boxed()
    } else {
        futures::stream::iter(tasks)
            .map(file)
            .flatten_unordered(concurrency)
            .boxed()
    }
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
        }
    }

    /// Notes the DVs of this plan's files for one read per DV file, once
    /// for the plan and its subsets.
    fn note_dvs(&self) {
        self.dvs_noted.call_once(|| {
            self.context
                .inner
                .dv_files
                .register(&self.context, &self.tasks)
        });
    }

    /// The tasks, one per kept file, in file-index order.
    pub fn tasks(&self) -> &[ScanTask] {
        &self.tasks
    }

    /// A plan that reads `tasks` (for example one partition of an engine's
    /// scan, a subset of this plan's tasks) with this plan's context: the
    /// same options, a limit that applies to the subset alone, and the
    /// same live metrics. The DVs of this plan's files that share a DV
    /// file stay one read across the subsets.
    pub fn with_tasks(&self, tasks: Vec<ScanTask>) -> Self {
        if self.context.inner.spec.limit.is_none() {
            self.note_dvs();
        }
        Self {
            context: self.context.clone(),
            tasks,
            dvs_noted: Arc::clone(&self.dvs_noted),
        }
    }

    /// The shared context, to execute tasks one by one.
    pub fn context(&self) -> &ScanContext {
        &self.context
    }

    /// The output schema.
    pub fn schema(&self) -> &SchemaRef {
        self.context.schema()
    }

    /// The live metrics handle of this scan.
    pub fn metrics(&self) -> &ScanMetrics {
        self.context.metrics()
    }

    /// Reads every footer (and DV) and fills each task's
    /// [`crate::FileAccess`]: which row groups and rows to read. Files left
    /// with nothing to read are dropped. Useful to ship fully pruned tasks
    /// elsewhere; [`ScanPlan::execute`] does the same work lazily otherwise.
    pub async fn resolve(self) -> Result<Self> {
        let ctx = self.context.clone();
        let concurrency = ctx.inner.runtime.files_in_flight();
        self.note_dvs();
        let tasks: Vec<Option<ScanTask>> = futures::stream::iter(self.tasks)
            .map(|mut task| {
                let ctx = ctx.clone();
                async move {
                    if task.access.is_none() {
                        let (_, access) = stages::plan_file(&ctx, &task).await?;
                        if access.row_groups.is_empty() {
                            return Ok(None);
                        }
                        task.access = Some(access);
                    }
                    Ok::<_, crate::ScanError>(Some(task))
                }
            })
            .buffered(concurrency)
            .try_collect()
            .await?;
        Ok(Self {
            context: self.context,
            tasks: tasks.into_iter().flatten().collect(),
            dvs_noted: self.dvs_noted,
        })
    }

    /// Runs every task as one stream: at most `concurrency` files in
    /// flight (being opened or decoded), in file order unless the scan is
    /// unordered; stops all I/O at the limit and after the first error.
    ///
    /// Polled inside a Tokio runtime and without a limit, each file runs on
    /// its own task (see `readahead`), so files decode on every worker
    /// thread; otherwise files are opened and decoded on the polling task.
    pub fn execute(&self) -> BoxStream<'static, Result<RecordBatch>> {
        let ctx = self.context.clone();
        let inner = &ctx.inner;
        let concurrency = inner.runtime.files_in_flight();
        let batches = match inner.spec.limit {
            None => {
                self.note_dvs();
                spawned_files(&ctx, self.tasks.clone(), concurrency)
            }
            Some(_) => {
                // A limit without a predicate is met by the first files:
                // open them one at a time so no further file is touched.
                let concurrency = if inner.predicate.is_none() {
                    1
                } else {
                    concurrency
                };
                inline_files(&ctx, self.tasks.clone(), concurrency)
            }
        };
        LimitStream::new(batches, inner.spec.limit, inner.metrics.clone()).boxed()
    }

    /// Runs every task and collects the batches.
    pub async fn collect(&self) -> Result<Vec<RecordBatch>> {
        self.execute().try_collect().await
    }
}

impl ScanTask {
    /// Runs this one task with `ctx` (the scan's shared context); the
    /// scan's limit applies to this task alone.
    pub fn execute(&self, ctx: &ScanContext) -> BoxStream<'static, Result<RecordBatch>> {
        let s = open_stream(ctx.clone(), self.clone())
            .flatten_stream()
            .boxed();
        LimitStream::new(s, ctx.inner.spec.limit, ctx.inner.metrics.clone()).boxed()
    }
}
