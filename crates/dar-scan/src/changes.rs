//! [`ChangesBuilder`]: a change data feed as a [`ScanPlan`], another
//! chain of the same per-file values as a scan.
//!
//! ```text
//! Table::changes(start, end)
//! ChangesBuilder::open ── dar-log ChangeFeed (range resolved, end checked)
//!   │                      ─► ChangeScan
//! commits streamed (read a few ahead, parsed once, the configuration
//!   │   evolved commit by commit): per commit a FileIndex of its change
//!   │   files ─► dar-prune over it ─► ScanTask per kept file:
//!   │   `_commit_version` and `_commit_timestamp` as partition values,
//!   │   `_change_type` a task column (the action's, or the cdc file's
//!   │   own), `paired_dv` for the two sides of a replaced DV
//!   ├─ ChangeScan::execute: each commit's tasks to the one executor as
//!   │  they come (rows of the first commits before later ones are read)
//!   └─ ChangeScan::plan / ChangesBuilder::build: every task collected
//!      into a ScanPlan (engines that split or ship tasks)
//! ```
//!
//! The output is the table's logical columns at the end version (or the
//! projected ones) and, always, `_change_type` (utf8), `_commit_version`
//! (int64) and `_commit_timestamp` (timestamp µs UTC), never null. The
//! predicate may name them too: the version, the timestamp and (for adds
//! and removes) the change type prune whole files before any I/O, like
//! partition values.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use dar_log::changes::CHANGE_COLUMNS;
use dar_log::checkpoint::CheckpointIo;
use dar_log::{ChangeBound, ChangeFeed, CommitChanges};
use dar_prune::Scalar;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};

use crate::errors::error::Result;
use crate::execution::context::ScanContext;
use crate::execution::exec;
use crate::execution::metrics::{ScanMetrics, Stage};
use crate::execution::stages;
use crate::planning::builder::runtime_for;
use crate::planning::file_pruning as files;
use crate::planning::plan::ScanPlan;
use crate::planning::scan_options::{ScanOptions, scan_option_setters};
use crate::planning::spec::{ScanSpec, SpecSource};
use crate::planning::task::ScanTask;
use crate::table::Table;

/// The `_change_type` column.
pub const CHANGE_TYPE: &str = CHANGE_COLUMNS[0];
/// The `_commit_version` column.
pub const COMMIT_VERSION: &str = CHANGE_COLUMNS[1];
/// The `_commit_timestamp` column.
pub const COMMIT_TIMESTAMP: &str = CHANGE_COLUMNS[2];

/// Change files in flight per file a scan keeps in flight (on object
/// storage: while they are small, see [`SMALL_CHANGE_FILE_BYTES`]).
const CHANGE_FILES_PER_SCAN_FILE: usize = 4;

