//! Files decoded on their own tasks: every core busy, output order kept.
//!
//! On a Tokio runtime, [`spawn_file`] runs one file's whole pipeline (open,
//! then decode) on a spawned task, so the files in flight decode on all of
//! the runtime's worker threads while the caller only receives batches.
//! Each file hands its batches over a one-slot channel; a file that is not
//! being consumed yet (ordered scans read files in plan order) may run
//! ahead into a private queue while the scan's [`ReadAhead`] byte budget
//! allows, then waits. The file being consumed never waits on the budget
//! (its consumer drains it), so the budget cannot deadlock the scan.
//!
//! ```text
//!  task 0 ─ open ─ decode ─► [queue] ─► slot ─┐
//!  task 1 ─ open ─ decode ─► [queue] ─► slot ─┼─► caller (plan order or
//!  task 2 ─ open ─ decode ─► [queue] ─► slot ─┘    first ready)
//!            queued bytes of all files <= ReadAhead budget
//! ```
//!
//! Dropping the receiving stream aborts the task (and its I/O). A task
//! that panics ends its stream with an error, never with silently missing
//! rows.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use futures::stream::BoxStream;
use futures::{FutureExt, Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::errors::error::{Result, ScanError};

/// The bytes of decoded batches queued ahead of the consumer, shared by
/// the files of one scan.
#[derive(Debug)]
pub(crate) struct ReadAhead {
    budget: usize,
    queued: AtomicUsize,
}

impl ReadAhead {
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            budget,
            queued: AtomicUsize::new(0),
        }
    }

    fn has_room(&self) -> bool {
        self.queued.load(Ordering::Relaxed) < self.budget
    }

    fn take(&self, bytes: usize) {
        self.queued.fetch_add(bytes, Ordering::Relaxed);
    }

    fn release(&self, bytes: usize) {
        self.queued.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Bytes queued now (for tests).
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }
}

/// Batches decoded ahead of the consumer; gives their bytes back to the
/// budget when sent or dropped (an aborted task drops its queue).
struct Queue {
    items: VecDeque<(Result<RecordBatch>, usize)>,
    budget: Arc<ReadAhead>,
}

/// `batch` in buffers sized to its rows when it holds far more memory than
/// its rows use: a selective read's batches keep the decoder's
/// `batch_size`-row buffers for a handful of rows, and a queued batch
/// would hold them (and its share of the budget) until consumed.
fn compact(batch: RecordBatch) -> RecordBatch {
    let batch = compact_views(batch);
    let held = batch.get_array_memory_size();
    let used: usize = batch
        .columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap_or(held))
        .sum();
    if held > 2 * used + 64 * 1024 {
        // `take` copies into new buffers (`concat` of one batch may not).
        let rows = u32::try_from(batch.num_rows()).unwrap_or(u32::MAX);
        let all = arrow_array::UInt32Array::from_iter_values(0..rows);
        arrow_select::take::take_record_batch(&batch, &all).unwrap_or(batch)
    } else {
        batch
    }
}

