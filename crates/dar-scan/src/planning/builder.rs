//! [`ScanBuilder`]: a table and the [`ScanOptions`] of what to read and
//! how; [`ScanBuilder::build`] prunes files and yields a [`ScanPlan`].

use std::sync::Arc;

use crate::errors::error::Result;
use crate::execution::context::ScanContext;
use crate::execution::metrics::Stage;
use crate::execution::runtime::ScanRuntime;
use crate::planning::file_pruning as files;
use crate::planning::plan::ScanPlan;
use crate::planning::scan_options::{ScanOptions, scan_option_setters};
use crate::planning::spec::{ScanSpec, SpecSource};
use crate::table::Table;

impl Table {
    /// Starts describing a scan.
    pub fn scan(&self) -> ScanBuilder {
        ScanBuilder::new(self.clone())
    }
}

/// Describes a scan of a [`Table`]; consuming `with_*` setters (those of
/// [`ScanOptions`], or [`ScanBuilder::with_options`] for all at once).
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    pub(crate) table: Table,
    pub(crate) options: ScanOptions,
}

scan_option_setters!(ScanBuilder);

impl ScanBuilder {
    pub(crate) fn new(table: Table) -> Self {
        Self {
            table,
            options: ScanOptions::new(),
        }
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
        let runtime = runtime_for(&self.table, self.options.concurrency());
        let table = &self.table;
        let snapshot = table.snapshot();
        if !snapshot.has_schema() {
            return Err(table.log_error(dar_log::LogError::MissingSchema {
                version: snapshot.version(),
            }));
        }
        let options = self.options.resolve()?;
        let columns = options.columns.clone().unwrap_or_else(|| {
            table
                .schema()
                .fields()
                .iter()
                .map(|f| vec![f.name().clone()])
                .collect()
        });
        let spec = ScanSpec::new(
            SpecSource {
                table_uri: table.uri().to_string(),
                version: table.version(),
                schema: table.declared_schema().as_ref().clone(),
                column_mapping: snapshot.column_mapping_mode(),
                partition_columns: snapshot.partition_columns().to_vec(),
                task_columns: Vec::new(),
            },
            columns,
            options,
        );
        let context = ScanContext::new(spec, runtime)?;

        let metrics = context.metrics();
        let index = snapshot.file_index().map_err(|e| table.log_error(e))?;
        let parsed_before = index.stats.parsed_columns();
        let unavailable_before = index.stats.unavailable_files();
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
        metrics.add_stats_files_unavailable(
            (index.stats.unavailable_files() - unavailable_before) as u64,
        );
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

/// The machine-local half of a scan of `table`: its store, DV cache, path
/// rules, other stores, and `concurrency` files in flight when set.
pub(crate) fn runtime_for(table: &Table, concurrency: Option<usize>) -> ScanRuntime {
    let options = table.options();
    let mut runtime = ScanRuntime::new(table.store().clone())
        .with_dv_cache(Arc::clone(table.dv_cache()))
        .with_paths_confined_to_root(options.confined_to_root());
    if let Some(n) = concurrency {
        runtime = runtime.with_concurrency(n);
    }
    for (origin, store) in options.other_stores() {
        runtime = runtime.with_store_for(origin.clone(), store.clone());
    }
    runtime
}
