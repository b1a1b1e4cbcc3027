//! The one executor behind every entry point ([`crate::ScanPlan::execute`],
//! its subsets' [`crate::ScanPlan::with_tasks`], [`crate::ScanTask::execute`]):
//! the same rules for all of them.
//!
//! - Without a limit, polled inside a Tokio runtime, each file runs from
//!   open to last batch on its own task ([`crate::execution::readahead`]), so files
//!   decode on every worker thread; batches come back in plan order (or
//!   first-ready when unordered) under the read-ahead budget. When the
//!   scan has fewer files than the runtime has threads (on object
//!   storage: than files in flight), each file's row groups are decoded in
//!   parts, each part on a task of its own, in order (see
//!   [`crate::execution::stages::open`]).
//! - With a limit, files open and decode on the polling task, so I/O stops
//!   at the limit; without a predicate one file at a time (the first files
//!   meet the limit).
//! - Outside a runtime, files are polled by the caller.
//! - The stream stops all I/O at the limit and after the first error.
//!
//! The tasks are a plan's list, or a stream of them found as the scan
//! goes ([`run_stream`]: a change data feed, commit by commit), which is
//! polled only as far as the files in flight need.

use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use crate::errors::error::Result;
use crate::execution::context::ScanContext;
use crate::execution::limit::LimitStream;
use crate::execution::readahead::{self, Admission};
use crate::execution::stages::{self, Batches};
use crate::planning::task::ScanTask;

/// Tasks found as the scan goes; an error ends the scan where it stands.
pub(crate) type TaskStream = BoxStream<'static, Result<ScanTask>>;

/// One file's batches, decoded in up to `parts` parts, an error ending
/// them (also the error that stood in the task stream for the file).
async fn file_stream(ctx: ScanContext, task: Result<ScanTask>, parts: usize) -> Batches {
    let opened = match task {
        Ok(task) => stages::open(ctx, task, parts).await,
        Err(e) => Err(e),
    };
    match opened {
        Ok(s) => s,
        Err(e) => futures::stream::once(futures::future::ready(Err(e))).boxed(),
    }
}

/// Files opened and decoded on the polling task.
fn inline_files(ctx: &ScanContext, tasks: TaskStream, concurrency: usize) -> Batches {
    let open_ctx = ctx.clone();
    let opens = tasks.map(move |t| file_stream(open_ctx.clone(), t, 1));
    if ctx.state().spec.ordered {
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

/// Into how many parts each of `files` files is decoded: more than one
/// when there are fewer files than slots, so that no slot sits idle. On
/// local disk the slots are the current multi-thread runtime's threads
/// (decoding is the work). On object storage they are the files in
/// flight (`in_flight`): a file's row groups read one after another cost
/// a round trip each, so a few files of many row groups took as many
/// round trips as row groups; in parts their reads overlap.
fn parts_per_file(files: usize, in_flight: usize, remote: bool) -> usize {
    let threads = match tokio::runtime::Handle::try_current() {
        Ok(rt) if rt.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            rt.metrics().num_workers()
        }
        _ => return 1,
    };
    let slots = if remote {
        in_flight.max(threads)
    } else {
        threads
    };
    if files > 0 && files < slots {
        slots.div_ceil(files)
    } else {
        1
    }
}

/// Files each opened and decoded on a spawned task (inline when polled
/// outside a Tokio runtime).
fn spawned_files(
    ctx: &ScanContext,
    tasks: TaskStream,
    parts: usize,
    admission: Admission,
) -> Batches {
    let file_ctx = ctx.clone();
    // Called as the consumer pulls the file in: inside its runtime.
    let file = move |t: Result<ScanTask>| {
        let path = t
            .as_ref()
            .map(|t| t.object_path.clone())
            .unwrap_or_default();
        let batches = file_stream(file_ctx.clone(), t, parts)
            .flatten_stream()
            .boxed();
        readahead::spawn_file(path, batches, &file_ctx.running().read_ahead)
    };
    // Ordered: the file being consumed plus the next ones, all running.
    // A file of unknown size is never one of the small ones.
    let size = |t: &Result<ScanTask>| t.as_ref().map_or(0, |t| t.size.unwrap_or(u64::MAX));
    readahead::InFlight::new(tasks, file, size, admission, ctx.state().spec.ordered).boxed()
}

/// Runs `tasks` with `ctx` as one stream (see the module doc).
pub(crate) fn run(ctx: &ScanContext, tasks: Vec<ScanTask>) -> Batches {
    let runtime = ctx.runtime();
    let parts = parts_per_file(
        tasks.len(),
        runtime.files_in_flight(),
        runtime.store.backend().is_remote(),
    );
    run_tasks(
        ctx,
        futures::stream::iter(tasks.into_iter().map(Ok)).boxed(),
        parts,
    )
}

/// Runs the tasks of `tasks` as they come, each file decoded in one part
/// (how many files follow is not known).
pub(crate) fn run_stream(ctx: &ScanContext, tasks: TaskStream) -> Batches {
    run_tasks(ctx, tasks, 1)
}

fn run_tasks(ctx: &ScanContext, tasks: TaskStream, parts: usize) -> Batches {
    let (state, runtime, running) = ctx.parts();
    let concurrency = runtime.files_in_flight();
    let batches = match state.spec.limit {
        None => spawned_files(ctx, tasks, parts, runtime.admission()),
        // A limit without a predicate is met by the first files: open them
        // one at a time so no further file is touched.
        Some(_) if state.predicate.is_none() => inline_files(ctx, tasks, 1),
        Some(_) => inline_files(ctx, tasks, concurrency),
    };
    LimitStream::new(batches, state.spec.limit, running.metrics.clone()).boxed()
}
