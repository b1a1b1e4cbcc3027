//! [`DeltaTableProvider`]: a Delta table as a DataFusion `TableProvider`.

use std::sync::{Arc, RwLock};

use arrow_schema::{Schema, SchemaRef};
use async_trait::async_trait;
use dar_scan::{ChangeBound, ScanError, Table, TableOptions};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, DataFusionError, Result, Statistics};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr as DfExpr, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::filter::FilterExecBuilder;
use datafusion::prelude::SessionContext;

use crate::convert::{Schemas, classify, convert};
use crate::exec::{DeltaScanExec, ScanDescription};
use crate::options::DeltaScanOptions;
use crate::statistics::to_datafusion;

/// The table and the schema DataFusion sees for it, swapped together.
#[derive(Debug)]
struct Current {
    table: Table,
    /// The schema DataFusion sees.
    schema: SchemaRef,
    /// The schema dar reads (filters convert against it).
    dar: SchemaRef,
    /// A change data feed of this range instead of the snapshot's rows.
    changes: Option<ChangeRange>,
}

/// The range of a change-data-feed provider, as the versions it resolved
/// to when the provider was made.
#[derive(Debug, Clone, Copy)]
struct ChangeRange {
    start: ChangeBound,
    end: Option<ChangeBound>,
}

/// A Delta table (one snapshot, which [`DeltaTableProvider::refresh`]
/// moves forward) as a DataFusion table.
#[derive(Debug)]
pub struct DeltaTableProvider {
    current: RwLock<Arc<Current>>,
    options: DeltaScanOptions,
}