/// `batch` with each string or binary view column whose data buffers hold
/// far more than its views reference garbage-collected into buffers of its
/// own (`gc`). A view of a decoded page points into the whole page: a
/// selective read's few rows pinned every page they came from, for as long
/// as the consumer kept the batch (a lazy Polars frame keeps them all:
/// W5.scattered, 90 rows, held 90 MiB of pages). `take` would copy the
/// views and keep the pages. Views nested in structs or lists are kept as
/// they are.
fn compact_views(batch: RecordBatch) -> RecordBatch {
    use arrow_array::cast::AsArray;
    use arrow_array::types::ByteViewType;
    use arrow_array::{Array, GenericByteViewArray};
    use arrow_schema::DataType;

    /// `a` garbage-collected when its data buffers hold more than 16
    /// times the bytes its views reference and 64 KiB more. A batch of an
    /// unfiltered scan references its share of a page (a page of up to 16
    /// batches' rows), which later batches reference too: copying it
    /// would free nothing.
    fn gc_if_wasteful<T: ByteViewType>(
        a: &GenericByteViewArray<T>,
    ) -> Option<arrow_array::ArrayRef> {
        let held: usize = a.data_buffers().iter().map(arrow_buffer::Buffer::len).sum();
        (held > 16 * a.total_buffer_bytes_used() + 64 * 1024).then(|| Arc::new(a.gc()) as _)
    }
    let mut changed = false;
    let columns: Vec<arrow_array::ArrayRef> = batch
        .columns()
        .iter()
        .map(|c| {
            let gc = match c.data_type() {
                DataType::Utf8View => gc_if_wasteful(c.as_string_view()),
                DataType::BinaryView => gc_if_wasteful(c.as_binary_view()),
                _ => None,
            };
            changed |= gc.is_some();
            gc.unwrap_or_else(|| Arc::clone(c))
        })
        .collect();
    if !changed {
        return batch;
    }
    // Same types, lengths and nulls: the batch cannot be refused.
    RecordBatch::try_new(batch.schema(), columns).unwrap_or(batch)
}

impl Queue {
    fn push(&mut self, item: Result<RecordBatch>) {
        let item = item.map(compact);
        let bytes = item.as_ref().map_or(0, RecordBatch::get_array_memory_size);
        self.budget.take(bytes);
        self.items.push_back((item, bytes));
    }

    fn pop(&mut self) -> Option<Result<RecordBatch>> {
        let (item, bytes) = self.items.pop_front()?;
        self.budget.release(bytes);
        Some(item)
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

/// Drives `batches` to the end, handing each batch over `tx`: straight into
/// the slot when it is free, else into the queue while the budget has room,
/// else waiting for the consumer. Returns when the stream ends or the
/// receiver is gone.
async fn pump(
    mut batches: BoxStream<'static, Result<RecordBatch>>,
    tx: mpsc::Sender<Result<RecordBatch>>,
    budget: Arc<ReadAhead>,
) {
    let mut queue = Queue {
        items: VecDeque::new(),
        budget: Arc::clone(&budget),
    };
    let mut done = false;
    loop {
        // Move what the slot takes without waiting.
        while !queue.items.is_empty() {
            match tx.try_reserve() {
                Ok(permit) => {
                    if let Some(item) = queue.pop() {
                        permit.send(item);
                    }
                }
                Err(mpsc::error::TrySendError::Full(())) => break,
                Err(mpsc::error::TrySendError::Closed(())) => return,
            }
        }
        if done && queue.items.is_empty() {
            return;
        }
        // The consumer is gone (dropped mid-poll of this task, before
        // the abort lands): start no more reads.
        if tx.is_closed() {
            return;
        }
        if !done && (queue.items.is_empty() || budget.has_room()) {
            match batches.next().await {
                Some(item) => {
                    let failed = item.is_err();
                    queue.push(item);
                    // Nothing follows an error.
                    done = failed;
                }
                None => done = true,
            }
            continue;
        }
        // Over budget (or finished): wait until the consumer takes one.
        let Ok(permit) = tx.reserve().await else {
            return;
        };
        if let Some(item) = queue.pop() {
            permit.send(item);
        }
    }
}

/// The batches of one file decoding on its own task; aborts the task when
/// dropped.
pub(crate) struct SpawnedFile {
    rx: mpsc::Receiver<Result<RecordBatch>>,
    handle: Option<JoinHandle<()>>,
    path: String,
}

impl Drop for SpawnedFile {
    fn drop(&mut self) {
        if let Some(h) = &self.handle {
            h.abort();
        }
    }
}

impl Stream for SpawnedFile {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(item)) => return Poll::Ready(Some(item)),
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => {}
        }
        // The sender is gone: the task ended or panicked.
        let Some(handle) = self.handle.as_mut() else {
            return Poll::Ready(None);
        };
        match handle.poll_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                self.handle = None;
                match result {
                    Ok(()) => Poll::Ready(None),
                    Err(e) => Poll::Ready(Some(Err(ScanError::TaskFailed {
                        path: self.path.clone(),
                        reason: stop_reason(e),
                    }))),
                }
            }
        }
    }
}

