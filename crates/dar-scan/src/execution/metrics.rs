//! [`ScanMetrics`]: a live, cloneable handle on what a scan did.
//!
//! Every stage adds to shared atomic counters as it runs, so a caller can
//! read progress while the stream is still being pulled (or after it was
//! dropped early). I/O comes from the table store's `dar_io::IoMetrics`,
//! taken as the difference from when the scan was planned (other scans of
//! the same table that run at the same time are included in it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dar_io::{IoMetrics, IoSnapshot};

/// A per-file pipeline stage whose time is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// File pruning over the file index (once per plan).
    FilePruning,
    /// Loading (or finding in the cache) a Parquet footer.
    Footer,
    /// Row-group pruning with footer statistics.
    RowGroups,
    /// Loading the page index.
    PageIndex,
    /// Page pruning with the page index.
    Pages,
    /// Loading the deletion vector.
    DeletionVector,
    /// Decoding pages into batches (includes page I/O and the row filter).
    Decode,
    /// Column mapping, casts, missing columns and partition columns.
    Adapt,
    /// The residual predicate after decoding.
    Residual,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 9] = [
        Stage::FilePruning,
        Stage::Footer,
        Stage::RowGroups,
        Stage::PageIndex,
        Stage::Pages,
        Stage::DeletionVector,
        Stage::Decode,
        Stage::Adapt,
        Stage::Residual,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::FilePruning => "file_pruning",
            Stage::Footer => "footer",
            Stage::RowGroups => "row_groups",
            Stage::PageIndex => "page_index",
            Stage::Pages => "pages",
            Stage::DeletionVector => "deletion_vector",
            Stage::Decode => "decode",
            Stage::Adapt => "adapt",
            Stage::Residual => "residual",
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    files_total: AtomicU64,
    files_pruned: AtomicU64,
    files_read: AtomicU64,
    row_groups_total: AtomicU64,
    row_groups_pruned: AtomicU64,
    pages_total: AtomicU64,
    pages_pruned: AtomicU64,
    rows_skipped_by_pages: AtomicU64,
    rows_deleted_by_dv: AtomicU64,
    rows_filtered: AtomicU64,
    rows_filter_evaluated: AtomicU64,
    rows_output: AtomicU64,
    batches_output: AtomicU64,
    files_answered_from_log: AtomicU64,
    index_bytes: AtomicU64,
    stats_columns_parsed: AtomicU64,
    stats_files_unavailable: AtomicU64,
    /// Field lookups made resolving files' columns (tests check they grow
    /// with files times columns, never with batches).
    column_lookups: AtomicU64,
    stage_nanos: [AtomicU64; 9],
}

/// A live, cloneable handle on a scan's counters. Clones share them.
#[derive(Debug, Clone)]
pub struct ScanMetrics {
    counters: Arc<Counters>,
    io: IoMetrics,
    io_start: IoSnapshot,
}

/// A point-in-time copy of [`ScanMetrics`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct MetricsSnapshot {
    /// Active files in the snapshot.
    pub files_total: u64,
    /// Files pruned with the file index (partition values and stats).
    pub files_pruned: u64,
    /// Files whose footer was read.
    pub files_read: u64,
    /// Files counted from the log without reading them (count queries).
    pub files_answered_from_log: u64,
    /// Bytes the snapshot's file index held once the files were pruned
    /// (paths, sizes, partition values, DVs, counts, the column stats
    /// parsed so far and the compressed stats they are parsed from).
    pub index_bytes: u64,
    /// Columns whose file statistics planning parsed (a column's are
    /// parsed once per snapshot, by the first plan that needs them).
    pub stats_columns_parsed: u64,
    /// Files whose column statistics planning could not read again (a
    /// local checkpoint file gone or replaced since the open): kept, as
    /// files without statistics.
    pub stats_files_unavailable: u64,
    /// Row groups in the footers read.
    pub row_groups_total: u64,
    /// Row groups pruned with footer statistics, the page index or the DV.
    pub row_groups_pruned: u64,
    /// Page segments examined with the page index.
    pub pages_total: u64,
    /// Page segments pruned with the page index.
    pub pages_pruned: u64,
    /// Rows skipped because their pages were pruned.
    pub rows_skipped_by_pages: u64,
    /// Rows removed by deletion vectors (in the row groups read).
    pub rows_deleted_by_dv: u64,
    /// Rows decoded then dropped by the predicate.
    pub rows_filtered: u64,
    /// Rows the row filter's steps evaluated, summed over the steps: each
    /// step decodes its columns only for the rows earlier steps kept, so
    /// this is below rows read times steps when early steps filter.
    pub rows_filter_evaluated: u64,
    /// Rows returned.
    pub rows_output: u64,
    /// Batches returned.
    pub batches_output: u64,
    /// Time spent in each stage, in [`Stage::ALL`] order.
    pub stage_time: Vec<(Stage, Duration)>,
    /// Requests and bytes by object class since the scan was planned.
    pub io: IoSnapshot,
}

