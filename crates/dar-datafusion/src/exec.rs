//! [`DeltaScanExec`]: the physical scan, one dar [`ScanPlan`] split into
//! DataFusion partitions.
//!
//! Each partition reads its group of files through
//! [`ScanPlan::with_tasks`] (dar's prefetch, limit and metrics), casts the
//! batches to the types DataFusion was promised (view types, dictionary
//! partition columns), and stops all I/O when its stream is dropped (a
//! cancelled query, or a satisfied `LIMIT` above it).

use std::fmt;
use std::sync::Arc;

use arrow_schema::SchemaRef;
use dar_scan::{ScanPlan, ScanTask};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PhysicalExpr, PlanProperties,
    StatisticsArgs,
};
use futures::StreamExt;

use crate::metrics::add_scan_metrics;
use crate::options::adapt_batch;
use dar_scan::split_by_bytes_exact;

/// Files listed per partition by `EXPLAIN VERBOSE` (the rest are counted).
const SHOWN_FILES: usize = 5;

/// What `EXPLAIN` shows of a scan besides its files.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct ScanDescription {
    /// The table URI (credentials removed).
    pub uri: String,
    /// The snapshot version.
    pub version: u64,
    /// The pushed-down predicate, as dar prints it.
    pub predicate: Option<String>,
    /// The scan's limit.
    pub limit: Option<usize>,
    /// Whether footers were read while planning.
    pub resolved: bool,
}

/// The physical scan of a Delta table through dar-scan.
#[derive(Debug)]
pub struct DeltaScanExec {
    plan: ScanPlan,
    groups: Vec<Vec<ScanTask>>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    /// Statistics of the whole scan, then of each partition.
    statistics: Arc<Statistics>,
    partition_statistics: Vec<Arc<Statistics>>,
    description: ScanDescription,
    metrics: ExecutionPlanMetricsSet,
    /// Where the scan runs when that is not here (a worker's name), put
    /// before its errors.
    location: Option<Arc<str>>,
}

impl DeltaScanExec {
    pub(crate) fn new(
        plan: ScanPlan,
        groups: Vec<Vec<ScanTask>>,
        schema: SchemaRef,
        statistics: Statistics,
        partition_statistics: Vec<Statistics>,
        description: ScanDescription,
    ) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(groups.len()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Self {
            plan,
            groups,
            schema,
            properties: Arc::new(properties),
            statistics: Arc::new(statistics),
            partition_statistics: partition_statistics.into_iter().map(Arc::new).collect(),
            description,
            metrics: ExecutionPlanMetricsSet::new(),
            location: None,
        }
    }

    /// A scan of `groups` (one partition each) with `plan`'s context,
    /// statistics unknown: a decoded scan, or one part of a split.
    pub(crate) fn from_groups(
        plan: ScanPlan,
        groups: Vec<Vec<ScanTask>>,
        schema: SchemaRef,
        description: ScanDescription,
    ) -> Self {
        let unknown = Statistics::new_unknown(&schema);
        let per_partition = vec![unknown.clone(); groups.len()];
        Self::new(plan, groups, schema, unknown, per_partition, description)
    }

    pub(crate) fn description(&self) -> &ScanDescription {
        &self.description
    }

    /// Names where this scan runs (for example `worker 127.0.0.1:50051`):
    /// its errors then start with it, as text, since they travel to another
    /// process that cannot tell otherwise which machine failed.
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(Arc::from(location.into()));
        self
    }

    /// This scan's files split into `n` scans (for `n` workers) of about
    /// equal bytes, each with this scan's number of partitions (some
    /// possibly empty) and statistics unknown. Every file is in exactly one
    /// part. With `n` of 0 or 1, one part that reads everything.
    pub fn split(&self, n: usize) -> Vec<Self> {
        let partitions = self.groups.len().max(1);
        let all: Vec<ScanTask> = self.groups.iter().flatten().cloned().collect();
        split_by_bytes_exact(all, n.max(1))
            .into_iter()
            .map(|tasks| {
                Self::from_groups(
                    self.plan.with_tasks(tasks.clone()),
                    split_by_bytes_exact(tasks, partitions),
                    Arc::clone(&self.schema),
                    self.description.clone(),
                )
            })
            .collect()
    }

    /// The dar scan plan (all partitions).
    pub fn scan_plan(&self) -> &ScanPlan {
        &self.plan
    }

    /// The files of each partition.
    pub fn file_groups(&self) -> &[Vec<ScanTask>] {
        &self.groups
    }
}