/// Why a file's task stopped, in words: a panic's own message (a decoder's
/// failed assertion, say), or that it was cancelled.
fn stop_reason(e: tokio::task::JoinError) -> String {
    if e.is_cancelled() {
        return "cancelled".to_string();
    }
    match e.try_into_panic() {
        Ok(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_string());
            format!("a panic in a decoder: {message}")
        }
        Err(e) => e.to_string(),
    }
}

/// How many files of a scan run at once: always up to `files`, and up
/// to `max_files` while the sizes of all running files (as the log gives
/// them) sum to at most `small_bytes`. The files beyond `files` are small
/// ones then, each fetching at most its size: a change data feed of many
/// small files reads them in one round trip instead of several, with
/// what they hold bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Admission {
    /// Files that may always run at once (at least 1).
    pub files: usize,
    /// Files that may run at once while they are small.
    pub max_files: usize,
    /// What the running files' sizes may sum to for more than `files` of
    /// them to run.
    pub small_bytes: u64,
}

impl Admission {
    /// Up to `files` at once, whatever their sizes.
    pub(crate) fn files(files: usize) -> Self {
        Self {
            files: files.max(1),
            max_files: files.max(1),
            small_bytes: 0,
        }
    }

    /// Whether a file of `size` bytes may start while `running` files of
    /// `running_bytes` run.
    fn admits(&self, running: usize, running_bytes: u64, size: u64) -> bool {
        running < self.files
            || (running < self.max_files && running_bytes.saturating_add(size) <= self.small_bytes)
    }
}

/// Files as many started at once as an [`Admission`] allows, each
/// already running on its task (started here, not when the consumer
/// reaches it). `ordered`: batches in plan order (the file being consumed
/// and the next ones run); else first ready. The files come from a
/// stream, so a plan can hand them over as it finds them (a change data
/// feed, commit by commit): a file not yet available never holds up the
/// ones running. A file is started by `start` only once admitted, its
/// size told by `size`.
pub(crate) struct InFlight<S, T, F> {
    files: S,
    /// The next file, waiting for room.
    next: Option<T>,
    start: F,
    size: fn(&T) -> u64,
    admission: Admission,
    ordered: bool,
    /// Whether `files` has ended.
    listed: bool,
    /// The running files with their sizes, in order (unordered: the one
    /// that last gave a batch at the back).
    running: VecDeque<(u64, BoxStream<'static, Result<RecordBatch>>)>,
    running_bytes: u64,
}

impl<S, T, F> InFlight<S, T, F> {
    pub(crate) fn new(
        files: S,
        start: F,
        size: fn(&T) -> u64,
        admission: Admission,
        ordered: bool,
    ) -> Self {
        Self {
            files,
            next: None,
            start,
            size,
            admission,
            ordered,
            listed: false,
            running: VecDeque::new(),
            running_bytes: 0,
        }
    }

