//! [`ScanBuilder`]: what to read (columns, predicate, limit) and how (batch
//! size, concurrency, order); [`ScanBuilder::build`] prunes files and
//! yields a [`ScanPlan`].

use std::sync::Arc;

use dar_prune::Expr;

use crate::errors::error::{Result, ScanError};
use crate::execution::context::ScanContext;
use crate::execution::metrics::Stage;
use crate::execution::runtime::ScanRuntime;
use crate::planning::file_pruning as files;
use crate::planning::plan::ScanPlan;
use crate::planning::spec::{ScanSpec, producer};
use crate::table::Table;

/// Default rows per output batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// A predicate as the caller gave it: an expression, or SQL text parsed at
/// build time.
#[derive(Debug, Clone)]
pub(crate) enum PredicateInput {
    Expr(Expr),
    Sql(String),
}

impl PredicateInput {
    /// The expression (SQL text parsed).
    pub(crate) fn into_expr(self) -> Result<Expr> {
        match self {
            Self::Expr(e) => Ok(e),
            Self::Sql(s) => dar_prune::parse_expr(&s).map_err(|source| ScanError::Predicate {
                source: Box::new(source),
            }),
        }
    }
}

impl Table {
    /// Starts describing a scan.
    pub fn scan(&self) -> ScanBuilder {
        ScanBuilder::new(self.clone())
    }
}

/// Describes a scan of a [`Table`]; consuming `with_*` setters.
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    pub(crate) table: Table,
    pub(crate) columns: Option<Vec<Vec<String>>>,
    pub(crate) predicate: Option<PredicateInput>,
    pub(crate) limit: Option<usize>,
    pub(crate) batch_size: usize,
    pub(crate) concurrency: Option<usize>,
    pub(crate) ordered: bool,
    pub(crate) view_types: bool,
}

impl ScanBuilder {
    pub(crate) fn new(table: Table) -> Self {
        Self {
            table,
            columns: None,
            predicate: None,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
            concurrency: None,
            ordered: true,
            view_types: false,
        }
    }

    /// Output columns, in this order: top-level names or dotted paths to
    /// struct fields (`"a.b"`, output as a column named `a.b`). An empty
    /// list reads no column: batches carry only row counts (a count).
    /// Default: every column of the table.
    pub fn with_columns(mut self, columns: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        self.columns = Some(
            columns
                .into_iter()
                .map(|c| c.as_ref().split('.').map(str::to_string).collect())
                .collect(),
        );
        self
    }

    /// Output columns as explicit paths (for names that contain dots).
    pub fn with_column_paths(mut self, paths: Vec<Vec<String>>) -> Self {
        self.columns = Some(paths);
        self
    }

    /// Only rows for which `predicate` is true (SQL three-valued logic).
    pub fn with_predicate(mut self, predicate: Expr) -> Self {
        self.predicate = Some(PredicateInput::Expr(predicate));
        self
    }

    /// Only rows for which the SQL text `predicate` is true (parsed by
    /// `dar_prune::parse_expr` at [`ScanBuilder::build`]).
    pub fn with_predicate_sql(mut self, predicate: impl Into<String>) -> Self {
        self.predicate = Some(PredicateInput::Sql(predicate.into()));
        self
    }

    /// At most `limit` rows; all I/O stops once they are out.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Rows per batch (default 8,192).
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Files read at the same time (default: chosen for the store, see
    /// [`crate::default_files_in_flight`]).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// Batches in file order (default) or as soon as any file yields them.
    pub fn with_ordered(mut self, ordered: bool) -> Self {
        self.ordered = ordered;
        self
    }

    /// Strings and binaries (at any depth) as `Utf8View` / `BinaryView`,
    /// decoded straight from the pages without copying each value into one
    /// buffer (default false: `Utf8` / `Binary`). For consumers that take
    /// views: DataFusion, Polars, DuckDB, pyarrow 16 and later.
    pub fn with_view_types(mut self, on: bool) -> Self {
        self.view_types = on;
        self
    }

    /// The machine-local half of a scan of this table: its store, DV
    /// cache, path rules, other stores and concurrency.
    pub(crate) fn runtime(&self) -> ScanRuntime {
        let table = &self.table;
        let options = table.options();
        let mut runtime = ScanRuntime::new(table.store().clone())
            .with_dv_cache(Arc::clone(table.dv_cache()))
            .with_paths_confined_to_root(options.confined_to_root());
        if let Some(n) = self.concurrency {
            runtime = runtime.with_concurrency(n);
        }
        for (origin, store) in options.other_stores() {
            runtime = runtime.with_store_for(origin.clone(), store.clone());
        }
        runtime
    }

    /// Validates the options, binds the predicate, prunes files with the
    /// file index, and returns the plan.
    ///
    /// # Errors
    ///
    /// [`ScanError::InvalidOption`] for a batch size or concurrency of 0,
    /// [`ScanError::UnknownColumn`] for a projected column the table lacks,
    /// [`ScanError::Predicate`] for a predicate that does not parse or fit
    /// the schema, and [`ScanError::Log`] when the file index cannot be
    /// built (a lazy index) or holds an invalid deletion vector.
    pub fn build(self) -> Result<ScanPlan> {
        let runtime = self.runtime();
        let table = &self.table;
        let snapshot = table.snapshot();
        if !snapshot.has_schema() {
            return Err(table.log_error(dar_log::LogError::MissingSchema {
                version: snapshot.version(),
            }));
        }
        let columns: Vec<Vec<String>> = match self.columns {
            Some(c) => c,
            None => table
                .schema()
                .fields()
                .iter()
                .map(|f| vec![f.name().clone()])
                .collect(),
        };
        let predicate = self.predicate.map(PredicateInput::into_expr).transpose()?;
        let spec = ScanSpec {
            format: ScanSpec::FORMAT,
            producer: producer(),
            table_uri: table.uri().to_string(),
            version: table.version(),
            schema: table.declared_schema().as_ref().clone(),
            column_mapping: snapshot.column_mapping_mode(),
            partition_columns: snapshot.partition_columns().to_vec(),
            task_columns: Vec::new(),
            columns,
            predicate,
            batch_size: self.batch_size,
            limit: self.limit,
            ordered: self.ordered,
            view_types: self.view_types,
        };
        let context = ScanContext::new(spec, runtime)?;

        let metrics = context.metrics();
        let index = snapshot.file_index().map_err(|e| table.log_error(e))?;
        let parsed_before = index.stats.parsed_columns();
        let (kept, pruned) = {
            let _t = metrics.time(Stage::FilePruning);
            files::prune(
                index,
                snapshot.table_properties(),
                context.state().predicate.as_ref().map(|p| &p.logical),
            )
            .map_err(|e| table.log_error(e))?
        };
        metrics.add_files_total(index.len() as u64);
        metrics.add_index_bytes(index.memory_size() as u64);
        metrics.add_files_pruned(pruned as u64);
        metrics.add_stats_columns_parsed((index.stats.parsed_columns() - parsed_before) as u64);
        let tasks = kept
            .iter()
            .map(|i| files::task(index, *i))
            .collect::<dar_log::Result<Vec<_>>>()
            .map_err(|e| table.log_error(e))?;
        Ok(ScanPlan::from_index(
            context,
            tasks,
            Arc::clone(snapshot),
            kept,
        ))
    }
}