pub(crate) fn scan_error(e: ScanError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl DeltaTableProvider {
    /// The provider of `table` (at whichever version it was opened) with
    /// default options.
    pub fn new(table: Table) -> Self {
        Self::with_options(table, DeltaScanOptions::default())
    }

    /// The provider of `table` with `options`.
    pub fn with_options(table: Table, options: DeltaScanOptions) -> Self {
        Self {
            current: RwLock::new(Arc::new(Self::current(table, &options))),
            options,
        }
    }

    /// Opens the table at `uri` (`options` choose the version, storage
    /// options, ...) and wraps it with default scan options.
    pub async fn open(uri: &str, options: TableOptions) -> Result<Self> {
        let table = Table::open_with(uri, options).await.map_err(scan_error)?;
        Ok(Self::new(table))
    }

    /// The change data feed of `table` from `start` to `end` (the latest
    /// when `None`): the table's columns at the end version and
    /// `_change_type`, `_commit_version`, `_commit_timestamp`, with the
    /// same pushdown as a scan (filters on the change columns included).
    /// The range is resolved here to versions and kept: every query reads
    /// those versions with the schema declared here, whatever commits come
    /// later (a later end could change the schema under the declared one),
    /// and [`DeltaTableProvider::refresh`] does not move it. The range's
    /// end is checked here; its commits are read by each query's plan.
    ///
    /// # Errors
    ///
    /// The range's refusals ([`Table::changes`]), as DataFusion errors.
    pub async fn changes(
        table: Table,
        start: ChangeBound,
        end: Option<ChangeBound>,
        options: DeltaScanOptions,
    ) -> Result<Self> {
        Self::changes_of(table, start, end, options)
            .await
            .map_err(scan_error)
    }

    /// [`DeltaTableProvider::changes`], failing with dar-scan's error.
    pub(crate) async fn changes_of(
        table: Table,
        start: ChangeBound,
        end: Option<ChangeBound>,
        options: DeltaScanOptions,
    ) -> dar_scan::Result<Self> {
        // Opened only: the commits are read once, by the scan.
        let feed = table.changes(start, end).open().await?;
        let dar = Arc::clone(feed.schema());
        let partition_columns = table.snapshot().partition_columns().to_vec();
        let schema = Arc::new(options.datafusion_schema(&dar, &partition_columns));
        let range = ChangeRange {
            start: ChangeBound::Version(feed.start()),
            end: Some(ChangeBound::Version(feed.end())),
        };
        let current = Current {
            table,
            schema,
            dar,
            changes: Some(range),
        };
        Ok(Self {
            current: RwLock::new(Arc::new(current)),
            options,
        })
    }

    fn current(table: Table, options: &DeltaScanOptions) -> Current {
        let partition_columns = table.snapshot().partition_columns().to_vec();
        let schema = Arc::new(options.datafusion_schema(table.schema(), &partition_columns));
        Current {
            dar: Arc::clone(table.schema()),
            table,
            schema,
            changes: None,
        }
    }

    fn load(&self) -> Arc<Current> {
        // A poisoned lock still holds a consistent value: it is only ever
        // replaced whole.
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The table as queries planned now see it.
    pub fn table(&self) -> Table {
        self.load().table.clone()
    }

    /// The scan options.
    pub fn options(&self) -> DeltaScanOptions {
        self.options
    }

    /// Replaces the snapshot queries see (for example a table reopened at
    /// another version); queries planned before keep theirs.
    pub fn set_table(&self, table: Table) {
        let old = self.load();
        let next = Arc::new(match old.changes {
            // A change feed keeps its range and schema.
            Some(range) => Current {
                table,
                schema: Arc::clone(&old.schema),
                dar: Arc::clone(&old.dar),
                changes: Some(range),
            },
            None => Self::current(table, &self.options),
        });
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = next;
    }

    /// Moves the table to its newest version (replaying only new commits);
    /// returns that version. Queries planned from now on read it, without
    /// registering the table again. (A query planned while the refresh
    /// lands reads the new snapshot; if that version changed the schema,
    /// refresh between queries.)
    pub async fn refresh(&self) -> Result<u64> {
        let mut table = self.table();
        table.refresh().await.map_err(scan_error)?;
        let version = table.version();
        self.set_table(table);
        Ok(version)
    }

    fn schemas<'a>(current: &'a Current) -> Schemas<'a> {
        Schemas {
            datafusion: &current.schema,
            dar: &current.dar,
        }
    }

    /// Builds the physical scan.
    async fn plan(
        &self,
        current: &Current,
        target_partitions: usize,
        batch_size: usize,
        projection: Option<&Vec<usize>>,
        filters: &[DfExpr],
        limit: Option<usize>,
    ) -> Result<DeltaScanExec> {
        let table = &current.table;
        let mut predicates = Vec::with_capacity(filters.len());
        for f in filters {
            predicates.extend(convert(f, Self::schemas(current)).map(|c| c.expr));
        }
        let output: SchemaRef = match projection {
            Some(p) => Arc::new(current.schema.project(p)?),
            None => Arc::clone(&current.schema),
        };
        let paths: Vec<Vec<String>> = output
            .fields()
            .iter()
            .map(|f| vec![f.name().clone()])
            .collect();
        let predicate = (!predicates.is_empty()).then(|| dar_prune::Expr::and_all(predicates));
        let mut options = dar_scan::ScanOptions::new()
            .with_batch_size(batch_size.max(1))
            .with_view_types(self.options.view_types());
        if let Some(p) = &predicate {
            options = options.with_predicate(p.clone());
        }
        if let Some(l) = limit {
            options = options.with_limit(l);
        }
        let mut plan = match current.changes {
            Some(range) => table
                .changes(range.start, range.end)
                .with_options(options)
                .with_only_columns(paths)
                .build()
                .await
                .map_err(scan_error)?,
            None => {
                let builder = table.scan().with_options(options).with_column_paths(paths);
                // Building prunes with the file index, which may be built
                // now (a lazy index) and parse a predicate's column
                // statistics: seconds of CPU on a table of millions of
                // files. A blocking thread does it, so the runtime's
                // workers go on serving other queries.
                // Outside a multi-threaded Tokio runtime (DataFusion
                // Python calls through its FFI without one) it is built
                // here.
                match tokio::runtime::Handle::try_current() {
                    Ok(rt) if rt.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                        rt.spawn_blocking(move || builder.build())
                            .await
                            .map_err(|e| DataFusionError::External(Box::new(e)))?
                    }
                    _ => builder.build(),
                }
                .map_err(scan_error)?
            }
        };
        if self.options.resolve_at_plan() {
            plan = plan.resolve().await.map_err(scan_error)?;
        }
        // A limit reads files in order and stops: one partition, so that
        // `LIMIT 1` opens one file.
        let partitions = if limit.is_some() {
            1
        } else {
            target_partitions.max(1)
        };
        let parts = plan.split(partitions);
        let total = to_datafusion(&plan.statistics(), &output);
        let per_partition = parts
            .iter()
            .map(|p| to_datafusion(&p.statistics(), &output))
            .collect();
        let groups = parts.into_iter().map(|p| p.tasks().to_vec()).collect();
        let description = ScanDescription {
            uri: table.uri().to_string(),
            version: plan.context().spec().version(),
            predicate: predicate.map(|p| p.to_string()),
            limit,
            resolved: self.options.resolve_at_plan(),
        };
        Ok(DeltaScanExec::new(
            plan,
            groups,
            output,
            total,
            per_partition,
            description,
        ))
    }
}

