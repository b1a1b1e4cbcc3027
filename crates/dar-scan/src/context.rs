//! [`ScanContext`]: what every task of one scan shares: the serializable
//! [`ScanSpec`], the machine-local [`ScanRuntime`], what follows from the
//! spec (output columns, bound predicate) and the live metrics.

use std::sync::Arc;

use arrow_schema::{Fields, Schema, SchemaRef};
use dar_io::TableStore;
use dar_prune::Predicate;

use crate::error::{Result, ScanError};
use crate::metrics::ScanMetrics;
use crate::readahead::ReadAhead;
use crate::residual::ScanPredicate;
use crate::runtime::ScanRuntime;
use crate::schema::projection::OutputColumn;
use crate::schema::relax_schema;
use crate::spec::ScanSpec;
use crate::stages::dv::DvFiles;
use crate::stages::footer::TailHint;
use crate::task::ScanTask;

/// A scan's spec, its runtime, and what follows from the spec, computed
/// once: the resolved output columns, the bound predicate.
#[derive(Debug)]
pub(crate) struct ContextInner {
    pub spec: ScanSpec,
    pub runtime: ScanRuntime,
    /// The table's logical top-level fields (relaxed nullability).
    pub fields: Fields,
    pub output: Vec<OutputColumn>,
    pub output_schema: SchemaRef,
    /// Top-level logical columns the output needs, in output order.
    pub projection_roots: Vec<String>,
    pub predicate: Option<ScanPredicate>,
    pub metrics: ScanMetrics,
    /// Decoded bytes waiting for the consumer, over all files.
    pub read_ahead: Arc<ReadAhead>,
    /// The DV files the scan's files share, each read once.
    pub dv_files: DvFiles,
    /// How much of a file's end holds its footer and page index.
    pub tail_hint: TailHint,
    /// What a file yields: rows, or only their count.
    pub mode: ScanMode,
}

/// What each file of a scan yields, decided once from the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanMode {
    /// Rows of the output columns.
    Rows,
    /// Empty projection and no predicate: rows are counted, not read,
    /// wherever the log knows them.
    Count,
    /// Empty projection and a predicate on partition columns only: each
    /// file's rows all pass or all fail, decided once from its partition
    /// values, then counted from the log.
    CountByPartition,
}

impl ContextInner {
    /// Whether the table-store key `key` lies under the table root.
    pub(crate) fn is_inside_root(&self, key: &str) -> bool {
        let root = self.runtime.store.root().as_ref();
        root.is_empty()
            || key
                .strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

/// The shared state of one scan, needed to execute its [`crate::ScanTask`]s:
/// a [`ScanSpec`] (what to read) and a [`ScanRuntime`] (the store and caches
/// of the machine that reads). Cheap to clone.
#[derive(Debug, Clone)]
pub struct ScanContext {
    pub(crate) inner: Arc<ContextInner>,
}

impl ScanContext {
    /// Pairs `spec` (planned here or received from another process) with
    /// `runtime`: resolves the output columns and binds the predicate once
    /// for all tasks. Fails on options out of range or a spec that does not
    /// fit its own schema.
    pub fn new(spec: ScanSpec, runtime: ScanRuntime) -> Result<Self> {
        if spec.batch_size == 0 {
            return Err(ScanError::InvalidOption {
                option: "batch_size",
                reason: "must be at least 1".into(),
            });
        }
        if runtime.concurrency == Some(0) {
            return Err(ScanError::InvalidOption {
                option: "concurrency",
                reason: "must be at least 1".into(),
            });
        }
        let logical = relax_schema(&spec.schema);
        let fields = logical.fields().clone();
        let output = spec
            .columns
            .iter()
            .map(|p| OutputColumn::resolve(&fields, p))
            .collect::<Result<Vec<_>>>()?;
        let output_schema = Arc::new(Schema::new(
            output.iter().map(|c| c.field.clone()).collect::<Vec<_>>(),
        ));
        let mut projection_roots: Vec<String> = Vec::new();
        for c in &output {
            if let Some(r) = c.path.first()
                && !projection_roots.contains(r)
            {
                projection_roots.push(r.clone());
            }
        }
        let predicate = spec
            .predicate
            .clone()
            .map(|e| ScanPredicate::new(e, &logical, &spec.partition_columns, spec.column_mapping))
            .transpose()?;
        let mode = match &predicate {
            _ if !output.is_empty() => ScanMode::Rows,
            None => ScanMode::Count,
            Some(p) if p.data.is_none() && p.rest_on_partitions_only => ScanMode::CountByPartition,
            Some(_) => ScanMode::Rows,
        };
        let metrics = ScanMetrics::new(runtime.store.metrics().clone());
        let read_ahead = Arc::new(ReadAhead::new(runtime.read_ahead_bytes));
        Ok(Self {
            inner: Arc::new(ContextInner {
                spec,
                runtime,
                fields,
                output,
                output_schema,
                projection_roots,
                predicate,
                metrics,
                read_ahead,
                dv_files: DvFiles::default(),
                tail_hint: TailHint::default(),
                mode,
            }),
        })
    }

    /// What the scan reads, to send to another process.
    pub fn spec(&self) -> &ScanSpec {
        &self.inner.spec
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
                if inner.runtime.confine_to_root && !inner.is_inside_root(&task.object_path) {
                    return Err(outside());
                }
                Ok(&inner.runtime.store)
            }
            Some(_) if inner.runtime.confine_to_root => Err(outside()),
            Some(origin) => inner
                .runtime
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
        let url = self.inner.runtime.store.url();
        match url.scheme() {
            "file" => format!("/{key}"),
            scheme => format!("{scheme}://{}/{key}", url.host_str().unwrap_or("")),
        }
    }

    /// Whether `name` is a partition column.
    pub(crate) fn is_partition(&self, name: &str) -> bool {
        self.inner.spec.partition_columns.iter().any(|p| p == name)
    }
}
