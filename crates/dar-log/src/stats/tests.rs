use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, Int32Array, Int64Array, StringArray,
    StructArray, UInt32Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as A, Field, Fields};
use serde_json::json;

use super::*;
use crate::schema::{ColumnMappingMode, StatsColumnsConfig, StructType};

fn columns(fields: serde_json::Value) -> Vec<StatsColumn> {
    let schema =
        StructType::from_json(&json!({"type": "struct", "fields": fields}).to_string()).unwrap();
    schema
        .stats_columns(
            ColumnMappingMode::None,
            &[],
            &StatsColumnsConfig::default().with_num_indexed_cols(-1),
        )
        .unwrap()
}

fn all_types() -> Vec<StatsColumn> {
    columns(json!([
        {"name": "i", "type": "integer"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "dec", "type": "decimal(20,10)"},
        {"name": "s", "type": "string"},
        {"name": "date", "type": "date"},
        {"name": "ts", "type": "timestamp"},
        {"name": "ntz", "type": "timestamp_ntz"},
        {"name": "b", "type": "boolean"},
        {"name": "n", "type": {"type": "struct", "fields": [{"name": "x", "type": "long"}]}},
    ]))
}

/// The stats of one file whose `stats` JSON is `text`.
fn from_json(cols: Vec<StatsColumn>, text: &str) -> FileStats {
    let mut b = StatsBuilder::new(cols);
    b.push_json(Some(text));
    b.finish().unwrap()
}

/// The stats of the files of a checkpoint's `stats_parsed` column.
fn from_parsed(cols: Vec<StatsColumn>, stats_parsed: &StructArray) -> FileStats {
    let mut b = StatsBuilder::new(cols);
    b.extend_parsed(stats_parsed).unwrap();
    b.finish().unwrap()
}

fn min(stats: &FileStats, name: &str) -> ArrayRef {
    stats.column(name).unwrap().min_values.clone().unwrap()
}

fn max(stats: &FileStats, name: &str) -> ArrayRef {
    stats.column(name).unwrap().max_values.clone().unwrap()
}

