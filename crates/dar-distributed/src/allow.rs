//! What plans a worker runs: every node of a received plan must be of a
//! type on an allow-list, checked after decoding and before the plan is
//! registered for execution.
//!
//! A worker reads storage with its own credentials, so the only node that
//! may read storage is dar's [`DeltaScanExec`] (whose files come from the
//! Delta log the coordinator planned from, on the table's own store). The
//! list holds DataFusion's operators that compute on rows (projection,
//! filter, aggregate, joins, sorts, windows, limits, unions, repartition),
//! in-memory leaves (`VALUES`, `generate_series`, empty relations) and
//! datafusion-distributed's network nodes. DataFusion's own file sources
//! (CSV, JSON, Arrow, Avro, Parquet: a `DataSourceExec` over files), its
//! file sinks (`DataSinkExec`) and any node not listed are refused.

use std::sync::Arc;

use dar_datafusion::DeltaScanExec;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::source::DataSourceExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::aggregates::AggregateExec;
use datafusion::physical_plan::analyze::AnalyzeExec;
use datafusion::physical_plan::async_func::AsyncFuncExec;
use datafusion::physical_plan::buffer::BufferExec;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::explain::ExplainExec;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::joins::{
    CrossJoinExec, HashJoinExec, NestedLoopJoinExec, SortMergeJoinExec, SymmetricHashJoinExec,
};
use datafusion::physical_plan::limit::{GlobalLimitExec, LocalLimitExec};
use datafusion::physical_plan::memory::LazyMemoryExec;
use datafusion::physical_plan::placeholder_row::PlaceholderRowExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::scalar_subquery::ScalarSubqueryExec;
use datafusion::physical_plan::sorts::partial_sort::PartialSortExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::union::{InterleaveExec, UnionExec};
use datafusion::physical_plan::unnest::UnnestExec;
use datafusion::physical_plan::windows::{BoundedWindowAggExec, WindowAggExec};
use datafusion_distributed::{
    BroadcastExec, DistributedLeafExec, NetworkBroadcastExec, NetworkCoalesceExec,
    NetworkShuffleExec, WorkerPlanRewriteEvent, WorkerPlanRewriteEventResponse,
    WorkerPlanRewriteHandler,
};

/// Whether `plan` is of type `T`.
fn is<T: ExecutionPlan>(plan: &dyn ExecutionPlan) -> bool {
    plan.is::<T>()
}

/// The node types a worker runs (besides [`DeltaScanExec`] and in-memory
/// `DataSourceExec`s).
const ALLOWED: &[fn(&dyn ExecutionPlan) -> bool] = &[
    is::<AggregateExec>,
    is::<AnalyzeExec>,
    is::<AsyncFuncExec>,
    is::<BoundedWindowAggExec>,
    is::<BufferExec>,
    is::<CoalescePartitionsExec>,
    is::<CooperativeExec>,
    is::<CrossJoinExec>,
    is::<EmptyExec>,
    is::<ExplainExec>,
    is::<FilterExec>,
    is::<GlobalLimitExec>,
    is::<HashJoinExec>,
    is::<InterleaveExec>,
    // generate_series and other generators of rows in memory.
    is::<LazyMemoryExec>,
    is::<LocalLimitExec>,
    is::<NestedLoopJoinExec>,
    is::<PartialSortExec>,
    is::<PlaceholderRowExec>,
    is::<ProjectionExec>,
    is::<RepartitionExec>,
    is::<ScalarSubqueryExec>,
    is::<SortExec>,
    is::<SortMergeJoinExec>,
    is::<SortPreservingMergeExec>,
    is::<SymmetricHashJoinExec>,
    is::<UnionExec>,
    is::<UnnestExec>,
    is::<WindowAggExec>,
    // datafusion-distributed: its nodes read other workers' streams.
    is::<BroadcastExec>,
    is::<DistributedLeafExec>,
    is::<NetworkBroadcastExec>,
    is::<NetworkCoalesceExec>,
    is::<NetworkShuffleExec>,
];

