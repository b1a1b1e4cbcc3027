//! Delta-style file statistics for tests: parsed from `add.stats` JSON in a
//! table's `_delta_log`, or computed from batches the way Delta writers do
//! (NaN left out, strings cut to a 32-character prefix with a tie-breaker,
//! timestamps truncated to milliseconds).

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow_cast::cast;
use arrow_schema::{DataType, Schema};
use dar_prune::{ColumnPath, FileStatistics, Scalar, StatisticsTable};
use serde_json::Value;

/// The `add` actions of all JSON commits, in version order: (path, stats).
pub fn adds(table: &Path) -> Vec<(String, Value)> {
    let mut commits: Vec<_> = std::fs::read_dir(table.join("_delta_log"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p.to_string_lossy().contains("checkpoint")
        })
        .collect();
    commits.sort();
    let mut out = Vec::new();
    for commit in commits {
        for line in std::fs::read_to_string(commit).unwrap().lines() {
            let action: Value = serde_json::from_str(line).unwrap();
            if let Some(add) = action.get("add") {
                let stats = add["stats"]
                    .as_str()
                    .map(|s| serde_json::from_str(s).unwrap())
                    .unwrap_or(Value::Null);
                out.push((add["path"].as_str().unwrap().to_string(), stats));
            }
        }
    }
    out
}

fn lookup<'a>(v: &'a Value, key: &str, path: &ColumnPath) -> Option<&'a Value> {
    let mut v = v.get(key)?;
    for part in path.parts() {
        v = v.get(part)?;
    }
    Some(v)
}

