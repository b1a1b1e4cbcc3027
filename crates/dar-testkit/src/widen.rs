//! [`TableWriter::widen_column`]: type widening (§11) as Delta-Spark
//! commits it. The column's type changes in `metaData` with a
//! `delta.typeChanges` entry, the protocol gains `typeWidening`, and the
//! files already written keep their narrower Parquet type and their stats
//! text as written (a float's bound stays the float's shortest text). A
//! checkpoint written afterwards types its `stats_parsed` with the new
//! schema, so an old float bound `0.1` is stored there as the double 0.1,
//! below the float the file holds: exactly what Delta-Spark writes.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{
    Array, ArrayRef, Decimal128Array, Float64Array, Int64Array, RecordBatch,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use serde_json::{Value, json};

use crate::actions::{Protocol, commit_info_json};
use crate::error::{Result, TestkitError};
use crate::parquet::ParquetOptions;
use crate::{CheckpointOptions, Commit, TableWriter};

/// Microseconds in a day.
const MICROS_PER_DAY: i64 = 86_400_000_000;

impl TableWriter {
    /// Widens the top-level data column `column` to `to` in one commit
    /// (`metaData` with the new type and its `delta.typeChanges` history,
    /// the `typeWidening` feature and `delta.enableTypeWidening`). The
    /// pairs are the protocol's (§11): a wider integer, `float` or an
    /// integer to `double`, `date` to `timestamp_ntz`, an integer or a
    /// decimal to a decimal with room for every value. Files written from
    /// now on have the new type; those written before keep theirs (and
    /// their stats); kept rows are widened, so
    /// [`TableWriter::snapshot_rows`] is what a reader returns.
    pub async fn widen_column(&mut self, column: &str, to: DataType) -> Result<Commit> {
        let refuse = |reason: String| TestkitError::SchemaMismatch { reason };
        let (index, field) = self
            .schema
            .logical
            .column_with_name(column)
            .ok_or_else(|| refuse(format!("no column `{column}` to widen")))?;
        if self.partition_indexes.contains(&index) {
            return Err(refuse(format!(
                "the kit widens data columns only; `{column}` is a partition column"
            )));
        }
        let from = field.data_type().clone();
        let (Some(from_name), Some(to_name)) = (delta_name(&from), delta_name(&to)) else {
            return Err(refuse(format!(
                "`{column}`: {from} to {to} is not a widening"
            )));
        };
        if !is_widening(&from, &to) {
            return Err(refuse(format!(
                "`{column}`: {from_name} to {to_name} is not a widening of the protocol"
            )));
        }
        let version = self.version + 1;
        self.schema.logical = with_type(&self.schema.logical, index, &to);
        self.schema.physical = with_type(&self.schema.physical, index, &to);
        self.metadata.schema_string = widened_schema_string(
            &self.metadata.schema_string,
            index,
            &from_name,
            &to_name,
            version,
        )?;
        self.metadata
            .configuration
            .insert("delta.enableTypeWidening".into(), "true".into());
        let mut features = self.protocol.features.clone();
        for feature in ["typeWidening"]
            .into_iter()
            .chain(matches!(to, DataType::Timestamp(_, None)).then_some("timestampNtz"))
        {
            if !features.contains(&feature) {
                features.push(feature);
            }
        }
        self.protocol = Protocol::for_features(features, self.protocol.writer_only.clone());
        for file in self.files.values_mut() {
            if let Some(rows) = &file.rows {
                file.rows = Some(widen_rows(rows, index, &to, &self.schema.logical)?);
            }
        }
        let timestamp = self.timestamp(version);
        let actions = vec![
            commit_info_json(timestamp, "CHANGE COLUMN", self.in_commit_timestamps),
            self.protocol.json(),
            self.metadata.json(),
        ];
        self.write_commit(version, &actions).await?;
        Ok(Commit {
            version,
            added: Vec::new(),
            removed: Vec::new(),
        })
    }
}

/// The floats of [`write_widened_float_table`]'s files written before the
/// widening, file by file. Each file's bounds are floats whose shortest
/// text, read as a double, lies inside the float's range of values: `0.7`
/// reads above the float 0.699999988…, `0.1` below 0.100000001….
pub const WIDENED_FLOATS: [&[Option<f32>]; 2] = [
    &[Some(0.7), Some(1.5), None, Some(2.0)],
    &[Some(-1.0), Some(0.1)],
];

/// The doubles of [`write_widened_float_table`]'s file written after the
/// widening.
pub const WIDENED_DOUBLES: &[Option<f64>] = &[Some(0.1), Some(2.5)];

