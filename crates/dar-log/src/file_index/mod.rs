//! The file index: files of a table as Arrow columns, either the active
//! files of a snapshot (its live adds) or the change files of one commit
//! of a change feed (its adds, removes and `cdc` files; see
//! `crate::changes::CommitChanges`).
//!
//! One row per file. Columns: `path` (as written in the log; the
//! object-store key it resolves to is derived from it, and kept apart
//! only for paths that are not plain relative names), `size`,
//! `modification_time`, typed partition values (one column per partition
//! column, logical names), `num_records`, per-leaf statistics, `tight_bounds`
//! and the deletion-vector descriptor fields. Pruning sweeps these arrays in
//! one vectorized pass instead of looping over per-file structs.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use object_store::path::Path;

use crate::actions::Metadata;
use crate::add_columns::{AddColumns, DvColumns};
use crate::error::{LogError, Result};
use crate::partition::{PartitionColumn, PartitionValuesBuilder};
use crate::paths::{FileLocation, TablePaths, is_plain_relative};
use crate::schema::{ColumnMappingMode, StatsColumn, StatsColumnsConfig, StructType};
use crate::string_concat::StringConcat;

mod slots;
mod stats;

pub use stats::{IndexStats, StatsLoading};

/// Files of a table, column by column: a snapshot's active files, or one
/// commit's change files (see the module docs).
#[derive(Debug, Clone)]
pub struct FileIndex {
    /// `add.path` as written (URI-encoded; relative or absolute).
    pub path: StringArray,
    /// The table root's object key: a plain relative path's object key
    /// is `root/path`.
    root: String,
    /// The object keys and stores of the files, when some path is not a
    /// plain relative name (`None`, nearly always: no second copy of the
    /// paths is kept).
    located: Option<Located>,
    /// File size in bytes (null where the log gives none: a `remove` of a
    /// change feed may not).
    pub size: Int64Array,
    /// Modification time, ms since the epoch (null for a change feed's
    /// `remove` and `cdc` files, which have none).
    pub modification_time: Int64Array,
    /// The partition columns, in `metaData.partitionColumns` order.
    pub partition_columns: Vec<PartitionColumn>,
    /// One typed array per partition column (same order).
    pub partition_values: Vec<ArrayRef>,
    /// `numRecords`, `tightBounds`, and per-leaf min / max / null count
    /// parsed when first asked for.
    pub stats: IndexStats,
    /// Deletion-vector descriptor fields (null: no DV).
    pub dv: DvColumns,
}

fn fmt_err(_: std::fmt::Error) -> LogError {
    LogError::arrow(
        "file index object paths",
        arrow_schema::ArrowError::MemoryError("string builder write failed".into()),
    )
}

fn cat(context: &str, arrays: Vec<&dyn Array>) -> Result<ArrayRef> {
    if arrays.is_empty() {
        return Err(LogError::arrow(
            context,
            arrow_schema::ArrowError::InvalidArgumentError("no arrays".into()),
        ));
    }
    arrow_select::concat::concat(&arrays).map_err(|e| LogError::arrow(context, e))
}

/// The paths of `adds` as one array, each batch's own array released as
/// soon as it is copied (its `path` left empty): a concatenation holds
/// every input until its output is whole, two copies of a million-file
/// table's paths at once.
fn take_paths(adds: &mut [AddColumns]) -> Result<StringArray> {
    let rows: usize = adds.iter().map(|a| a.path.len()).sum();
    let bytes: usize = adds
        .iter()
        .map(|a| {
            let o = a.path.value_offsets();
            (o[o.len() - 1] - o[0]) as usize
        })
        .sum();
    let mut paths = StringConcat::with_capacity(rows, bytes, "file index path");
    for a in adds.iter_mut() {
        paths.push(std::mem::replace(&mut a.path, StringArray::new_null(0)))?;
    }
    paths.finish()
}

/// Points each of `adds` at its rows of `path`, their paths in order
/// (`lens` rows each).
pub(crate) fn share_paths<'a>(
    adds: impl IntoIterator<Item = &'a mut AddColumns>,
    lens: impl IntoIterator<Item = usize>,
    path: &StringArray,
) {
    let mut at = 0;
    for (a, n) in adds.into_iter().zip(lens) {
        a.path = path.slice(at, n);
        at += n;
    }
}

/// Where files whose log path is not a plain relative name are.
#[derive(Debug, Clone)]
struct Located {
    /// Each file's object key.
    object_path: StringArray,
    /// Null: the table's store; else the other store's origin.
    store_origin: StringArray,
}