impl MetricsSnapshot {
    /// Every counter with its name (`files_total`, `files_pruned`, ...), for
    /// adapters that export them (DataFusion metrics, Python dicts).
    pub fn counters(&self) -> [(&'static str, u64); 17] {
        [
            ("files_total", self.files_total),
            ("files_pruned", self.files_pruned),
            ("index_bytes", self.index_bytes),
            ("stats_columns_parsed", self.stats_columns_parsed),
            ("stats_files_unavailable", self.stats_files_unavailable),
            ("files_read", self.files_read),
            ("files_answered_from_log", self.files_answered_from_log),
            ("row_groups_total", self.row_groups_total),
            ("row_groups_pruned", self.row_groups_pruned),
            ("pages_total", self.pages_total),
            ("pages_pruned", self.pages_pruned),
            ("rows_skipped_by_pages", self.rows_skipped_by_pages),
            ("rows_deleted_by_dv", self.rows_deleted_by_dv),
            ("rows_filtered", self.rows_filtered),
            ("rows_filter_evaluated", self.rows_filter_evaluated),
            ("rows_output", self.rows_output),
            ("batches_output", self.batches_output),
        ]
    }

    /// Time spent in `stage`.
    pub fn time(&self, stage: Stage) -> Duration {
        self.stage_time
            .iter()
            .find(|(s, _)| *s == stage)
            .map(|(_, d)| *d)
            .unwrap_or_default()
    }
}

macro_rules! adders {
    ($($(#[$doc:meta])* $fn:ident => $field:ident),* $(,)?) => {
        $( $(#[$doc])* pub(crate) fn $fn(&self, n: u64) {
            self.counters.$field.fetch_add(n, Ordering::Relaxed);
        } )*
    };
}

impl ScanMetrics {
    /// A fresh handle measuring I/O on `io` from now on.
    pub fn new(io: IoMetrics) -> Self {
        let io_start = io.snapshot();
        Self {
            counters: Arc::default(),
            io,
            io_start,
        }
    }

    adders! {
        add_files_total => files_total,
        add_files_pruned => files_pruned,
        add_files_read => files_read,
        add_files_answered_from_log => files_answered_from_log,
        add_index_bytes => index_bytes,
        add_stats_columns_parsed => stats_columns_parsed,
        add_stats_files_unavailable => stats_files_unavailable,
        add_row_groups_total => row_groups_total,
        add_row_groups_pruned => row_groups_pruned,
        add_pages_total => pages_total,
        add_pages_pruned => pages_pruned,
        add_rows_skipped_by_pages => rows_skipped_by_pages,
        add_rows_deleted_by_dv => rows_deleted_by_dv,
        add_rows_filtered => rows_filtered,
        add_rows_filter_evaluated => rows_filter_evaluated,
        add_rows_output => rows_output,
        add_batches_output => batches_output,
        add_column_lookups => column_lookups,
    }

    /// Field lookups made resolving files' columns so far.
    #[cfg(test)]
    pub(crate) fn column_lookups(&self) -> u64 {
        self.counters.column_lookups.load(Ordering::Relaxed)
    }

    /// Adds `elapsed` to `stage`.
    pub(crate) fn add_time(&self, stage: Stage, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.counters.stage_nanos[stage.index()].fetch_add(nanos, Ordering::Relaxed);
    }

    /// Starts timing `stage`; the time is added when the guard drops.
    pub(crate) fn time(&self, stage: Stage) -> StageTimer<'_> {
        StageTimer {
            metrics: self,
            stage,
            start: Instant::now(),
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let c = &self.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        MetricsSnapshot {
            files_total: get(&c.files_total),
            files_pruned: get(&c.files_pruned),
            files_read: get(&c.files_read),
            files_answered_from_log: get(&c.files_answered_from_log),
            index_bytes: get(&c.index_bytes),
            stats_columns_parsed: get(&c.stats_columns_parsed),
            stats_files_unavailable: get(&c.stats_files_unavailable),
            row_groups_total: get(&c.row_groups_total),
            row_groups_pruned: get(&c.row_groups_pruned),
            pages_total: get(&c.pages_total),
            pages_pruned: get(&c.pages_pruned),
            rows_skipped_by_pages: get(&c.rows_skipped_by_pages),
            rows_deleted_by_dv: get(&c.rows_deleted_by_dv),
            rows_filtered: get(&c.rows_filtered),
            rows_filter_evaluated: get(&c.rows_filter_evaluated),
            rows_output: get(&c.rows_output),
            batches_output: get(&c.batches_output),
            stage_time: Stage::ALL
                .iter()
                .map(|s| (*s, Duration::from_nanos(get(&c.stage_nanos[s.index()]))))
                .collect(),
            io: self.io.snapshot().since(&self.io_start),
        }
    }
}

/// Adds the time since its creation to a stage when dropped.
pub(crate) struct StageTimer<'a> {
    metrics: &'a ScanMetrics,
    stage: Stage,
    start: Instant,
}

impl Drop for StageTimer<'_> {
    fn drop(&mut self) {
        self.metrics.add_time(self.stage, self.start.elapsed());
    }
}
