//! [`CheckpointIo`]: how checkpoint and sidecar Parquet is fetched, through
//! dar-io's [`ParquetReader`] like every other Parquet file: its range
//! planner, body-length checks, footer cache and metering (every request
//! tagged [`ObjectClass::Checkpoint`]).

use std::sync::{Arc, OnceLock};

use futures::FutureExt;
use futures::future::BoxFuture;

use dar_io::{CostModel, LocalFiles, MetadataCache, ObjectClass, ParquetReader, StoreId};
use object_store::ObjectStore;
use object_store::path::Path;

use crate::error::Result;

/// Checkpoint files up to this size are read with a single request and
/// decoded from memory: a footer request plus column-chunk requests cost
/// more round trips than the few extra bytes.
pub const WHOLE_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// The request latency from which a read counts as a round trip (object
/// storage) rather than a local read.
const ROUND_TRIP_LATENCY: std::time::Duration = std::time::Duration::from_millis(1);

/// Bytes of checkpoint parts or sidecars read and decoded at once, as far
/// as [`MAX_FILES_IN_FLIGHT`] allows: each holds its column chunks in
/// memory until decoded.
pub(super) const READAHEAD_BYTES: u64 = 256 << 20;

/// At most this many checkpoint parts or sidecars are read and decoded at
/// once (at least 2): on object storage each read is a round trip, so a
/// checkpoint of many small files is read in a few rounds, while the
/// decoding of them all shares the cores (see [`CheckpointIo`]).
pub const MAX_FILES_IN_FLIGHT: usize = 64;

/// The checkpoint files of `sizes` (`None`: unknown) to keep in flight:
/// as many of the largest as fit [`READAHEAD_BYTES`], 2 to
/// [`MAX_FILES_IN_FLIGHT`].
pub(super) fn files_in_flight(sizes: impl Iterator<Item = Option<u64>>) -> usize {
    let largest = sizes
        .map(|s| s.unwrap_or(READAHEAD_BYTES / 8))
        .max()
        .unwrap_or(1)
        .max(1);
    usize::try_from(READAHEAD_BYTES / largest)
        .unwrap_or(usize::MAX)
        .clamp(2, MAX_FILES_IN_FLIGHT)
}

/// The footer cache and cost model checkpoint reads share. Clones share the
/// cache, so loads of one table through one [`crate::SnapshotBuilder`] (and
/// its clones) parse each checkpoint footer once; hand it a table's
/// [`dar_io::TableStore::metadata_cache`] to share that table's.
#[derive(Debug, Clone, Default)]
pub struct CheckpointIo {
    /// Made at the first checkpoint read (a log without checkpoints needs
    /// none), and shared by clones from then on.
    cache: Arc<OnceLock<MetadataCache>>,
    cost: Option<Arc<CostModel>>,
    /// Decode on the runtime's other threads (see [`CheckpointIo::with_parallel_decode`]).
    sequential: bool,
    /// Read through a byte-range cache (see [`CheckpointIo::with_range_cache`]).
    range_cache: Option<(dar_io::RangeCache, dar_io::IoMetrics)>,
    /// The store's identity in cache keys (see [`CheckpointIo::with_store_id`]);
    /// without one, an identity of this value's own, made at the first read
    /// and shared by clones.
    store_id: Arc<OnceLock<StoreId>>,
    /// Direct reads of local checkpoint files (see [`CheckpointIo::with_local_files`]).
    local: Option<LocalFiles>,
    /// The columns whose statistics decode with the counts (see
    /// [`CheckpointIo::with_stats_loading`]).
    stats: crate::StatsLoading,
}

impl CheckpointIo {
    /// A fresh 64 MiB footer cache and dar-io's remote cost defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Shares `cache` for checkpoint footers.
    pub fn with_metadata_cache(mut self, cache: MetadataCache) -> Self {
        self.cache = Arc::new(OnceLock::from(cache));
        self
    }

    /// Plans range reads of large checkpoints with `cost` (for example the
    /// table store's, which learns from its requests).
    pub fn with_cost_model(mut self, cost: Arc<CostModel>) -> Self {
        self.cost = Some(cost);
        self
    }

    /// Reads checkpoint parts and sidecars through `cache` (its disk tier:
    /// the checkpoint of a table another process read is not fetched
    /// again), counted in `metrics`.
    pub fn with_range_cache(
        mut self,
        cache: dar_io::RangeCache,
        metrics: dar_io::IoMetrics,
    ) -> Self {
        self.range_cache = cache.is_enabled().then_some((cache, metrics));
        self
    }