impl Located {
    /// `None` when every path of `adds` is a plain relative name.
    fn build(paths: &TablePaths, adds: &[AddColumns]) -> Result<Option<Self>> {
        let plain = adds
            .iter()
            .all(|b| b.plain_paths || b.path.iter().flatten().all(is_plain_relative));
        if plain {
            return Ok(None);
        }
        let n: usize = adds.iter().map(AddColumns::len).sum();
        let root_str = paths.root().as_ref();
        let mut object_path = arrow_array::builder::StringBuilder::with_capacity(n, n * 64);
        let mut store_origin = arrow_array::builder::StringBuilder::new();
        for batch in adds {
            for raw in batch.path.iter().flatten() {
                if batch.plain_paths || is_plain_relative(raw) {
                    // Write `root/raw` straight into the value buffer.
                    if !root_str.is_empty() {
                        object_path.write_str(root_str).map_err(fmt_err)?;
                        object_path.write_str("/").map_err(fmt_err)?;
                    }
                    object_path.write_str(raw).map_err(fmt_err)?;
                    object_path.append_value("");
                    store_origin.append_null();
                    continue;
                }
                match paths.locate(raw)? {
                    FileLocation::TableStore(p) => {
                        object_path.append_value(p.as_ref());
                        store_origin.append_null();
                    }
                    FileLocation::OtherStore { origin, path } => {
                        object_path.append_value(path.as_ref());
                        store_origin.append_value(origin);
                    }
                }
            }
        }
        Ok(Some(Self {
            object_path: object_path.finish(),
            store_origin: store_origin.finish(),
        }))
    }
}

/// Resolve a log path against the table root `root` of a local store
/// (see [`TablePaths::for_store_root`]) to its object key; a path on another
/// store is an error naming it.
pub fn resolve_path(root: &Path, raw: &str) -> Result<Path> {
    match TablePaths::for_store_root(root)?.locate(raw)? {
        FileLocation::TableStore(p) => Ok(p),
        FileLocation::OtherStore { origin, .. } => Err(LogError::InvalidPath {
            path: raw.to_string(),
            detail: format!("on another store ({origin})"),
        }),
    }
}

/// Typed partition values of one batch: `partitionValues_parsed` when the
/// checkpoint has it (no text parsing), else the `partitionValues` map.
fn typed_partitions(b: &mut PartitionValuesBuilder, batch: &AddColumns) -> Result<()> {
    if b.columns().is_empty() {
        // Keep row alignment: the builder yields no arrays at all.
        return Ok(());
    }
    if let Some(parsed) = &batch.partition_values_parsed
        && b.extend_parsed(parsed).is_ok()
    {
        return Ok(());
    }
    b.extend_map(&batch.partition_values, |i| batch.path.value(i).to_string())
}

/// The columns of the table that per-file statistics may cover (protocol
/// §8.1): of `schema` under `mapping`, as `metadata` configures them.
pub(crate) fn table_stats_columns(
    schema: &StructType,
    mapping: ColumnMappingMode,
    metadata: &Metadata,
) -> Result<Vec<StatsColumn>> {
    let config = StatsColumnsConfig::from_configuration(&metadata.configuration)?;
    schema.stats_columns(mapping, &metadata.partition_columns, &config)
}

impl FileIndex {
    /// Build from the raw live adds of a replay; `loading` says when the
    /// column statistics are parsed.
    pub fn build(
        paths: &TablePaths,
        schema: &StructType,
        mapping: ColumnMappingMode,
        metadata: &Metadata,
        adds: &[AddColumns],
        loading: StatsLoading,
    ) -> Result<Self> {
        Self::build_with(paths, schema, mapping, metadata, adds, loading, None)
    }

    /// [`FileIndex::build`] from batches the caller keeps: their paths
    /// are moved into one array first (see [`take_paths`]) and the
    /// batches pointed at slices of it, so at most one batch's paths
    /// exist twice at any time.
    pub(crate) fn build_sharing(
        paths: &TablePaths,
        schema: &StructType,
        mapping: ColumnMappingMode,
        metadata: &Metadata,
        adds: &mut [AddColumns],
        loading: StatsLoading,
    ) -> Result<Self> {
        if adds.is_empty() {
            return Self::build(paths, schema, mapping, metadata, adds, loading);
        }
        let lens: Vec<usize> = adds.iter().map(AddColumns::len).collect();
        let path = take_paths(adds)?;
        share_paths(adds.iter_mut(), lens, &path);
        let index = Self::build_with(paths, schema, mapping, metadata, adds, loading, Some(path))?;
        index.share_columns(adds);
        Ok(index)
    }