#[async_trait]
impl TableProvider for DeltaTableProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.load().schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&DfExpr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        let current = self.load();
        let schemas = Self::schemas(&current);
        Ok(filters.iter().map(|f| classify(f, schemas)).collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        let current = self.load();
        if current.changes.is_some() {
            // The log's statistics describe the snapshot, not the feed.
            return None;
        }
        let plan = current.table.scan().build().ok()?;
        Some(to_datafusion(&plan.statistics(), &current.schema))
    }

    /// The scan, with every filter dar applies exactly pushed into it.
    /// DataFusion drops a filter it was told is `Exact` from its plan, and
    /// may hand it back rewritten (`x IN (1, NULL)` as `x = 1 OR NULL`): a
    /// filter whose rewritten form dar does not apply exactly is evaluated
    /// by a `FilterExec` over the scan (its dar-convertible part still
    /// prunes), so no rewriting can change the rows.
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[DfExpr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let current = self.load();
        let config = state.config();
        let schemas = Self::schemas(&current);
        let residual: Vec<&DfExpr> = filters
            .iter()
            .filter(|f| !convert(f, schemas).is_some_and(|c| c.exact))
            .collect();
        let (target, batch) = (config.target_partitions(), config.batch_size());
        if residual.is_empty() {
            let exec = self
                .plan(&current, target, batch, projection, filters, limit)
                .await?;
            return Ok(Arc::new(exec));
        }
        // The residual filters' columns are read too, and projected away
        // after the filter; a limit applies after it.
        let mut columns: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..current.schema.fields().len()).collect(),
        };
        let shown = columns.len();
        for f in &residual {
            for c in f.column_refs() {
                let i = current.schema.index_of(&c.name)?;
                if !columns.contains(&i) {
                    columns.push(i);
                }
            }
        }
        let exec = self
            .plan(&current, target, batch, Some(&columns), filters, None)
            .await?;
        let df_schema = DFSchema::try_from(exec.schema())?;
        let predicate = conjunction(residual.into_iter().map(unqualified))
            .map(|e| state.create_physical_expr(e, &df_schema))
            .transpose()?;
        let Some(predicate) = predicate else {
            return Ok(Arc::new(exec));
        };
        let filter = FilterExecBuilder::new(predicate, Arc::new(exec))
            .apply_projection(Some((0..shown).collect()))?
            .with_fetch(limit)
            .build()?;
        Ok(Arc::new(filter))
    }
}

/// `e` with its columns unqualified (the scan's schema has no table names).
fn unqualified(e: &DfExpr) -> DfExpr {
    e.clone()
        .transform_up(|e| {
            Ok(match e {
                DfExpr::Column(c) if c.relation.is_some() => {
                    Transformed::yes(DfExpr::Column(Column::new_unqualified(c.name)))
                }
                other => Transformed::no(other),
            })
        })
        .map(|t| t.data)
        .unwrap_or_else(|_| e.clone())
}

/// Registers `table` as `name` in `ctx` with default options; returns the
/// provider it replaced, if any.
pub fn register_delta_table(
    ctx: &SessionContext,
    name: &str,
    table: Table,
) -> Result<Option<Arc<dyn TableProvider>>> {
    ctx.register_table(name, Arc::new(DeltaTableProvider::new(table)))
}

/// The schema DataFusion sees for `table` with `options` (for callers that
/// need it before registering).
pub fn datafusion_schema(table: &Table, options: &DeltaScanOptions) -> Schema {
    options.datafusion_schema(table.schema(), table.snapshot().partition_columns())
}