/// Writes, at `dir` (a local directory), the table of a `float` column
/// `x` widened to `double` (beside a `long` column `id`): the files of
/// [`WIDENED_FLOATS`], the widening, the file of [`WIDENED_DOUBLES`], then
/// a checkpoint as `checkpoint` says (`stats_parsed` holds the old files'
/// bounds as doubles read from the floats' text, as Delta-Spark writes
/// it). Row groups of 2 rows and pages of 1, with a page index, so every
/// level of statistics is there. Rows are kept
/// ([`TableWriter::snapshot_rows`]).
pub async fn write_widened_float_table(
    dir: &std::path::Path,
    checkpoint: &CheckpointOptions,
    v2_checkpoints: bool,
) -> Result<TableWriter> {
    use arrow_array::Float32Array;
    let store: Arc<dyn object_store::ObjectStore> = Arc::new(
        object_store::local::LocalFileSystem::new_with_prefix(dir).map_err(|e| {
            TestkitError::Io {
                path: dir.display().to_string(),
                reason: e.to_string(),
            }
        })?,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("x", DataType::Float32, true),
    ]));
    let mut table = TableWriter::builder(store, object_store::path::Path::from(""), schema)
        .with_parquet_options(
            ParquetOptions::default()
                .with_row_group_rows(2)
                .with_page_rows(1)
                .with_page_index(true),
        )
        .with_v2_checkpoints(v2_checkpoints)
        .with_kept_rows(true)
        .create()
        .await?;
    let mut next_id = 0i64;
    let mut ids = |n: usize| -> ArrayRef {
        let ids: Int64Array = (next_id..next_id + n as i64).collect();
        next_id += n as i64;
        Arc::new(ids)
    };
    for floats in WIDENED_FLOATS {
        let x: ArrayRef = Arc::new(Float32Array::from(floats.to_vec()));
        let batch = RecordBatch::try_new(Arc::clone(table.schema()), vec![ids(floats.len()), x])
            .map_err(TestkitError::arrow("widened float table"))?;
        table.append(&batch).await?;
    }
    table.widen_column("x", DataType::Float64).await?;
    let x: ArrayRef = Arc::new(Float64Array::from(WIDENED_DOUBLES.to_vec()));
    let batch = RecordBatch::try_new(
        Arc::clone(table.schema()),
        vec![ids(WIDENED_DOUBLES.len()), x],
    )
    .map_err(TestkitError::arrow("widened float table"))?;
    table.append(&batch).await?;
    table.checkpoint_with(checkpoint).await?;
    Ok(table)
}

/// The Delta name of a primitive type the kit widens.
fn delta_name(t: &DataType) -> Option<String> {
    Some(match t {
        DataType::Int8 => "byte".into(),
        DataType::Int16 => "short".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "long".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp_ntz".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        _ => return None,
    })
}

/// Decimal digits an integer type needs (Delta-Spark's rule).
fn integer_digits(t: &DataType) -> Option<i16> {
    Some(match t {
        DataType::Int8 => 3,
        DataType::Int16 => 5,
        DataType::Int32 => 10,
        DataType::Int64 => 20,
        _ => return None,
    })
}

/// Whether `from -> to` is one of the protocol's widenings (§11).
fn is_widening(from: &DataType, to: &DataType) -> bool {
    use DataType as D;
    let rank = |t: &DataType| match t {
        D::Int8 => Some(1),
        D::Int16 => Some(2),
        D::Int32 => Some(3),
        D::Int64 => Some(4),
        _ => None,
    };
    match (from, to) {
        (D::Float32, D::Float64) | (D::Int8 | D::Int16 | D::Int32, D::Float64) => true,
        (D::Date32, D::Timestamp(TimeUnit::Microsecond, None)) => true,
        (D::Decimal128(p1, s1), D::Decimal128(p2, s2)) => {
            s2 >= s1 && i16::from(*p2) - i16::from(*s2) >= i16::from(*p1) - i16::from(*s1)
        }
        (f, D::Decimal128(p, s)) => {
            integer_digits(f).is_some_and(|d| i16::from(*p) - i16::from(*s) >= d)
        }
        (f, t) => matches!((rank(f), rank(t)), (Some(a), Some(b)) if a < b),
    }
}