    /// The identity of the store the checkpoints live in, the store part
    /// of their cache keys (footer and byte-range caches); without it
    /// this value and its clones key them under an identity of their own,
    /// shared with no other store.
    pub fn with_store_id(mut self, store: StoreId) -> Self {
        self.store_id = Arc::new(OnceLock::from(store));
        self
    }

    /// Reads of the table's files on local disk (the table store's
    /// [`dar_io::TableStore::local_files`]), when its store is one: the
    /// stats chunks a checkpoint's counts were decoded from are then let
    /// go, and read again from the file when a query needs them (see
    /// [`RetainedStats`](super::RetainedStats)).
    pub fn with_local_files(mut self, local: Option<LocalFiles>) -> Self {
        self.local = local;
        self
    }

    /// Decodes the statistics of the columns `loading` selects in the
    /// pass that decodes a checkpoint file's counts, when the table's
    /// protocol and metadata are known by then (see
    /// [`crate::StatsLoading::Columns`]); by default none.
    pub fn with_stats_loading(mut self, loading: crate::StatsLoading) -> Self {
        self.stats = loading;
        self
    }

    /// The columns set by [`CheckpointIo::with_stats_loading`].
    pub(super) fn stats_loading(&self) -> &crate::StatsLoading {
        &self.stats
    }

    /// The local reads set by [`CheckpointIo::with_local_files`].
    pub(super) fn local_files(&self) -> Option<&LocalFiles> {
        self.local.as_ref()
    }

    /// Whether checkpoint parts, sidecars and the stats of each decode as
    /// tasks of their own on a multi-thread Tokio runtime (default: true),
    /// or all on the task that loads the snapshot. The result is the same.
    pub fn with_parallel_decode(mut self, parallel: bool) -> Self {
        self.sequential = !parallel;
        self
    }

    /// Whether the cost model this reads with says each read is a round
    /// trip (a request latency of a millisecond or more: object storage),
    /// so that many small reads are better all in flight at once. False
    /// without a cost model.
    pub(crate) fn reads_are_round_trips(&self) -> bool {
        self.request_latency()
            .is_some_and(|l| l >= ROUND_TRIP_LATENCY)
    }

    /// Whether the cost model this reads with says reads are local (a
    /// request latency under a millisecond): a read then takes a fraction
    /// of the time its decoding does. False without a cost model (the
    /// store is unknown).
    pub(crate) fn reads_are_local(&self) -> bool {
        self.request_latency()
            .is_some_and(|l| l < ROUND_TRIP_LATENCY)
    }

    /// The request latency of the cost model this reads with, if any.
    fn request_latency(&self) -> Option<std::time::Duration> {
        self.cost.as_ref().map(|c| c.defaults().request_latency)
    }

    /// How many of the checkpoint files of `sizes` to keep in flight (see
    /// [`files_in_flight`]); on local storage at most one more than the
    /// files that can decode at once (one per core, see [`Self::run_cpu`]):
    /// a file read ahead holds its column chunks, compressed, until a
    /// core decodes it, and a local read is quick to redo when a core
    /// frees up. (Eight sidecars of a million-file table, all in flight,
    /// held 80 MB of chunks, while two decoded.)
    pub(super) fn files_in_flight(&self, sizes: impl Iterator<Item = Option<u64>>) -> usize {
        let n = files_in_flight(sizes);
        if self.reads_are_local() {
            n.min(crate::parallel::cores() + 1)
        } else {
            n
        }
    }

    /// Whether decoding is spread over threads (see
    /// [`CheckpointIo::with_parallel_decode`]).
    pub(crate) fn parallel(&self) -> bool {
        !self.sequential
    }

    /// The runtime to spread decoding over, if any.
    fn parallel_runtime(&self) -> Option<tokio::runtime::Handle> {
        if self.sequential {
            return None;
        }
        let handle = tokio::runtime::Handle::try_current().ok()?;
        (handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread).then_some(handle)
    }