impl DisplayAs for DeltaScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let d = &self.description;
        let m = self.plan.metrics().snapshot();
        let kept = self.plan.tasks().len();
        let bytes: u64 = self.plan.tasks().iter().filter_map(|t| t.size).sum();
        let columns: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(
                    f,
                    "DeltaScanExec: table={}, version={}, files={kept} of {} ({} pruned, {bytes} bytes), partitions={}, projection=[{}]",
                    d.uri,
                    d.version,
                    m.files_total,
                    m.files_pruned,
                    self.groups.len(),
                    columns.join(", "),
                )?;
                if let Some(p) = &d.predicate {
                    write!(f, ", predicate={p}")?;
                }
                if let Some(l) = d.limit {
                    write!(f, ", limit={l}")?;
                }
                if d.resolved {
                    write!(
                        f,
                        ", row_groups={} of {}, pages={} of {}",
                        m.row_groups_total - m.row_groups_pruned,
                        m.row_groups_total,
                        m.pages_total - m.pages_pruned,
                        m.pages_total,
                    )?;
                }
                if matches!(t, DisplayFormatType::Verbose) {
                    for (i, g) in self.groups.iter().enumerate() {
                        let mut paths: Vec<&str> = g
                            .iter()
                            .take(SHOWN_FILES)
                            .map(|t| t.log_path.as_str())
                            .collect();
                        let more = g.len().saturating_sub(SHOWN_FILES);
                        let more = format!("... {more} more");
                        if g.len() > SHOWN_FILES {
                            paths.push(&more);
                        }
                        write!(f, ", partition {i}=[{}]", paths.join(", "))?;
                    }
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => {
                writeln!(f, "table={}", d.uri)?;
                writeln!(f, "version={}", d.version)?;
                writeln!(f, "files={kept} of {}", m.files_total)?;
                if let Some(p) = &d.predicate {
                    writeln!(f, "predicate={p}")?;
                }
                Ok(())
            }
        }
    }
}

impl ExecutionPlan for DeltaScanExec {
    fn name(&self) -> &str {
        "DeltaScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "DeltaScanExec is a leaf and takes no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let tasks = self.groups.get(partition).ok_or_else(|| {
            DataFusionError::Internal(format!(
                "DeltaScanExec has {} partitions, asked for partition {partition}",
                self.groups.len()
            ))
        })?;
        let output_rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let schema = Arc::clone(&self.schema);
        let location = self.location.clone();
        let stream = self
            .plan
            .with_tasks(tasks.clone())
            .execute()
            .map(move |batch| {
                let batch = batch.map_err(|e| match &location {
                    None => DataFusionError::External(Box::new(e)),
                    Some(at) => DataFusionError::Execution(format!("{at}: {e}")),
                })?;
                let batch = adapt_batch(&batch, &schema)?;
                output_rows.add(batch.num_rows());
                Ok(batch)
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        let mut set = self.metrics.clone_inner();
        add_scan_metrics(&mut set, &self.plan.metrics().snapshot());
        Some(set)
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        match args.partition() {
            None => Ok(Arc::clone(&self.statistics)),
            Some(p) => self.partition_statistics.get(p).cloned().ok_or_else(|| {
                DataFusionError::Internal(format!(
                    "DeltaScanExec has {} partitions, asked for statistics of partition {p}",
                    self.groups.len()
                ))
            }),
        }
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        self.statistics_from_inputs(&[], &StatisticsArgs::new().with_partition(partition))
    }
}