    fn build_with(
        paths: &TablePaths,
        schema: &StructType,
        mapping: ColumnMappingMode,
        metadata: &Metadata,
        adds: &[AddColumns],
        loading: StatsLoading,
        path: Option<StringArray>,
    ) -> Result<Self> {
        let n: usize = adds.iter().map(AddColumns::len).sum();
        let columns = PartitionColumn::resolve_all(schema, &metadata.partition_columns, mapping)?;
        let mut partitions = PartitionValuesBuilder::with_capacity(columns.clone(), n);
        let leaves = table_stats_columns(schema, mapping, metadata)?;
        for batch in adds {
            typed_partitions(&mut partitions, batch)?;
        }
        let partition_values = partitions.finish()?;
        let stats = IndexStats::build(leaves, adds, &loading)?;
        if adds.is_empty() {
            return Ok(Self::empty(columns, partition_values, stats));
        }
        macro_rules! col {
            ($($f:ident).+, $conv:expr) => {{
                let arrays: Vec<&dyn Array> = adds.iter().map(|a| &a.$($f).+ as &dyn Array).collect();
                let c = cat(concat!("file index ", stringify!($($f).+)), arrays)?;
                $conv(&c).clone()
            }};
        }
        let path: StringArray = match path {
            Some(p) => p,
            None => col!(path, |c: &ArrayRef| c.as_string::<i32>().clone()),
        };
        let located = Located::build(paths, adds)?;
        let size: Int64Array = col!(size, |c: &ArrayRef| c.as_primitive().clone());
        // A size is a count of bytes: a negative one is a corrupt log, and
        // read as "unknown" it would hide that.
        if arrow_arith::aggregate::min(&size).is_some_and(|m| m < 0)
            && let Some(i) = (0..size.len()).find(|&i| size.is_valid(i) && size.value(i) < 0)
        {
            return Err(LogError::InvalidAdd {
                path: path.value(i).to_string(),
                detail: format!("size {} is not a number of bytes", size.value(i)),
            });
        }
        Ok(Self {
            root: paths.root().as_ref().to_string(),
            located,
            partition_columns: columns,
            partition_values,
            stats,
            path,
            size,
            modification_time: col!(modification_time, |c: &ArrayRef| c.as_primitive().clone()),
            dv: if adds.iter().all(|a| a.dv.is_absent()) {
                DvColumns::absent(n)
            } else {
                DvColumns {
                    storage_type: col!(dv.storage_type, |c: &ArrayRef| c
                        .as_string::<i32>()
                        .clone()),
                    path_or_inline_dv: col!(dv.path_or_inline_dv, |c: &ArrayRef| c
                        .as_string::<i32>()
                        .clone()),
                    offset: col!(dv.offset, |c: &ArrayRef| c.as_primitive().clone()),
                    size_in_bytes: col!(dv.size_in_bytes, |c: &ArrayRef| c.as_primitive().clone()),
                    cardinality: col!(dv.cardinality, |c: &ArrayRef| c.as_primitive().clone()),
                }
            },
        })
    }

    fn empty(
        partition_columns: Vec<PartitionColumn>,
        partition_values: Vec<ArrayRef>,
        stats: IndexStats,
    ) -> Self {
        Self {
            partition_columns,
            partition_values,
            stats,
            path: StringArray::new_null(0),
            root: String::new(),
            located: None,
            size: Int64Array::new_null(0),
            modification_time: Int64Array::new_null(0),
            dv: DvColumns::absent(0),
        }
    }