#[test]
fn json_stats_into_typed_columns() {
    let mut b = StatsBuilder::new(all_types());
    b.push_json(Some(
        r#"{"numRecords":4,"minValues":{"i":-1,"f":-1.5,"d":"NaN","dec":-9999999999.9999999999,
        "s":"a\"\u00e9","date":"2023-01-15","ts":"2023-05-31T11:58:33.633-07:00",
        "ntz":"2023-06-15T12:30:00.000","n":{"x":10},"extra":{"deep":[1,2]}},
        "maxValues":{"i":7,"f":0.1,"d":1E+300,"dec":0E-10,"s":"zz","date":"2024-06-15",
        "ts":"2024-12-25T00:00:00.000Z","ntz":"2024-12-25T00:00:00.000","n":{"x":50}},
        "nullCount":{"i":0,"f":1,"d":2,"dec":0,"s":0,"date":0,"ts":0,"ntz":0,"b":3,"n":{"x":4}},
        "tightBounds":false}"#,
    ));
    b.push_json(None);
    b.push_json(Some(r#"{"numRecords":0}"#));
    let stats = b.finish().unwrap();
    assert_eq!(stats.len(), 3);
    assert_eq!(
        stats.num_records.iter().collect::<Vec<_>>(),
        [Some(4), None, Some(0)]
    );
    assert_eq!(
        stats.tight_bounds.iter().collect::<Vec<_>>(),
        [Some(false), None, Some(true)]
    );

    assert_eq!(
        min(&stats, "i")
            .as_primitive::<Int32Type>()
            .iter()
            .collect::<Vec<_>>(),
        [Some(-1), None, None]
    );
    assert_eq!(
        max(&stats, "f").as_primitive::<Float32Type>().value(0),
        0.1f32
    );
    assert!(min(&stats, "d").is_null(0), "\"NaN\" is no bound");
    assert_eq!(
        max(&stats, "d").as_primitive::<Float64Type>().value(0),
        1e300
    );
    let dec = min(&stats, "dec");
    assert_eq!(dec.data_type(), &A::Decimal128(20, 10));
    assert_eq!(
        dec.as_primitive::<Decimal128Type>().value(0),
        -99_999_999_999_999_999_999
    );
    assert_eq!(
        max(&stats, "dec").as_primitive::<Decimal128Type>().value(0),
        0
    );
    assert_eq!(min(&stats, "s").as_string::<i32>().value(0), "a\"é");
    assert_eq!(
        min(&stats, "date").as_primitive::<Date32Type>().value(0),
        19_372
    );
    let ts = min(&stats, "ts");
    assert_eq!(
        ts.data_type(),
        &A::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        ts.as_primitive::<TimestampMicrosecondType>().value(0),
        1_685_559_513_633_000
    );
    assert_eq!(
        min(&stats, "ntz")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_686_832_200_000_000
    );
    assert_eq!(max(&stats, "n.x").as_primitive::<Int64Type>().value(0), 50);

    let b = stats.column("b").unwrap();
    assert!(b.min_values.is_none() && b.max_values.is_none());
    assert_eq!(
        b.null_count.iter().collect::<Vec<_>>(),
        [Some(3), None, None]
    );
    assert_eq!(stats.column("n.x").unwrap().null_count.value(0), 4);
    assert!(stats.columns.iter().all(|c| c.invalid == 0));
    assert_eq!(stats.malformed, 0);
}

#[test]
fn stats_in_an_old_type_become_null_and_are_counted() {
    // After widening: a long column whose stats were written as something else,
    // a timestamp_ntz column with date stats (cast up), an int with a decimal.
    let cols = columns(json!([
        {"name": "l", "type": "long"},
        {"name": "ntz", "type": "timestamp_ntz"},
        {"name": "dec", "type": "decimal(4,1)"},
        {"name": "s", "type": "string"},
        {"name": "date", "type": "date"},
    ]));
    let stats = from_json(
        cols,
        r#"{"minValues":{"l":1.5,"ntz":"2023-01-15","dec":12,"s":5,"date":"2023-01-15T00:00:00.000Z"},
            "maxValues":{"l":"7","ntz":"2023-01-15T00:00:00Z","dec":123.45,"s":{"x":1},"date":[1]},
            "nullCount":{"l":-1,"ntz":"x","dec":null,"s":1.0}}"#,
    );
    let invalid: Vec<usize> = stats.columns.iter().map(|c| c.invalid).collect();
    assert_eq!(invalid, [2, 2, 1, 3, 2]);
    assert!(min(&stats, "l").is_null(0) && max(&stats, "l").is_null(0));
    assert_eq!(
        min(&stats, "ntz")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_673_740_800_000_000
    );
    assert!(
        max(&stats, "ntz").is_null(0),
        "a zone on timestamp_ntz is not that type"
    );
    assert_eq!(
        min(&stats, "dec").as_primitive::<Decimal128Type>().value(0),
        120
    );
    assert!(
        max(&stats, "dec").is_null(0),
        "123.45 does not fit decimal(4,1)"
    );
    assert_eq!(stats.column("l").unwrap().null_count.value(0), -1);
    assert!(stats.column("ntz").unwrap().null_count.is_null(0));
}

#[test]
fn malformed_json_means_no_stats() {
    let mut b = StatsBuilder::new(all_types());
    for text in [
        r#"{"numRecords":1,"minValues":{"i":1"#,
        "nope",
        r#"{"a":1} trailing"#,
    ] {
        b.push_json(Some(text));
    }
    b.push_json(Some("[1,2]"));
    b.push_json(Some("null"));
    let stats = b.finish().unwrap();
    assert_eq!(stats.malformed, 3);
    assert_eq!(stats.len(), 5);
    assert_eq!(stats.num_records.null_count(), 5);
    assert!(min(&stats, "i").is_null(0));
    // A non-object stats value is well-formed JSON without any stats.
    assert_eq!(
        stats.tight_bounds.iter().collect::<Vec<_>>(),
        [None, None, None, Some(true), Some(true)]
    );
}