    /// Runs `work` (decoding of `path`) on one of the process's decoding
    /// threads when decoding in parallel, else at once; the result comes
    /// back through the future. In parallel, the work waits for a free
    /// thread (one per core, see [`crate::parallel`]): however many parts
    /// and sidecars are in flight, at most one decoding task per core runs.
    pub(crate) fn run_cpu<T: Send + 'static>(
        &self,
        path: &str,
        work: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> BoxFuture<'static, Result<T>> {
        match self.parallel_runtime() {
            Some(_) => {
                let name = path.to_string();
                let done = crate::parallel::spawn(work);
                async move {
                    done.await
                        .unwrap_or_else(|| Err(super::decoding_failed(&name, "a thread panicked")))
                }
                .boxed()
            }
            None => futures::future::ready(work()).boxed(),
        }
    }

    /// Runs `work` (the reading of `path`) as a task of its own when
    /// decoding in parallel, else on the caller's task.
    pub(crate) fn spawn<T: Send + 'static>(
        &self,
        path: &str,
        work: impl Future<Output = Result<T>> + Send + 'static,
    ) -> BoxFuture<'static, Result<T>> {
        match self.parallel_runtime() {
            Some(rt) => joined(rt.spawn(work), path),
            None => work.boxed(),
        }
    }

    /// The footer cache.
    pub fn metadata_cache(&self) -> &MetadataCache {
        self.cache.get_or_init(MetadataCache::default)
    }

    /// A reader of the checkpoint part or sidecar at `path` of `size` bytes.
    pub(crate) fn reader(
        &self,
        store: &Arc<dyn ObjectStore>,
        path: &Path,
        size: u64,
    ) -> ParquetReader {
        let reader = ParquetReader::new(Arc::clone(store), path.clone())
            .with_size(Some(size))
            .with_cache(Some(self.metadata_cache().clone()))
            .with_object_class(ObjectClass::Checkpoint)
            .with_whole_object_threshold(WHOLE_FILE_LIMIT);
        let reader = reader.with_store_id(self.store_id.get_or_init(StoreId::unique).clone());
        let reader = match &self.range_cache {
            Some((cache, metrics)) => reader.with_range_cache(Some(cache.clone()), metrics.clone()),
            None => reader,
        };
        match &self.cost {
            Some(cost) => reader.with_cost_model(Arc::clone(cost)),
            None => reader,
        }
    }
}

/// The result of `task` (the decoding of `path`); a task that panicked or
/// was cancelled is an error naming the file.
fn joined<T: Send + 'static>(
    task: tokio::task::JoinHandle<Result<T>>,
    path: &str,
) -> BoxFuture<'static, Result<T>> {
    let path = path.to_string();
    async move { task.await.map_err(|e| super::decoding_failed(&path, e))? }.boxed()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Parts in flight: as many of the largest as fit the read-ahead bytes,
    /// 2 to the cap (an unknown size counts as an eighth of the bytes).
    #[test]
    fn files_in_flight_are_bounded_by_bytes_and_count() {
        let mib = |n: u64| Some(n << 20);
        assert_eq!(
            files_in_flight([mib(1); 500].into_iter()),
            MAX_FILES_IN_FLIGHT
        );
        assert_eq!(files_in_flight([mib(1), mib(64)].into_iter()), 4);
        assert_eq!(files_in_flight([mib(200); 9].into_iter()), 2);
        assert_eq!(files_in_flight([None, mib(1)].into_iter()), 8);
        assert_eq!(files_in_flight(std::iter::empty()), MAX_FILES_IN_FLIGHT);
    }

    /// On local storage no more files are read ahead than can decode at
    /// once, plus one; on object storage (or an unknown store) the bytes
    /// and count bounds alone apply.
    #[test]
    fn local_reads_keep_one_file_more_than_the_cores_in_flight() {
        let mib = |n: u64| Some(n << 20);
        let sidecars = || [mib(10); 8].into_iter();
        let with = |params| CheckpointIo::new().with_cost_model(Arc::new(CostModel::new(params)));
        let local = with(dar_io::CostParams::local());
        assert_eq!(files_in_flight(sidecars()), 25);
        assert_eq!(
            local.files_in_flight(sidecars()),
            crate::parallel::cores() + 1
        );
        let remote = with(dar_io::CostParams::remote());
        assert_eq!(remote.files_in_flight(sidecars()), 25);
        assert_eq!(CheckpointIo::new().files_in_flight(sidecars()), 25);
    }

    /// Decoding tasks of many checkpoint files started at once run at most
    /// one per core (before: one blocking thread each, all at once).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn decoding_tasks_run_at_most_one_per_core() {
        let io = CheckpointIo::new();
        let busy = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..4 * crate::parallel::cores() + 2)
            .map(|i| {
                let (busy, peak) = (Arc::clone(&busy), Arc::clone(&peak));
                io.run_cpu(&format!("part {i}"), move || {
                    let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(30));
                    busy.fetch_sub(1, Ordering::SeqCst);
                    Ok(i)
                })
            })
            .collect();
        let done = futures::future::try_join_all(tasks).await.unwrap();
        assert_eq!(done.len(), 4 * crate::parallel::cores() + 2);
        let peak = peak.load(Ordering::SeqCst);
        assert!(
            (1..=crate::parallel::cores()).contains(&peak),
            "{peak} decoding tasks at once on {} cores",
            crate::parallel::cores()
        );
    }
}