/// `schema` with field `index` of type `to` (name, nullability and
/// metadata kept).
fn with_type(schema: &Schema, index: usize, to: &DataType) -> Arc<Schema> {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let f = f.as_ref().clone();
            if i == index {
                f.with_data_type(to.clone())
            } else {
                f
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The `schemaString` with top-level field `index` of type `to_name`, its
/// `delta.typeChanges` history grown by one entry.
fn widened_schema_string(
    schema_string: &str,
    index: usize,
    from_name: &str,
    to_name: &str,
    version: u64,
) -> Result<String> {
    let broken = |what: &str| TestkitError::SchemaMismatch {
        reason: format!("the kit's own schemaString {what}"),
    };
    let mut schema: Value =
        serde_json::from_str(schema_string).map_err(|_| broken("does not parse"))?;
    let field = schema
        .get_mut("fields")
        .and_then(|f| f.get_mut(index))
        .ok_or_else(|| broken("lacks the field"))?;
    field["type"] = json!(to_name);
    let metadata = field
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| broken("has a field without metadata"))?;
    let history = metadata
        .entry("delta.typeChanges")
        .or_insert_with(|| json!([]));
    if let Some(entries) = history.as_array_mut() {
        entries.push(json!({"toType": to_name, "fromType": from_name, "tableVersion": version}));
    }
    Ok(schema.to_string())
}

/// `rows` with column `index` widened to `to`, under `schema`.
fn widen_rows(
    rows: &RecordBatch,
    index: usize,
    to: &DataType,
    schema: &Arc<Schema>,
) -> Result<RecordBatch> {
    let mut columns = rows.columns().to_vec();
    columns[index] = widen_array(&columns[index], to)?;
    RecordBatch::try_new(Arc::clone(schema), columns)
        .map_err(TestkitError::arrow("widen kept rows"))
}

/// The values of `a` at the wider type `to`, each exactly.
fn widen_array(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    use DataType as D;
    let ints: Option<Int64Array> = match a.data_type() {
        D::Int8 => Some(a.as_primitive::<Int8Type>().unary(i64::from)),
        D::Int16 => Some(a.as_primitive::<Int16Type>().unary(i64::from)),
        D::Int32 => Some(a.as_primitive::<Int32Type>().unary(i64::from)),
        D::Int64 => Some(a.as_primitive::<Int64Type>().clone()),
        _ => None,
    };
    let out: ArrayRef = match (a.data_type(), to, ints) {
        (D::Int8, D::Int16, _) => Arc::new(
            a.as_primitive::<Int8Type>()
                .unary::<_, Int16Type>(i16::from),
        ),
        (D::Int8, D::Int32, _) => Arc::new(
            a.as_primitive::<Int8Type>()
                .unary::<_, Int32Type>(i32::from),
        ),
        (D::Int16, D::Int32, _) => Arc::new(
            a.as_primitive::<Int16Type>()
                .unary::<_, Int32Type>(i32::from),
        ),
        (_, D::Int64, Some(i)) => Arc::new(i),
        (_, D::Float64, Some(i)) => {
            // Exact: only byte, short and integer widen to double.
            let f: Float64Array = i.unary(|v| v as f64);
            Arc::new(f)
        }
        (_, D::Decimal128(p, s), Some(i)) => {
            let scale = 10i128.pow(u32::from(s.unsigned_abs()));
            let d: Decimal128Array = i.unary(|v| i128::from(v) * scale);
            Arc::new(
                d.with_precision_and_scale(*p, *s)
                    .map_err(TestkitError::arrow("widen kept rows"))?,
            )
        }
        (D::Float32, D::Float64, _) => {
            let f: Float64Array = a.as_primitive::<Float32Type>().unary(f64::from);
            Arc::new(f)
        }
        (D::Date32, D::Timestamp(TimeUnit::Microsecond, None), _) => {
            let t: TimestampMicrosecondArray = a
                .as_primitive::<Date32Type>()
                .unary(|d| i64::from(d) * MICROS_PER_DAY);
            Arc::new(t)
        }
        (D::Decimal128(_, s1), D::Decimal128(p, s2), _) => {
            let scale = 10i128.pow(u32::from((s2 - s1).unsigned_abs()));
            let d: Decimal128Array = a.as_primitive::<Decimal128Type>().unary(|v| v * scale);
            Arc::new(
                d.with_precision_and_scale(*p, *s2)
                    .map_err(TestkitError::arrow("widen kept rows"))?,
            )
        }
        (from, to, _) => {
            return Err(TestkitError::SchemaMismatch {
                reason: format!("cannot widen {from} to {to}"),
            });
        }
    };
    Ok(out)
}