    /// Starts the files the admission lets in.
    fn admit(&mut self, cx: &mut Context<'_>)
    where
        S: Stream<Item = T> + Unpin,
        F: FnMut(T) -> BoxStream<'static, Result<RecordBatch>>,
    {
        loop {
            if self.next.is_none() && !self.listed {
                match self.files.poll_next_unpin(cx) {
                    Poll::Ready(Some(file)) => self.next = Some(file),
                    Poll::Ready(None) => self.listed = true,
                    // Woken when the next file is available.
                    Poll::Pending => {}
                }
            }
            let Some(file) = self.next.take() else { return };
            let size = (self.size)(&file);
            if !self
                .admission
                .admits(self.running.len(), self.running_bytes, size)
            {
                // Admitted when a running file ends (called again then).
                self.next = Some(file);
                return;
            }
            self.running_bytes = self.running_bytes.saturating_add(size);
            self.running.push_back((size, (self.start)(file)));
        }
    }

    /// Forgets the running file at `i`, which has ended.
    fn ended(&mut self, i: usize) {
        if let Some((size, _)) = self.running.remove(i) {
            self.running_bytes = self.running_bytes.saturating_sub(size);
        }
    }
}

impl<S, T, F> Stream for InFlight<S, T, F>
where
    S: Stream<Item = T> + Unpin,
    T: Unpin,
    F: FnMut(T) -> BoxStream<'static, Result<RecordBatch>> + Unpin,
{
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        'admit: loop {
            this.admit(cx);
            if this.running.is_empty() {
                return if this.listed && this.next.is_none() {
                    Poll::Ready(None)
                } else {
                    Poll::Pending
                };
            }
            if this.ordered {
                match this.running.front_mut().map(|(_, f)| f.poll_next_unpin(cx)) {
                    Some(Poll::Ready(None)) => this.ended(0),
                    Some(other) => return other,
                    None => {}
                }
                continue;
            }
            // First ready; the file that gives a batch goes to the back, so
            // every running file gets its turn.
            let mut i = 0;
            while i < this.running.len() {
                match this.running[i].1.poll_next_unpin(cx) {
                    Poll::Ready(Some(item)) => {
                        if let Some(file) = this.running.remove(i) {
                            this.running.push_back(file);
                        }
                        return Poll::Ready(Some(item));
                    }
                    Poll::Ready(None) => {
                        this.ended(i);
                        // Room for the next file.
                        continue 'admit;
                    }
                    Poll::Pending => i += 1,
                }
            }
            return Poll::Pending;
        }
    }
}

