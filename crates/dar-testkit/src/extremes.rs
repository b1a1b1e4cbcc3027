//! A table with every partition type at the ends of its range: one file
//! per row of partition values (the smallest of each type, the largest,
//! NaN and the infinities, `-0.0`, non-ASCII strings, year 1 and 9999
//! instants, NULL), each file holding one `id` (1 to 6) with its stats.
//!
//! | id | values |
//! |---|---|
//! | 1 | each type's minimum (`false`, -128, ..., float -3.4028235E38, decimal -MAX, `a`, `X'00'`, year 1) |
//! | 2 | each type's maximum (`true`, 127, ..., float 3.4028235E38, decimal MAX, `ünï €😀`, `X'7f'`, year 9999) |
//! | 3 | zeros, floats NaN, `plain`, `ab`, the epoch |
//! | 4 | ones, float -Infinity, double Infinity, 1.50, `plain`, `ab`, 2024-02-29 12:30:00.000001 |
//! | 5 | minus ones, -0.0, -1.50, `z`, the microsecond before the epoch |
//! | 6 | NULL in every partition column |

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use serde_json::{Value, json};

use crate::{HandTable, Result};

/// (column, Delta type) of the partition columns.
pub const PARTITION_EXTREMES_COLUMNS: [(&str, &str); 13] = [
    ("b", "boolean"),
    ("i8", "byte"),
    ("i16", "short"),
    ("i32", "integer"),
    ("i64", "long"),
    ("f32", "float"),
    ("f64", "double"),
    ("dec", "decimal(38,2)"),
    ("s", "string"),
    ("bin", "binary"),
    ("d", "date"),
    ("ts", "timestamp"),
    ("ntz", "timestamp_ntz"),
];

/// The largest `decimal(38, 2)` value, as partition-value text.
pub const MAX_DECIMAL_38_2: &str = "999999999999999999999999999999999999.99";

/// Partition values of each file (id = index + 1), in `COLUMNS` order.
fn files() -> Vec<[Value; 13]> {
    vec![
        [
            json!("false"),
            json!("-128"),
            json!("-32768"),
            json!("-2147483648"),
            json!("-9223372036854775808"),
            json!("-3.4028235E38"),
            json!("-1.7976931348623157E308"),
            json!(format!("-{MAX_DECIMAL_38_2}")),
            json!("a"),
            json!("\u{0}"),
            json!("0001-01-01"),
            json!("0001-01-01T00:00:00.000000Z"),
            json!("0001-01-01 00:00:00"),
        ],
        [
            json!("true"),
            json!("127"),
            json!("32767"),
            json!("2147483647"),
            json!("9223372036854775807"),
            json!("3.4028235E38"),
            json!("1.7976931348623157E308"),
            json!(MAX_DECIMAL_38_2),
            json!("ünï €😀"),
            json!("\u{7f}"),
            json!("9999-12-31"),
            json!("9999-12-31T23:59:59.999999Z"),
            json!("9999-12-31 23:59:59.999999"),
        ],
        [
            json!("true"),
            json!("0"),
            json!("0"),
            json!("0"),
            json!("0"),
            json!("NaN"),
            json!("NaN"),
            json!("0.00"),
            json!("plain"),
            json!("ab"),
            json!("1970-01-01"),
            json!("1970-01-01T00:00:00.000000Z"),
            json!("1970-01-01 00:00:00"),
        ],
        [
            json!("false"),
            json!("1"),
            json!("1"),
            json!("1"),
            json!("1"),
            json!("-Infinity"),
            json!("Infinity"),
            json!("1.50"),
            json!("plain"),
            json!("ab"),
            json!("2024-02-29"),
            json!("2024-02-29T12:30:00.000001Z"),
            json!("2024-02-29 12:30:00.000001"),
        ],
        [
            json!("false"),
            json!("-1"),
            json!("-1"),
            json!("-1"),
            json!("-1"),
            json!("-0.0"),
            json!("-0.0"),
            json!("-1.50"),
            json!("z"),
            json!("z"),
            json!("1969-12-31"),
            json!("1969-12-31T23:59:59.999999Z"),
            json!("1969-12-31 23:59:59.999999"),
        ],
        [
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ],
    ]
}

/// Writes the table at `dir` (see the module docs).
pub fn write_partition_extremes(dir: &Path) -> Result<HandTable> {
    let mut t = HandTable::new(dir)?;
    let mut fields = vec![HandTable::field("id", json!("long"), json!({}))];
    fields.extend(
        PARTITION_EXTREMES_COLUMNS
            .iter()
            .map(|(name, ty)| HandTable::field(name, json!(ty), json!({}))),
    );
    let names: Vec<&str> = PARTITION_EXTREMES_COLUMNS.iter().map(|(n, _)| *n).collect();
    let mut actions = vec![
        HandTable::protocol_with(&["timestampNtz"]),
        HandTable::metadata(Value::Array(fields), &names, json!({})),
    ];
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
    for (i, values) in files().into_iter().enumerate() {
        let id = i as i64 + 1;
        let path = format!("part-{id}.parquet");
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![id]))])
                .map_err(|source| crate::TestkitError::Arrow {
                    context: format!("the batch of {path}"),
                    source,
                })?;
        let size = t.write_parquet(&path, &batch)?;
        let partition_values: serde_json::Map<String, Value> = names
            .iter()
            .zip(values)
            .map(|(n, v)| (n.to_string(), v))
            .collect();
        let stats = json!({"numRecords": 1, "minValues": {"id": id}, "maxValues": {"id": id}, "nullCount": {"id": 0}});
        actions.push(HandTable::add(
            &path,
            size,
            Value::Object(partition_values),
            Some(stats),
        ));
    }
    t.commit(&actions)?;
    Ok(t)
}