    /// The object-store key of file `i` (in the store that
    /// [`FileIndex::store_origin`] names).
    pub fn object_path(&self, i: usize) -> std::borrow::Cow<'_, str> {
        match &self.located {
            Some(l) => l.object_path.value(i).into(),
            None if self.root.is_empty() => self.path.value(i).into(),
            None => format!("{}/{}", self.root, self.path.value(i)).into(),
        }
    }

    /// The object-store keys of every file, in order.
    pub fn object_paths(&self) -> StringArray {
        match &self.located {
            Some(l) => l.object_path.clone(),
            None => (0..self.len()).map(|i| Some(self.object_path(i))).collect(),
        }
    }

    /// `None` for a file of the table's own store (nearly always); else
    /// the origin (`scheme://authority`) of the other store that holds
    /// file `i`.
    pub fn store_origin(&self, i: usize) -> Option<&str> {
        let origins = &self.located.as_ref()?.store_origin;
        origins.is_valid(i).then(|| origins.value(i))
    }

    /// Points the path, size and time columns of `adds` (the batches this
    /// index was built from, in order) at this index's, so the replay
    /// state kept for refreshes holds no second copy of them.
    fn share_columns(&self, adds: &mut [AddColumns]) {
        if adds.iter().map(AddColumns::len).sum::<usize>() != self.len() {
            return;
        }
        let mut at = 0;
        for a in adds {
            let n = a.len();
            a.path = self.path.slice(at, n);
            a.size = self.size.slice(at, n);
            a.modification_time = self.modification_time.slice(at, n);
            at += n;
        }
    }

    /// Number of active files.
    pub fn len(&self) -> usize {
        self.path.len()
    }

    /// Bytes the index holds: its arrays, the column statistics parsed so
    /// far and the compressed statistics they are parsed from.
    pub fn memory_size(&self) -> usize {
        let partitions: usize = self
            .partition_values
            .iter()
            .map(|a| a.get_array_memory_size())
            .sum();
        self.path.get_array_memory_size()
            + self.located.as_ref().map_or(0, |l| {
                l.object_path.get_array_memory_size() + l.store_origin.get_array_memory_size()
            })
            + self.size.get_array_memory_size()
            + self.modification_time.get_array_memory_size()
            + partitions
            + self.dv.memory_size()
            + self.stats.memory_size()
    }

    /// Whether the table has no active files.
    pub fn is_empty(&self) -> bool {
        self.path.is_empty()
    }

    /// The DV descriptor of file `i`, if it has one, validated (an
    /// unknown storage type or a negative number is an error naming the
    /// file).
    pub fn deletion_vector(&self, i: usize) -> Result<Option<dar_dv::DvDescriptor>> {
        let Some((storage_type, path_or_inline_dv, offset)) =
            (i < self.len()).then(|| self.dv.key_parts(i)).flatten()
        else {
            return Ok(None);
        };
        dar_dv::DvDescriptor::try_new(
            storage_type,
            path_or_inline_dv,
            offset.map(i64::from),
            i64::from(self.dv.size_in_bytes.value(i)),
            self.dv.cardinality.value(i),
        )
        .map(Some)
        .map_err(|e| LogError::InvalidDeletionVector {
            path: self.path.value(i).to_string(),
            source: Box::new(e),
        })
    }

    /// All columns as one record batch.
    pub fn to_record_batch(&self) -> Result<RecordBatch> {
        let mut fields = vec![
            Field::new("path", DataType::Utf8, false),
            Field::new("object_path", DataType::Utf8, false),
            Field::new("size", DataType::Int64, true),
            Field::new("modification_time", DataType::Int64, true),
            Field::new("dv_storage_type", DataType::Utf8, true),
            Field::new("dv_path_or_inline_dv", DataType::Utf8, true),
            Field::new("dv_offset", DataType::Int32, true),
            Field::new("dv_size_in_bytes", DataType::Int32, true),
            Field::new("dv_cardinality", DataType::Int64, true),
        ];
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.path.clone()),
            Arc::new(self.object_paths()),
            Arc::new(self.size.clone()),
            Arc::new(self.modification_time.clone()),
            Arc::new(self.dv.storage_type.clone()),
            Arc::new(self.dv.path_or_inline_dv.clone()),
            Arc::new(self.dv.offset.clone()),
            Arc::new(self.dv.size_in_bytes.clone()),
            Arc::new(self.dv.cardinality.clone()),
        ];
        for (c, a) in self.partition_columns.iter().zip(&self.partition_values) {
            fields.push(Field::new(
                format!("partition.{}", c.name),
                a.data_type().clone(),
                true,
            ));
            columns.push(Arc::clone(a));
        }
        fields.push(Field::new("num_records", DataType::Int64, true));
        columns.push(Arc::new(self.stats.num_records.clone()));
        fields.push(Field::new("tight_bounds", DataType::Boolean, true));
        columns.push(Arc::new(self.stats.tight_bounds.clone()));
        for c in self.stats.all()? {
            let name = c.column.logical_name();
            for (kind, a) in [("min", &c.min_values), ("max", &c.max_values)] {
                if let Some(a) = a {
                    fields.push(Field::new(
                        format!("{kind}.{name}"),
                        a.data_type().clone(),
                        true,
                    ));
                    columns.push(Arc::clone(a));
                }
            }
            fields.push(Field::new(
                format!("null_count.{name}"),
                DataType::Int64,
                true,
            ));
            columns.push(Arc::new(c.null_count.clone()));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(|e| LogError::arrow("file index batch", e))
    }
}

#[cfg(test)]
mod tests;