/// Typed array of one stats value per file: JSON text cast to `t` (values
/// that do not parse become NULL, i.e. unknown).
fn typed(values: Vec<Option<&Value>>, t: &DataType) -> ArrayRef {
    let text: StringArray = values
        .into_iter()
        .map(|v| match v? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .collect();
    cast(&text, t).unwrap()
}

/// File statistics for the given leaf columns (physical paths and types).
pub fn from_json(adds: &[(String, Value)], columns: &[(&str, DataType)]) -> FileStatistics {
    let n = adds.len();
    let records: Int64Array = adds
        .iter()
        .map(|(_, s)| s.get("numRecords").and_then(Value::as_i64))
        .collect();
    let tight: BooleanArray = adds
        .iter()
        .map(|(_, s)| s.get("tightBounds").and_then(Value::as_bool))
        .collect();
    let mut b = FileStatistics::builder(n)
        .with_num_records(Arc::new(records))
        .with_tight_bounds(tight);
    for (name, t) in columns {
        let path = ColumnPath::from_dotted(name);
        let get = |key: &str| {
            adds.iter()
                .map(|(_, s)| lookup(s, key, &path))
                .collect::<Vec<_>>()
        };
        b = b
            .with_min(path.clone(), typed(get("minValues"), t))
            .with_max(path.clone(), typed(get("maxValues"), t))
            .with_null_count(path.clone(), typed(get("nullCount"), &DataType::Int64));
    }
    b.build()
}

/// Delta-writer-like statistics of each batch ("file") for `columns`.
pub fn from_batches(
    files: &[RecordBatch],
    schema: &Schema,
    columns: &[&str],
    loose: &[bool],
) -> StatisticsTable {
    use crate::reference::value_at;
    let n = files.len();
    let mut table = StatisticsTable::new(n);
    for name in columns {
        let path = ColumnPath::from_dotted(name);
        let mut mins = Vec::new();
        let mut maxs = Vec::new();
        let mut nulls = Vec::new();
        for (f, batch) in files.iter().enumerate() {
            let values: Vec<Scalar> = (0..batch.num_rows())
                .map(|r| value_at(batch, &path, r))
                .collect();
            let null_count = values.iter().filter(|v| v.is_null()).count() as i64;
            let rows = values.len() as i64;
            // Wide bounds (a DV was added later): the null count may be any
            // number in between and must then be ignored.
            nulls.push(
                if loose[f] && rows >= 3 && (1..rows).contains(&(null_count + 1)) {
                    null_count + 1
                } else {
                    null_count
                },
            );
            let mut present: Vec<Scalar> = values
                .into_iter()
                .filter(|v| {
                    !v.is_null()
                        && !matches!(v, Scalar::Float64(x) if x.is_nan())
                        && !matches!(v, Scalar::Float32(x) if x.is_nan())
                })
                .collect();
            present.sort_by(compare);
            mins.push(
                present
                    .first()
                    .cloned()
                    .map(|v| zero(truncate(v, false), -0.0))
                    .unwrap_or(Scalar::Null),
            );
            maxs.push(
                present
                    .last()
                    .cloned()
                    .map(|v| zero(truncate(v, true), 0.0))
                    .unwrap_or(Scalar::Null),
            );
        }
        let t = arrow_schema_type(schema, &path);
        let stats = dar_prune::ColumnStatistics::unknown()
            .with_min(to_array(&mins, &t))
            .with_max(to_array(&maxs, &t))
            .with_null_count(Arc::new(Int64Array::from(nulls)))
            .with_row_count(Arc::new(Int64Array::from(
                files
                    .iter()
                    .map(|b| b.num_rows() as i64)
                    .collect::<Vec<_>>(),
            )))
            .with_tight_bounds(BooleanArray::from(
                loose.iter().map(|l| !l).collect::<Vec<_>>(),
            ))
            .with_semantics(dar_prune::BoundsSemantics::delta(32));
        table.insert(path, stats);
    }
    table
}

fn arrow_schema_type(schema: &Schema, path: &ColumnPath) -> DataType {
    let mut t = schema
        .field_with_name(&path.parts()[0])
        .unwrap()
        .data_type()
        .clone();
    for part in &path.parts()[1..] {
        let DataType::Struct(f) = t else { panic!() };
        t = f
            .iter()
            .find(|f| f.name() == part)
            .unwrap()
            .data_type()
            .clone();
    }
    t
}

/// A zero bound as the Parquet spec asks writers to store it: `-0.0` for a
/// minimum, `0.0` for a maximum (the zeros are one value in SQL's order).
fn zero(v: Scalar, zero: f64) -> Scalar {
    // A `0.0` pattern matches either zero (float patterns compare with `==`).
    match v {
        Scalar::Float64(0.0) => Scalar::Float64(zero),
        Scalar::Float32(0.0) => Scalar::Float32(zero as f32),
        other => other,
    }
}

fn compare(a: &Scalar, b: &Scalar) -> std::cmp::Ordering {
    use Scalar as S;
    // NaN is left out before sorting; the zeros are equal, as in SQL.
    match (a, b) {
        (S::Int32(a), S::Int32(b)) => a.cmp(b),
        (S::Float64(a), S::Float64(b)) => a.partial_cmp(b).unwrap(),
        (S::Float32(a), S::Float32(b)) => a.partial_cmp(b).unwrap(),
        (S::Utf8(a), S::Utf8(b)) => a.as_bytes().cmp(b.as_bytes()),
        (S::Date32(a), S::Date32(b)) => a.cmp(b),
        (S::Timestamp(a), S::Timestamp(b)) => a.cmp(b),
        (S::Decimal128 { value: a, .. }, S::Decimal128 { value: b, .. }) => a.cmp(b),
        (S::Boolean(a), S::Boolean(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// What Delta writers store: 32-character string prefixes (a cut max ends
/// in a tie-breaker: Delta-Spark's U+10FFFD, old Spark's U+FFFD, kernel-rs's
/// 0x7F, or nothing), timestamps truncated down to milliseconds.
fn truncate(v: Scalar, is_max: bool) -> Scalar {
    match v {
        Scalar::Utf8(s) if s.chars().count() > 32 => {
            let prefix: String = s.chars().take(32).collect();
            let tie = ["\u{10FFFD}", "\u{FFFD}", "\u{7F}", ""][s.len() % 4];
            Scalar::Utf8(if is_max {
                format!("{prefix}{tie}")
            } else {
                prefix
            })
        }
        Scalar::Timestamp(us) => Scalar::Timestamp(us.div_euclid(1000) * 1000),
        other => other,
    }
}

fn to_array(values: &[Scalar], t: &DataType) -> ArrayRef {
    let parts: Vec<ArrayRef> = values
        .iter()
        .map(|v| cast(&v.to_array(), t).unwrap())
        .collect();
    let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&refs).unwrap()
}