/// Runs `file` (one file's open-then-decode stream) on a task of the
/// current Tokio runtime; outside a runtime, returns it to be polled by
/// the caller.
pub(crate) fn spawn_file(
    path: String,
    file: BoxStream<'static, Result<RecordBatch>>,
    budget: &Arc<ReadAhead>,
) -> BoxStream<'static, Result<RecordBatch>> {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return file;
    };
    let (tx, rx) = mpsc::channel(1);
    let handle = runtime.spawn(pump(file, tx, Arc::clone(budget)));
    SpawnedFile {
        rx,
        handle: Some(handle),
        path,
    }
    .boxed()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use arrow_array::Int64Array;

    use super::*;

    fn batch(n: i64) -> RecordBatch {
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![n; 1000])) as _)]).unwrap()
    }

    fn file(n: i64) -> BoxStream<'static, Result<RecordBatch>> {
        futures::stream::iter((0..n).map(|i| Ok(batch(i)))).boxed()
    }

    /// A view column of `rows` rows of 20-byte strings (not inlined) over
    /// one shared page of `page` bytes, and an Int64 column beside it.
    fn views_over_a_page(rows: usize, page: usize) -> RecordBatch {
        let data: Vec<u8> = (0..page).map(|i| b'a' + (i % 26) as u8).collect();
        let mut builder = arrow_array::builder::StringViewBuilder::new();
        let block = builder.append_block(arrow_buffer::Buffer::from_vec(data));
        for r in 0..rows {
            builder.try_append_view(block, (r * 20) as u32, 20).unwrap();
        }
        let views = builder.finish();
        RecordBatch::try_from_iter([
            ("s", Arc::new(views) as _),
            ("x", Arc::new(Int64Array::from(vec![7; rows])) as _),
        ])
        .unwrap()
    }

    fn data_bytes(batch: &RecordBatch) -> usize {
        use arrow_array::cast::AsArray;
        let a = batch.column(0).as_string_view();
        a.data_buffers().iter().map(|b| b.len()).sum()
    }

    #[test]
    fn a_few_views_into_a_large_page_are_copied_out_of_it() {
        let pinned = views_over_a_page(3, 1 << 20);
        let compacted = compact(pinned.clone());
        assert_eq!(compacted, pinned, "same values");
        assert_eq!(data_bytes(&pinned), 1 << 20);
        assert!(
            data_bytes(&compacted) <= 3 * 20,
            "{}",
            data_bytes(&compacted)
        );
        // Views that use their share of a page keep it, without a copy:
        // a sixteenth here, as one batch of an unfiltered scan would.
        let used = views_over_a_page(2_500, 800_000);
        let kept = compact(used.clone());
        use arrow_array::cast::AsArray;
        assert_eq!(
            kept.column(0).as_string_view().data_buffers()[0].as_ptr(),
            used.column(0).as_string_view().data_buffers()[0].as_ptr()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn batches_arrive_in_order_and_the_budget_is_returned() {
        let budget = Arc::new(ReadAhead::new(1 << 20));
        let mut s = spawn_file("a".into(), file(50), &budget);
        // Let the task run ahead into its queue.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(budget.queued() > 0);
        let mut seen = Vec::new();
        while let Some(b) = s.next().await {
            let b = b.unwrap();
            let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            seen.push(col.value(0));
        }
        assert_eq!(seen, (0..50).collect::<Vec<_>>());
        assert_eq!(budget.queued(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_file_waits_once_the_budget_is_spent() {
        // One batch is 8 KB of values: a 20 KB budget queues at most 3.
        let budget = Arc::new(ReadAhead::new(20_000));
        let s = spawn_file("a".into(), file(100), &budget);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let one = batch(0).get_array_memory_size();
        assert!(budget.queued() <= 20_000 + one, "{}", budget.queued());
        assert!(budget.queued() > 0);
        drop(s);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(budget.queued(), 0, "an aborted task gives its bytes back");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_file_ends_in_an_error() {
        let panicked = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&panicked);
        let stream = futures::stream::iter(0..3)
            .map(move |i| {
                if i == 2 {
                    flag.store(true, Ordering::SeqCst);
                    panic!("decoder bug");
                }
                Ok(batch(i))
            })
            .boxed();
        let budget = Arc::new(ReadAhead::new(1 << 20));
        let s = spawn_file("t/part-0.parquet".into(), stream, &budget);
        let items: Vec<_> = s.collect().await;
        assert!(panicked.load(Ordering::SeqCst));
        let last = items.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(last.contains("t/part-0.parquet"), "{last}");
        assert!(items.iter().filter(|i| i.is_ok()).count() <= 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn in_order_starts_the_next_files_before_the_first_is_done() {
        let budget = Arc::new(ReadAhead::new(1 << 20));
        let started = Arc::new(AtomicUsize::new(0));
        let start = {
            let (budget, started) = (Arc::clone(&budget), Arc::clone(&started));
            move |f: i64| {
                let started = Arc::clone(&started);
                let file = futures::stream::once(async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    Ok(batch(f))
                })
                .chain(futures::stream::iter(
                    (1..3).map(move |i| Ok(batch(f * 10 + i))),
                ))
                .boxed();
                spawn_file(format!("f{f}"), file, &budget)
            }
        };
        let mut s = InFlight::new(
            futures::stream::iter(0..4i64),
            start,
            |_| 0,
            Admission::files(3),
            true,
        );
        let first = s.next().await.unwrap().unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        // Files 0, 1 and 2 run; file 3 waits for a free place.
        assert_eq!(started.load(Ordering::SeqCst), 3);
        let mut seen = vec![first];
        while let Some(b) = s.next().await {
            seen.push(b.unwrap());
        }
        let firsts: Vec<i64> = seen
            .iter()
            .map(|b| {
                let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                c.value(0)
            })
            .collect();
        assert_eq!(firsts, vec![0, 1, 2, 1, 11, 12, 2, 21, 22, 3, 31, 32]);
    }

    /// Beyond `files`, a file starts only while the running files' sizes
    /// and its own fit `small_bytes`; a large file waits for the running
    /// ones to end (and never waits alone), and order is kept.
    #[test]
    fn small_files_beyond_the_count_start_while_their_sizes_fit() {
        let started = Arc::new(AtomicUsize::new(0));
        let start = {
            let started = Arc::clone(&started);
            move |(_, n): (u64, i64)| {
                started.fetch_add(1, Ordering::SeqCst);
                futures::stream::iter([Ok(batch(n)), Ok(batch(n))]).boxed()
            }
        };
        let files = [(4, 0), (4, 1), (4, 2), (100, 3), (1, 4), (1, 5)];
        let admission = Admission {
            files: 1,
            max_files: 3,
            small_bytes: 10,
        };
        let s = InFlight::new(
            futures::stream::iter(files),
            start,
            |(size, _)| *size,
            admission,
            true,
        );
        // Each batch's file, with how many files had started when it came.
        let seen: Vec<(i64, usize)> = futures::executor::block_on(
            s.map(|b| {
                let b = b.unwrap();
                let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                (c.value(0), started.load(Ordering::SeqCst))
            })
            .collect(),
        );
        assert_eq!(
            seen,
            [
                // 0 and 1 (8 bytes) run; 2 would make 12.
                (0, 2),
                (0, 2),
                // 0 ended: 2 joins 1.
                (1, 3),
                (1, 3),
                // 3 (100 bytes) waits for 1 and 2 to end, then runs
                // alone; 4 waits for it.
                (2, 3),
                (2, 3),
                (3, 4),
                (3, 4),
                // 4 and 5 run together.
                (4, 6),
                (4, 6),
                (5, 6),
                (5, 6),
            ]
        );
    }

    /// Unordered, a file that gives nothing yet does not hold up the
    /// others: their batches come, and the room they leave starts the
    /// next file.
    #[test]
    fn unordered_files_come_first_ready() {
        let start = |n: i64| {
            if n == 0 {
                futures::stream::pending().boxed()
            } else {
                futures::stream::iter([Ok(batch(n))]).boxed()
            }
        };
        let s = InFlight::new(
            futures::stream::iter(0..4i64),
            start,
            |_| 0,
            Admission::files(3),
            false,
        );
        let firsts: Vec<i64> = futures::executor::block_on(
            s.take(3)
                .map(|b| {
                    let b = b.unwrap();
                    let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                    c.value(0)
                })
                .collect(),
        );
        assert_eq!(firsts, [1, 2, 3]);
    }

    /// Unordered too, small files beyond `files` start while their sizes
    /// fit `small_bytes`.
    #[test]
    fn unordered_small_files_beyond_the_count_start_while_their_sizes_fit() {
        let started = Arc::new(AtomicUsize::new(0));
        let start = {
            let started = Arc::clone(&started);
            move |_: (u64, i64)| {
                started.fetch_add(1, Ordering::SeqCst);
                futures::stream::pending().boxed()
            }
        };
        let admission = Admission {
            files: 1,
            max_files: 3,
            small_bytes: 10,
        };
        let mut s = InFlight::new(
            futures::stream::iter([(4, 0), (4, 1), (4, 2)]),
            start,
            |(size, _)| *size,
            admission,
            false,
        );
        let polled = futures::executor::block_on(futures::future::poll_fn(|cx| {
            Poll::Ready(s.poll_next_unpin(cx).is_pending())
        }));
        assert!(polled);
        // 0 and 1 (8 bytes) run; 2 would make 12.
        assert_eq!(started.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_few_rows_in_large_buffers_are_queued_compacted() {
        let budget = Arc::new(ReadAhead::new(usize::MAX));
        let mut q = Queue {
            items: VecDeque::new(),
            budget: Arc::clone(&budget),
        };
        let large: RecordBatch =
            RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1; 100_000])) as _)])
                .unwrap();
        q.push(Ok(large.slice(10, 3)));
        assert!(budget.queued() < 1024, "{}", budget.queued());
        let out = q.pop().unwrap().unwrap();
        assert_eq!(out.num_rows(), 3);
        assert_eq!(budget.queued(), 0);
    }

    #[test]
    fn outside_a_runtime_the_caller_polls_the_file() {
        let budget = Arc::new(ReadAhead::new(1));
        let s = spawn_file("a".into(), file(3), &budget);
        let got: Vec<_> = futures::executor::block_on(s.collect::<Vec<_>>());
        assert_eq!(got.len(), 3);
        assert_eq!(budget.queued(), 0);
    }
}
