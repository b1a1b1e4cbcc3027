//! [`ScanContext`]: what every task of one scan shares (store, caches,
//! schema, predicate, options, metrics).

use std::sync::Arc;

use arrow_schema::{Fields, SchemaRef};
use dar_dv::DvCache;
use dar_io::TableStore;
use dar_log::schema::ColumnMappingMode;
use dar_prune::Predicate;

use crate::error::{Result, ScanError};
use crate::metrics::ScanMetrics;
use crate::residual::ScanPredicate;
use crate::schema::projection::OutputColumn;
use crate::task::ScanTask;

#[derive(Debug)]
pub(crate) struct ContextInner {
    pub store: TableStore,
    /// Stores for data files on other stores, by origin.
    pub other_stores: Vec<(String, TableStore)>,
    /// Refuse data and DV files outside the table root.
    pub confine_to_root: bool,
    pub dv_cache: Arc<DvCache>,
    pub mode: ColumnMappingMode,
    /// The table's logical top-level fields (relaxed nullability).
    pub fields: Fields,
    /// The same fields with the nullability the Delta schema declares.
    pub declared: Fields,
    pub partition_columns: Vec<String>,
    pub output: Vec<OutputColumn>,
    pub output_schema: SchemaRef,
    /// Top-level logical columns the output needs, in output order.
    pub projection_roots: Vec<String>,
    pub predicate: Option<ScanPredicate>,
    pub batch_size: usize,
    pub limit: Option<usize>,
    pub concurrency: usize,
    pub ordered: bool,
    pub metrics: ScanMetrics,
    /// Empty projection and no predicate: rows are counted, not read,
    /// wherever the log knows them.
    pub count_only: bool,
    /// Empty projection and a predicate on partition columns only: each
    /// file's rows all pass or all fail, decided once from its partition
    /// values, then counted from the log.
    pub count_by_partition: bool,
}

impl ContextInner {
    /// Whether the table-store key `key` lies under the table root.
    pub(crate) fn is_inside_root(&self, key: &str) -> bool {
        let root = self.store.root().as_ref();
        root.is_empty()
            || key
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// The shared state of one scan, needed to execute its [`crate::ScanTask`]s.
/// Cheap to clone. Build it from the same table and scan options on any
/// thread or machine that executes tasks ([`crate::ScanPlan::context`]).
#[derive(Debug, Clone)]
pub struct ScanContext {
    pub(crate) inner: Arc<ContextInner>,
}

impl ScanContext {
    pub(crate) fn new(inner: ContextInner) -> Self {
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The output schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.inner.output_schema
    }

    /// The live metrics of the scan.
    pub fn metrics(&self) -> &ScanMetrics {
        &self.inner.metrics
    }

    /// The data conjuncts of the predicate with physical column paths, the
    /// ones row-group and page statistics can prune with.
    pub(crate) fn physical_predicate(&self) -> Option<&Predicate> {
        self.inner
            .predicate
            .as_ref()
            .and_then(|p| p.physical.as_ref())
    }

    /// The store that holds `task`'s data file: the table's, or the one
    /// configured for the file's other origin. Refuses a file outside the
    /// table root when paths are confined to it.
    pub(crate) fn store_for(&self, task: &ScanTask) -> Result<&TableStore> {
        let inner = &self.inner;
        let outside = || ScanError::OutsideRoot {
            what: "data file",
            path: task.log_path.clone(),
        };
        match &task.store_origin {
            None => {
                if inner.confine_to_root && !inner.is_inside_root(&task.object_path) {
                    return Err(outside());
                }
                Ok(&inner.store)
            }
            Some(_) if inner.confine_to_root => Err(outside()),
            Some(origin) => inner
                .other_stores
                .iter()
                .find(|(o, _)| o == origin)
                .map(|(_, s)| s)
                .ok_or_else(|| ScanError::OtherStore {
                    path: task.log_path.clone(),
                    origin: origin.clone(),
                }),
        }
    }

    /// Where the object `key` of the table's store is, as a person would
    /// name it: `/tmp/t/a.parquet` for a local table, `s3://bucket/t/a.parquet`
    /// otherwise (object keys lack the local path's leading `/`).
    pub(crate) fn location(&self, key: &str) -> String {
        let url = self.inner.store.url();
        match url.scheme() {
            "file" => format!("/{key}"),
            scheme => format!("{scheme}://{}/{key}", url.host_str().unwrap_or("")),
        }
    }

    /// Whether `name` is a partition column.
    pub(crate) fn is_partition(&self, name: &str) -> bool {
        self.inner.partition_columns.iter().any(|p| p == name)
    }
}