#[test]
fn duplicate_and_reordered_keys() {
    let cols = columns(json!([{"name": "a", "type": "long"}, {"name": "b", "type": "long"}]));
    let stats = from_json(
        cols,
        r#"{"minValues":{"b":2,"a":1,"a":3},"maxValues":{"\u0061":9}}"#,
    );
    assert_eq!(
        min(&stats, "a").as_primitive::<Int64Type>().value(0),
        3,
        "last duplicate wins, as in serde"
    );
    assert_eq!(min(&stats, "b").as_primitive::<Int64Type>().value(0), 2);
    assert_eq!(
        max(&stats, "a").as_primitive::<Int64Type>().value(0),
        9,
        "escaped keys match"
    );
}

fn struct_of(fields: Vec<(&str, ArrayRef)>, nulls: Option<NullBuffer>) -> ArrayRef {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = fields
        .into_iter()
        .map(|(n, a)| (Field::new(n, a.data_type().clone(), true), a))
        .unzip();
    Arc::new(StructArray::new(Fields::from(fields), arrays, nulls))
}

#[test]
fn stats_parsed_structs_are_cast_up() {
    let cols = columns(json!([
        {"name": "l", "type": "long"},
        {"name": "d", "type": "date"},
        {"name": "ts", "type": "timestamp"},
        {"name": "x", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "nested", "type": {"type": "struct", "fields": [{"name": "y", "type": "integer"}]}},
    ]));
    let mins = struct_of(
        vec![
            (
                "l",
                Arc::new(Int32Array::from(vec![Some(1), Some(2), None])),
            ),
            ("d", Arc::new(Int32Array::from(vec![10, 11, 12]))),
            ("ts", Arc::new(Int64Array::from(vec![1_000_000, 2, 3]))),
            ("x", Arc::new(Float64Array::from(vec![f64::NAN, 1.5, 2.5]))),
            ("s", Arc::new(Int32Array::from(vec![1, 2, 3]))),
            (
                "nested",
                struct_of(
                    vec![("y", Arc::new(Int32Array::from(vec![5, 6, 7])))],
                    Some(NullBuffer::from(vec![true, false, true])),
                ),
            ),
        ],
        None,
    );
    let maxs = struct_of(
        vec![("D", Arc::new(Date32Array::from(vec![20, 21, 22])))],
        None,
    );
    let null_counts = struct_of(vec![("l", Arc::new(Int32Array::from(vec![0, 1, 2])))], None);
    let stats_parsed = StructArray::new(
        Fields::from(vec![
            Field::new("numRecords", A::Int64, true),
            Field::new("minValues", mins.data_type().clone(), true),
            Field::new("maxValues", maxs.data_type().clone(), true),
            Field::new("nullCount", null_counts.data_type().clone(), true),
            Field::new("tightBounds", A::Boolean, true),
        ]),
        vec![
            Arc::new(Int64Array::from(vec![10, 20, 30])),
            mins,
            maxs,
            null_counts,
            Arc::new(BooleanArray::from(vec![None, Some(false), Some(false)])),
        ],
        Some(NullBuffer::from(vec![true, true, false])),
    );
    let mut b = StatsBuilder::new(cols);
    b.push_json(Some(r#"{"numRecords":1,"minValues":{"l":100}}"#));
    b.extend_parsed(&stats_parsed).unwrap();
    b.push_json(Some(r#"{"numRecords":2}"#));
    let stats = b.finish().unwrap();
    assert_eq!(
        stats.num_records.iter().collect::<Vec<_>>(),
        [Some(1), Some(10), Some(20), None, Some(2)]
    );
    assert_eq!(
        stats.tight_bounds.iter().collect::<Vec<_>>(),
        [Some(true), Some(true), Some(false), None, Some(true)]
    );
    assert_eq!(
        min(&stats, "l")
            .as_primitive::<Int64Type>()
            .iter()
            .collect::<Vec<_>>(),
        [Some(100), Some(1), Some(2), None, None]
    );
    assert_eq!(
        min(&stats, "d")
            .as_primitive::<Date32Type>()
            .iter()
            .collect::<Vec<_>>(),
        [None, Some(10), Some(11), None, None]
    );
    assert_eq!(
        max(&stats, "d")
            .as_primitive::<Date32Type>()
            .iter()
            .collect::<Vec<_>>(),
        [None, Some(20), Some(21), None, None]
    );
    assert_eq!(
        min(&stats, "ts")
            .as_primitive::<TimestampMicrosecondType>()
            .value(1),
        1_000_000
    );
    assert_eq!(
        min(&stats, "ts").data_type(),
        &A::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        min(&stats, "x")
            .as_primitive::<Float64Type>()
            .iter()
            .collect::<Vec<_>>(),
        [None, None, Some(1.5), None, None]
    );
    assert_eq!(
        min(&stats, "nested.y")
            .as_primitive::<Int32Type>()
            .iter()
            .collect::<Vec<_>>(),
        [None, Some(5), None, None, None]
    );
    assert_eq!(
        stats
            .column("l")
            .unwrap()
            .null_count
            .iter()
            .collect::<Vec<_>>(),
        [None, Some(0), Some(1), None, None]
    );
    // Int32 cast to Utf8 works in Arrow, so a string column takes "1", "2".
    assert_eq!(min(&stats, "s").as_string::<i32>().value(1), "1");
    assert!(stats.columns.iter().all(|c| c.invalid == 0));

    // A leaf whose type cannot be cast is null and counted.
    let cols = columns(json!([{"name": "d", "type": "date"}]));
    let bad = StructArray::new(
        Fields::from(vec![Field::new(
            "minValues",
            A::Struct(Fields::from(vec![Field::new("d", A::Utf8, true)])),
            true,
        )]),
        vec![struct_of(
            vec![("d", Arc::new(StringArray::from(vec![Some("nope"), None])))],
            None,
        )],
        None,
    );
    let stats = from_parsed(cols, &bad);
    assert_eq!(stats.column("d").unwrap().invalid, 1);
    assert_eq!(min(&stats, "d").null_count(), 2);
    assert_eq!(
        stats.tight_bounds.iter().collect::<Vec<_>>(),
        [Some(true), Some(true)]
    );
}

#[test]
fn empty_builder_finishes_typed_and_empty() {
    let stats = StatsBuilder::new(all_types()).finish().unwrap();
    assert!(stats.is_empty());
    assert_eq!(min(&stats, "dec").data_type(), &A::Decimal128(20, 10));
    assert_eq!(stats.column("b").unwrap().null_count.len(), 0);
}

#[test]
fn stats_parsed_timestamps_keep_their_instant() {
    use arrow_array::{TimestampMillisecondArray, TimestampNanosecondArray};
    let cols = columns(json!([
        {"name": "ts", "type": "timestamp"},
        {"name": "ntz", "type": "timestamp_ntz"},
        {"name": "widened", "type": "timestamp_ntz"},
    ]));
    let mins = struct_of(
        vec![
            // Zoned millis (any zone label: the values are epoch-based).
            (
                "ts",
                Arc::new(TimestampMillisecondArray::from(vec![1_500]).with_timezone("+05:00")),
            ),
            // INT96-style nanoseconds, truncated to microseconds.
            (
                "ntz",
                Arc::new(TimestampNanosecondArray::from(vec![2_000_999])),
            ),
            // Stats written before a date -> timestamp_ntz widening.
            ("widened", Arc::new(Date32Array::from(vec![1]))),
        ],
        None,
    );
    let stats_parsed = StructArray::new(
        Fields::from(vec![Field::new(
            "minValues",
            mins.data_type().clone(),
            true,
        )]),
        vec![mins],
        None,
    );
    let stats = from_parsed(cols, &stats_parsed);
    let ts = min(&stats, "ts");
    assert_eq!(
        ts.data_type(),
        &A::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(
        ts.as_primitive::<TimestampMicrosecondType>().value(0),
        1_500_000
    );
    let ntz = min(&stats, "ntz");
    assert_eq!(
        ntz.data_type(),
        &A::Timestamp(arrow_schema::TimeUnit::Microsecond, None)
    );
    assert_eq!(
        ntz.as_primitive::<TimestampMicrosecondType>().value(0),
        2_000
    );
    assert_eq!(
        min(&stats, "widened")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        86_400_000_000
    );
    assert!(stats.columns.iter().all(|c| c.invalid == 0));
}

#[test]
fn escaped_string_stats_decode_or_count_as_invalid() {
    let cols = columns(json!([{"name": "s", "type": "string"}]));
    let stats = from_json(
        cols,
        r#"{"minValues":{"s":"tab\there \ud83d\ude08"},"maxValues":{"s":"\ud83d"}}"#,
    );
    // serde_json skips the lone surrogate while locating the value; decoding
    // it then fails, so the max is unknown (null, counted), not garbage.
    assert_eq!(stats.malformed, 0);
    assert!(max(&stats, "s").is_null(0));
    assert_eq!(stats.column("s").unwrap().invalid, 1);
    assert_eq!(
        min(&stats, "s").as_string::<i32>().value(0),
        "tab\there \u{1F608}"
    );
}

/// `FileStats::take` gives the rows asked for in every case: an ascending
/// run of at least half the files is a slice sharing the arrays (no copy);
/// a shorter run, rows out of order, and ascending rows with gaps (from
/// the start or not) are copies; the impossible files follow their rows
/// either way.
#[test]
fn take_slices_an_ascending_run_and_copies_the_rest() {
    let mut b = StatsBuilder::new(columns(json!([{"name": "i", "type": "integer"}])));
    for (n, lo) in [(10, 1), (11, 2), (-1, 3), (13, 4), (14, 5), (15, 6)] {
        b.push_json(Some(&format!(
            r#"{{"numRecords":{n},"minValues":{{"i":{lo}}},"maxValues":{{"i":{lo}}},"nullCount":{{"i":0}}}}"#
        )));
    }
    let all = b.finish().unwrap();
    assert_eq!(all.impossible, vec![2]);
    let counts = |s: &FileStats| s.num_records.iter().collect::<Vec<_>>();
    let mins = |s: &FileStats| {
        let m = min(s, "i");
        let m = m.as_primitive::<Int32Type>();
        m.iter().collect::<Vec<_>>()
    };
    for (rows, shared, impossible) in [
        (vec![1u32, 2, 3, 4], true, vec![1]),
        (vec![0, 1, 2, 3, 4, 5], true, vec![2]),
        (vec![4, 5], false, vec![]),
        (vec![3, 2, 1], false, vec![1]),
        (vec![0, 1, 3, 4], false, vec![]),
        (vec![2, 4, 5], false, vec![0]),
        (vec![1, 2, 3], true, vec![1]),
        (vec![], false, vec![]),
    ] {
        let taken = all.take(&UInt32Array::from(rows.clone())).unwrap();
        let all_counts = counts(&all);
        let want_counts: Vec<_> = rows.iter().map(|&r| all_counts[r as usize]).collect();
        assert_eq!(counts(&taken), want_counts, "{rows:?}");
        let all_mins = mins(&all);
        let want_mins: Vec<_> = rows.iter().map(|&r| all_mins[r as usize]).collect();
        assert_eq!(mins(&taken), want_mins, "{rows:?}");
        assert_eq!(taken.impossible, impossible, "{rows:?}");
        let same_buffer = taken.num_records.values().inner().data_ptr()
            == all.num_records.values().inner().data_ptr();
        assert_eq!(same_buffer, shared, "{rows:?}");
    }
}

/// A batch's rows of a whole file's statistics are picked over the span
/// from its first row to its last, not over the file: each batch of a
/// checkpoint of many rows costs its own rows, never the file's.
#[test]
fn rows_with_gaps_are_filtered_over_their_span_only() {
    let rows = UInt32Array::from(vec![9_999_990, 9_999_993, 9_999_994]);
    match RowPick::new(&rows, 10_000_000) {
        RowPick::Filter { span, predicate } => {
            assert_eq!(span, 9_999_990..9_999_995);
            assert_eq!(predicate.count(), 3);
        }
        _ => panic!("ascending rows with gaps are a filter"),
    }
    // A run: a copy when short, a slice when at least half the rows, and
    // rows past the arrays' end are left to the gather (and its error).
    let run = UInt32Array::from(vec![1, 2, 3, 4]);
    assert!(matches!(RowPick::new(&run, 10_000_000), RowPick::Take(_)));
    assert!(matches!(RowPick::new(&run, 8), RowPick::Slice(r) if r == (1..5)));
    assert!(matches!(RowPick::new(&run, 4), RowPick::Take(_)));
}

mod props;
mod trust;