/// Nodes allowed by name: datafusion-distributed's that it does not export
/// (only its codec makes nodes of these names on a worker), and
/// `CoalesceBatchesExec`, deprecated in DataFusion 55 but still decoded.
const ALLOWED_NAMES: &[&str] = &[
    "ChildrenIsolatorUnionExec",
    "CoalesceBatchesExec",
    "SamplerExec",
];

/// Why `node` may not run on a worker, if it may not.
fn refusal(node: &dyn ExecutionPlan) -> Option<String> {
    if node.is::<DeltaScanExec>() {
        return None;
    }
    if let Some(source) = node.downcast_ref::<DataSourceExec>() {
        let data = source.data_source();
        if data.is::<MemorySourceConfig>() {
            return None;
        }
        return Some(match data.downcast_ref::<FileScanConfig>() {
            Some(files) => format!(
                "DataFusion's own {} file source (DataSourceExec), which would read \
                 files with the worker's credentials",
                files.file_source().file_type()
            ),
            None => "a DataSourceExec that is not in memory".to_string(),
        });
    }
    if ALLOWED.iter().any(|allowed| allowed(node)) || ALLOWED_NAMES.contains(&node.name()) {
        return None;
    }
    Some(format!("{}, which is not on its allow-list", node.name()))
}

/// Checks every node of `plan` (see the module docs); `worker` names the
/// worker in the error.
///
/// # Errors
///
/// A `DataFusionError::Plan` naming the first node refused.
pub fn check_plan(plan: &Arc<dyn ExecutionPlan>, worker: &str) -> Result<()> {
    let mut stack = vec![Arc::clone(plan)];
    while let Some(node) = stack.pop() {
        if let Some(why) = refusal(node.as_ref()) {
            return Err(DataFusionError::Plan(format!(
                "{worker} refuses to run this plan: it holds {why}; a worker reads \
                 storage only through dar's Delta scan"
            )));
        }
        stack.extend(node.children().into_iter().cloned());
    }
    Ok(())
}

/// [`check_plan`] on every plan a worker receives.
pub(crate) struct AllowList {
    pub(crate) worker: Arc<str>,
}

impl WorkerPlanRewriteHandler for AllowList {
    fn rewrite_worker_plan(
        &self,
        ev: WorkerPlanRewriteEvent,
    ) -> Result<WorkerPlanRewriteEventResponse> {
        check_plan(&ev.plan, &self.worker)?;
        Ok(WorkerPlanRewriteEventResponse::new(ev.plan))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::physical_plan::empty::EmptyExec;

    fn schema() -> Arc<Schema> {
        Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, true)]))
    }

    #[test]
    fn in_memory_leaves_and_operators_pass() {
        let empty: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(schema()));
        let union = UnionExec::try_new(vec![Arc::clone(&empty), empty]).unwrap();
        check_plan(&union, "worker w").unwrap();
        let memory: Arc<dyn ExecutionPlan> =
            MemorySourceConfig::try_new_exec(&[vec![]], schema(), None).unwrap();
        let limit: Arc<dyn ExecutionPlan> = Arc::new(GlobalLimitExec::new(memory, 0, Some(1)));
        check_plan(&limit, "worker w").unwrap();
    }

    #[test]
    fn a_node_off_the_list_is_refused_wherever_it_is() {
        // A recursive query's work table: not on the list.
        let off: Arc<dyn ExecutionPlan> = Arc::new(
            datafusion::physical_plan::work_table::WorkTableExec::new("w".into(), schema(), None)
                .unwrap(),
        );
        let empty: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(schema()));
        let union = UnionExec::try_new(vec![empty, off]).unwrap();
        let plan: Arc<dyn ExecutionPlan> = Arc::new(GlobalLimitExec::new(union, 0, Some(1)));
        let err = check_plan(&plan, "worker w").unwrap_err().to_string();
        assert!(
            err.contains("worker w refuses to run this plan: it holds WorkTableExec"),
            "{err}"
        );
    }
}
