//! [`ScanState`]: what follows from a [`ScanSpec`], derived once per scan
//! and read-only afterwards: the table's logical fields and what the scan
//! does with each, the output columns, the bound predicate, the scan mode.
//!
//! Everything per file starts from here; nothing here changes while the
//! scan runs (that is [`crate::execution::running::RunningScan`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{FieldRef, Fields, Schema, SchemaRef};

use crate::errors::error::{Result, ScanError};
use crate::planning::predicate::ScanPredicate;
use crate::planning::spec::ScanSpec;
use crate::schema::nullability;
use crate::schema::projection::OutputColumn;
use crate::schema::relax_schema;
use crate::schema::views::view_fields;

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

/// The partition columns as a schema of their own, for deciding
/// partition-only conjuncts on a file's values before any I/O.
#[derive(Debug)]
pub(crate) struct PartitionColumns {
    /// One field per partition column, in `spec.partition_columns` order.
    pub schema: SchemaRef,
    /// The top-level field index of each.
    pub fields: Vec<usize>,
}

/// A spec and what follows from it.
#[derive(Debug)]
pub(crate) struct ScanState {
    pub spec: ScanSpec,
    /// The table's logical top-level fields, every level nullable: what
    /// the predicate binds to and statistics are read as.
    pub fields: Fields,
    /// The same fields as read batches and output hold them: `fields`, or
    /// with strings and binaries as views ([`ScanSpec::view_types`]).
    pub read_fields: Fields,
    /// Position of each top-level field, by name.
    pub field_index: HashMap<String, usize>,
    /// Per top-level field: whether it is a partition column.
    pub is_partition: Vec<bool>,
    /// Per top-level field: whether a task may give its value where the
    /// file lacks it (`ScanSpec::task_columns`).
    pub is_task_column: Vec<bool>,
    /// Per top-level field: its declared field when it (or a struct child)
    /// is declared not null, to be enforced on what files hold.
    pub not_null: Vec<Option<FieldRef>>,
    /// Per top-level field: whether an output column reads it.
    pub projected: Vec<bool>,
    pub output: Vec<OutputColumn>,
    pub output_schema: SchemaRef,
    pub predicate: Option<ScanPredicate>,
    pub partitions: PartitionColumns,
    pub mode: ScanMode,
}

impl ScanState {
    /// The data conjuncts when they read a column: what row-group and page
    /// statistics can prune with.
    pub(crate) fn pruning_predicate(&self) -> Option<&dar_prune::Predicate> {
        self.predicate
            .as_ref()
            .filter(|p| !p.data_roots.is_empty())
            .and_then(|p| p.data.as_ref())
    }

    /// Derives the state of `spec`. Fails on options out of range, output
    /// columns the schema lacks, or a predicate that does not fit it.
    pub(crate) fn new(spec: ScanSpec) -> Result<Self> {
        if spec.batch_size == 0 {
            return Err(ScanError::InvalidOption {
                option: "batch_size",
                reason: "must be at least 1".into(),
            });
        }
        let logical = relax_schema(&spec.schema);
        let fields = logical.fields().clone();
        let index: HashMap<&str, usize> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| (f.name().as_str(), i))
            .collect();
        let mut is_partition = vec![false; fields.len()];
        let mut partition_fields = Vec::with_capacity(spec.partition_columns.len());
        for name in &spec.partition_columns {
            let i = *index.get(name.as_str()).ok_or_else(|| ScanError::Spec {
                reason: format!("partition column '{name}' is not in the schema"),
            })?;
            is_partition[i] = true;
            partition_fields.push(i);
        }
        let mut is_task_column = vec![false; fields.len()];
        for name in &spec.task_columns {
            let i = *index.get(name.as_str()).ok_or_else(|| ScanError::Spec {
                reason: format!("task column '{name}' is not in the schema"),
            })?;
            is_task_column[i] = true;
        }
        let partitions = PartitionColumns {
            schema: Arc::new(Schema::new(
                partition_fields
                    .iter()
                    .map(|i| Arc::clone(&fields[*i]))
                    .collect::<Vec<_>>(),
            )),
            fields: partition_fields,
        };
        // `relax_schema` keeps the field order.
        let not_null = spec
            .schema
            .fields()
            .iter()
            .map(|d| nullability::has_constraint(d).then(|| Arc::clone(d)))
            .collect();
        let read_fields = if spec.view_types {
            view_fields(&fields)
        } else {
            fields.clone()
        };
        let output = spec
            .columns
            .iter()
            .map(|p| OutputColumn::resolve(&read_fields, &index, p))
            .collect::<Result<Vec<_>>>()?;
        let mut projected = vec![false; fields.len()];
        for c in &output {
            projected[c.root] = true;
        }
        let output_schema = Arc::new(Schema::new(
            output.iter().map(|c| c.field.clone()).collect::<Vec<_>>(),
        ));
        let predicate = spec
            .predicate
            .clone()
            .map(|e| ScanPredicate::new(e, &logical, &index, &is_partition))
            .transpose()?;
        let mode = match &predicate {
            _ if !output.is_empty() => ScanMode::Rows,
            None => ScanMode::Count,
            Some(p) if p.data.is_none() && p.rest_on_partitions_only => ScanMode::CountByPartition,
            Some(_) => ScanMode::Rows,
        };
        let field_index = index.iter().map(|(n, i)| ((*n).to_string(), *i)).collect();
        Ok(Self {
            spec,
            field_index,
            fields,
            read_fields,
            is_partition,
            is_task_column,
            not_null,
            projected,
            output,
            output_schema,
            predicate,
            partitions,
            mode,
        })
    }
}