/// On object storage, what the change files in flight beyond a scan's
/// may hold in all (their sizes by the log): a feed's files are mostly a
/// commit's few small ones, each a round trip, so 64 at a time took a
/// round trip per 64 files; more small ones run together within this.
const SMALL_CHANGE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The three change columns, declared non-null.
fn change_fields() -> [Field; 3] {
    [
        Field::new(CHANGE_TYPE, DataType::Utf8, false),
        Field::new(COMMIT_VERSION, DataType::Int64, false),
        Field::new(
            COMMIT_TIMESTAMP,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
    ]
}

impl Table {
    /// Starts describing the change data feed of versions `start..=end`
    /// (`end`: the latest version when `None`). A timestamp start is the
    /// first commit at or after it, a timestamp end the last commit at or
    /// before it. The range is resolved against the log when the plan is
    /// built, whichever version this table was opened at.
    pub fn changes(&self, start: ChangeBound, end: Option<ChangeBound>) -> ChangesBuilder {
        ChangesBuilder {
            table: self.clone(),
            options: ScanOptions::new(),
            start,
            end,
            add_change_columns: true,
        }
    }
}

/// Describes a change data feed of a [`Table`]; consuming `with_*`
/// setters (those of [`ScanOptions`], or [`ChangesBuilder::with_options`]
/// for all at once). The three change columns follow the projected ones
/// unless listed ([`ChangesBuilder::with_only_columns`]: only where
/// listed); a predicate may name them; order is commit order.
#[derive(Debug, Clone)]
pub struct ChangesBuilder {
    table: Table,
    options: ScanOptions,
    start: ChangeBound,
    end: Option<ChangeBound>,
    /// Whether the change columns follow the projected ones unless listed.
    add_change_columns: bool,
}

scan_option_setters!(ChangesBuilder);

impl ChangesBuilder {
    /// Exactly these output columns (paths), the change columns only where
    /// listed: for engines that project the feed's schema themselves (an
    /// empty list counts rows).
    pub fn with_only_columns(mut self, paths: Vec<Vec<String>>) -> Self {
        self.options = self.options.with_column_paths(paths);
        self.add_change_columns = false;
        self
    }

    /// Opens the feed: resolves the range against the log and checks its
    /// end (its schema is the feed's); no commit of the range is read yet.
    /// Run it commit by commit with [`ChangeScan::execute`], or collect
    /// its tasks with [`ChangeScan::plan`].
    ///
    /// # Errors
    ///
    /// [`ScanError::Log`] for a range the log cannot give: a start after
    /// the end or beyond the latest version, a start timestamp after the
    /// last commit or an end timestamp before the first, a commit removed
    /// by log cleanup, an end version dar cannot read; the errors of
    /// [`ScanBuilder::build`] for options, columns and the predicate.
    ///
    /// [`ScanError::Log`]: crate::ScanError::Log
    pub async fn open(self) -> Result<ChangeScan> {
        let (table, feed, context) = self.prepare().await?;
        Ok(ChangeScan {
            table,
            feed,
            context,
        })
    }

    /// Resolves the range, reads its commits (concurrently, each once,
    /// none kept), prunes their change files with the predicate and
    /// returns the plan: one [`crate::ScanTask`] per change file, in
    /// commit order. For an engine that splits or ships the tasks; to read
    /// the rows, [`ChangesBuilder::open`] and [`ChangeScan::execute`]
    /// stream them commit by commit instead.
    ///
    /// # Errors
    ///
    /// As [`ChangesBuilder::open`], and the refusals only a commit shows:
    /// the feed off or a schema change the end schema cannot read at the
    /// start or at some version of the range (each names the version).
    pub async fn build(self) -> Result<ScanPlan> {
        self.open().await?.plan().await
    }

    /// The feed's output schema (as [`ScanPlan::schema`] of its plan)
    /// without reading the commits of the range: for an engine that
    /// plans before it scans (the log is listed, and replayed only when
    /// the range ends before the latest version).
    ///
    /// # Errors
    ///
    /// As [`ChangesBuilder::open`].
    pub async fn schema(self) -> Result<arrow_schema::SchemaRef> {
        Ok(Arc::clone(self.open().await?.schema()))
    }

    /// The feed opened, and the scan's context: everything before the
    /// commits are read.
    async fn prepare(self) -> Result<(Table, ChangeFeed, ScanContext)> {
        let table = self.table.clone();
        let mut runtime = runtime_for(&table, self.options.concurrency());
        let store = table.store();
        if self.options.concurrency().is_none() {
            let remote = store.backend().is_remote();
            let more = CHANGE_FILES_PER_SCAN_FILE
                * crate::execution::runtime::default_files_in_flight(remote);
            runtime = if remote {
                // Each small file is one round trip (read whole): up to
                // `more` of them at once, within the byte bound.
                runtime.with_small_files_in_flight(more, SMALL_CHANGE_FILE_BYTES)
            } else {
                // A feed's files are one commit's each, mostly small: with
                // one file per core, cores wait on each file's few reads
                // (handed to blocking threads); more in flight keep them
                // busy, within the same read-ahead budget.
                runtime.with_concurrency(more)
            };
        }
        let io = CheckpointIo::new()
            .with_store_id(store.store_id().clone())
            .with_metadata_cache(store.metadata_cache().clone())
            .with_cost_model(Arc::clone(store.cost_model()))
            .with_local_files(store.local_files().cloned());
        // The table's snapshot stands for the latest state when it is one.
        let feed = ChangeFeed::open_at(table.snapshot(), &io, self.start, self.end)
            .await
            .map_err(|e| table.log_error(e))?;
        let declared = feed
            .schema()
            .to_arrow(feed.column_mapping_mode())
            .map_err(|e| table.log_error(e))?;
        let mut fields: Vec<Field> = declared
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.extend(change_fields());
        let options = self.options.resolve()?;
        let mut columns: Vec<Vec<String>> = options.columns.clone().unwrap_or_else(|| {
            declared
                .fields()
                .iter()
                .map(|f| vec![f.name().clone()])
                .collect()
        });
        for name in CHANGE_COLUMNS.iter().filter(|_| self.add_change_columns) {
            if !columns.iter().any(|c| c.len() == 1 && c[0] == *name) {
                columns.push(vec![name.to_string()]);
            }
        }
        let mut partition_columns = feed.metadata().partition_columns.clone();
        partition_columns.extend([COMMIT_VERSION.to_string(), COMMIT_TIMESTAMP.to_string()]);
        let spec = ScanSpec::new(
            SpecSource {
                table_uri: table.uri().to_string(),
                version: feed.end(),
                schema: Schema::new(fields),
                column_mapping: feed.column_mapping_mode(),
                partition_columns,
                task_columns: vec![CHANGE_TYPE.to_string()],
            },
            columns,
            options,
        );
        let context = ScanContext::new(spec, runtime)?;
        Ok((table, feed, context))
    }
}

/// A change data feed opened ([`ChangesBuilder::open`]): its range
/// resolved to versions and its end checked, ready to run.
#[derive(Debug, Clone)]
pub struct ChangeScan {
    table: Table,
    feed: ChangeFeed,
    context: ScanContext,
}

impl ChangeScan {
    /// The first version of the range.
    pub fn start(&self) -> u64 {
        self.feed.start()
    }

    /// The last version of the range.
    pub fn end(&self) -> u64 {
        self.feed.end()
    }

    /// The output schema.
    pub fn schema(&self) -> &arrow_schema::SchemaRef {
        self.context.schema()
    }

    /// The running metrics of this feed's runs.
    pub fn metrics(&self) -> &ScanMetrics {
        self.context.metrics()
    }

    /// Runs the feed commit by commit: the state before the start is
    /// replayed and checked first; then each commit is read (a few ahead
    /// of the files being read), its change files pruned and read as soon
    /// as it is parsed, so the rows of the first commits come out before
    /// the later commits are read, and a limit stops reading commits too.
    /// Batches come in commit order unless the scan is unordered.
    ///
    /// # Errors
    ///
    /// The stream's items: the refusals of [`ChangesBuilder::build`]
    /// (after the rows of the commits before a refused one), and those of
    /// [`ScanPlan::execute`].
    pub fn execute(&self) -> BoxStream<'static, Result<RecordBatch>> {
        let this = self.clone();
        let error = self.table.clone();
        let tasks = self
            .commits()
            .map_err(move |e| error.log_error(e))
            .and_then(move |commit| {
                let tasks = this.tasks_of(&commit).inspect(|tasks| {
                    let (_, runtime, running) = this.context.parts();
                    stages::dv::note(tasks, runtime, &running.dv_files);
                });
                futures::future::ready(tasks.map(|t| futures::stream::iter(t.into_iter().map(Ok))))
            })
            .try_flatten()
            .boxed();
        exec::run_stream(&self.context, tasks)
    }

    /// Runs the feed and collects the batches.
    ///
    /// # Errors
    ///
    /// As [`ChangeScan::execute`].
    pub async fn collect(&self) -> Result<Vec<RecordBatch>> {
        self.execute().try_collect().await
    }

    /// Reads every commit of the range and returns the plan of all its
    /// change files (see [`ChangesBuilder::build`]).
    ///
    /// # Errors
    ///
    /// As [`ChangesBuilder::build`].
    pub async fn plan(&self) -> Result<ScanPlan> {
        let mut tasks = Vec::new();
        let mut commits = self.commits();
        while let Some(commit) = commits
            .try_next()
            .await
            .map_err(|e| self.table.log_error(e))?
        {
            tasks.extend(self.tasks_of(&commit)?);
        }
        Ok(ScanPlan::new(self.context.clone(), tasks))
    }

    /// The commits of the range, read as many ahead as the scan may have
    /// files in flight (up to 256 small ones on object storage, where each
    /// read is a round trip), at least 8.
    fn commits(&self) -> BoxStream<'static, dar_log::Result<CommitChanges>> {
        let ahead = self.context.runtime().admission().max_files.max(8);
        self.feed.commits_ahead(ahead)
    }

    /// The tasks of the change files of `commit` that the predicate keeps.
    fn tasks_of(&self, commit: &CommitChanges) -> Result<Vec<ScanTask>> {
        let table = &self.table;
        let metrics = self.context.metrics();
        let state = self.context.state();
        let logical = state.predicate.as_ref().map(|p| &p.logical);
        let properties = &self.feed.metadata().configuration;
        let index = &commit.files;
        let micros = commit.timestamp_ms.saturating_mul(1000);
        let version = i64::try_from(commit.version).unwrap_or(i64::MAX);
        let (kept, pruned) = {
            let _t = metrics.time(Stage::FilePruning);
            // The commit's version and timestamp prune like partition
            // values: exact for every file of the commit.
            let n = index.len();
            let constants: [(&str, ArrayRef); 2] = [
                (COMMIT_VERSION, Arc::new(Int64Array::from(vec![version; n]))),
                (
                    COMMIT_TIMESTAMP,
                    Arc::new(TimestampMicrosecondArray::from(vec![micros; n]).with_timezone("UTC")),
                ),
            ];
            let kinds: ArrayRef = Arc::new(StringArray::from(
                commit
                    .sources
                    .iter()
                    .map(|s| s.change_type())
                    .collect::<Vec<_>>(),
            ));
            let known = [(CHANGE_TYPE, kinds)];
            let extra = files::ExtraColumns {
                constants: &constants,
                known: &known,
            };
            files::prune_with(index, properties, logical, &extra).map_err(|e| table.log_error(e))?
        };
        metrics.add_files_total(index.len() as u64);
        metrics.add_index_bytes(index.memory_size() as u64);
        metrics.add_files_pruned(pruned as u64);
        let mut tasks = Vec::with_capacity(kept.len());
        for i in kept {
            let mut task = files::task(index, i).map_err(|e| table.log_error(e))?;
            task.paired_dv = commit.paired_dv[i].clone();
            task.partition_values.extend([
                (COMMIT_VERSION.to_string(), Scalar::Int64(version)),
                (COMMIT_TIMESTAMP.to_string(), Scalar::Timestamp(micros)),
            ]);
            if let Some(kind) = commit.sources[i].change_type() {
                task.partition_values
                    .push((CHANGE_TYPE.to_string(), Scalar::Utf8(kind.to_string())));
            }
            tasks.push(task);
        }
        Ok(tasks)
    }
}
