//! Partition values and stats of the shared tables, parsed into exact typed
//! arrays (from commit JSON and from checkpoint structs).

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray, StructArray};
use dar_log::LogError;
use dar_log::partition::{PartitionColumn, PartitionValuesBuilder};
use dar_log::schema::StatsColumnsConfig;
use dar_log::stats::{FileStats, StatsBuilder};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;

use super::schema_data::{last_metadata, log_actions, parse_metadata};

/// The `add` actions of the commits, in log order.
fn adds(table: &Path) -> Vec<Value> {
    log_actions(table)
        .into_iter()
        .filter_map(|a| a.get("add").cloned())
        .collect()
}

/// Partition arrays for every `add` of the table's commits.
fn partition_arrays(table: &Path) -> dar_log::Result<Vec<ArrayRef>> {
    let (schema, mode, partitions) = parse_metadata(&last_metadata(table))?;
    let columns = PartitionColumn::resolve_all(&schema, &partitions, mode)?;
    let mut builder = PartitionValuesBuilder::new(columns);
    for add in adds(table) {
        let values: Vec<(&str, Option<&str>)> = add["partitionValues"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        builder.push(add["path"].as_str().unwrap(), &values)?;
    }
    builder.finish()
}

/// Stats for every `add` of the table's commits.
fn json_stats(table: &Path) -> FileStats {
    let metadata = last_metadata(table);
    let (schema, mode, partitions) = parse_metadata(&metadata).unwrap();
    let configuration: HashMap<String, String> =
        serde_json::from_value(metadata["configuration"].clone()).unwrap();
    let config = StatsColumnsConfig::from_configuration(&configuration).unwrap();
    let mut builder = StatsBuilder::new(schema.stats_columns(mode, &partitions, &config).unwrap());
    for add in adds(table) {
        builder.push_json(add["stats"].as_str());
    }
    builder.finish().unwrap()
}

/// The non-null `add` rows of a checkpoint file.
fn checkpoint_adds(file: &Path) -> StructArray {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(file).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    let parts: Vec<&dyn Array> = batches
        .iter()
        .map(|b| b.column_by_name("add").unwrap().as_ref())
        .collect();
    let all = arrow_select::concat::concat(&parts).unwrap();
    let mask: BooleanArray = (0..all.len()).map(|i| Some(all.is_valid(i))).collect();
    arrow_select::filter::filter(&all, &mask)
        .unwrap()
        .as_struct()
        .clone()
}

fn strings(a: &ArrayRef) -> Vec<Option<&str>> {
    a.as_string::<i32>().iter().collect()
}

#[test]
fn multi_partitioned_escaped_emoji_date_binary() {
    let Some(table) = dar_testdata::table("dat/multi_partitioned/delta") else {
        return;
    };
    let arrays = partition_arrays(&table).unwrap();
    assert_eq!(
        strings(&arrays[0]),
        [
            Some("a"),
            Some("b"),
            Some("b"),
            None,
            Some("a"),
            Some("/%20%f"),
            Some("b")
        ]
    );
    let dates: Vec<_> = arrays[1].as_primitive::<Date32Type>().iter().collect();
    assert_eq!(
        dates,
        [Some(0), Some(0), Some(1), None, None, Some(0), Some(0)]
    );
    let data: Vec<_> = arrays[2].as_binary::<i32>().iter().collect();
    let expected: [Option<&[u8]>; 7] = [
        Some(b"hello"),
        Some(b"world"),
        Some(b"world"),
        None,
        Some(b"x"),
        Some(b"hello"),
        Some("\u{1F608}".as_bytes()),
    ];
    assert_eq!(data, expected);
}

#[test]
fn basic_partitioned_null_partition() {
    let Some(table) = dar_testdata::table("dat/basic_partitioned/delta") else {
        return;
    };
    let arrays = partition_arrays(&table).unwrap();
    assert_eq!(
        strings(&arrays[0]),
        [Some("a"), Some("b"), Some("c"), None, Some("a"), Some("e")]
    );
}

#[test]
fn decimal_timestamp_and_ntz_partitions() {
    if let Some(table) = dar_testdata::table("kernel/basic-decimal-table") {
        let arrays = partition_arrays(&table).unwrap();
        assert_eq!(
            arrays[0].data_type(),
            &arrow_schema::DataType::Decimal128(12, 5)
        );
        let values: Vec<_> = arrays[0].as_primitive::<Decimal128Type>().iter().collect();
        assert_eq!(
            values,
            [
                Some(-234_234_223_423),
                Some(4),
                Some(23_400_000),
                Some(234_222_223_454)
            ]
        );
    }
    if let Some(table) = dar_testdata::table("kernel/timestamp-partitioned-table") {
        let arrays = partition_arrays(&table).unwrap();
        let ts = arrays[0].as_primitive::<TimestampMicrosecondType>();
        assert_eq!(ts.values().to_vec(), [49_000_000_000_000]);
        assert_eq!(ts.timezone(), Some("UTC"));
    }
    if let Some(table) = dar_testdata::table("kernel/data-reader-timestamp_ntz") {
        let arrays = partition_arrays(&table).unwrap();
        let ts = arrays[0].as_primitive::<TimestampMicrosecondType>();
        assert_eq!(ts.timezone(), None);
        let a = 1_373_043_660_123_456;
        assert_eq!(
            ts.iter().collect::<Vec<_>>(),
            [Some(a), Some(1_637_202_600_123_456), None, Some(a)]
        );
    }
}

#[test]
fn partition_values_parsed_from_checkpoints() {
    let Some(table) = dar_testdata::table("kernel/v1-multi-part-partitioned-struct-stats-only")
    else {
        return;
    };
    let (schema, mode, partitions) = parse_metadata(&last_metadata(&table)).unwrap();
    let columns = PartitionColumn::resolve_all(&schema, &partitions, mode).unwrap();
    let (mut from_map, mut from_struct) = (
        PartitionValuesBuilder::new(columns.clone()),
        PartitionValuesBuilder::new(columns),
    );
    for part in 1..=3 {
        let name = format!(
            "_delta_log/00000000000000000005.checkpoint.000000000{part}.0000000003.parquet"
        );
        let adds = checkpoint_adds(&table.join(name));
        let map = adds.column_by_name("partitionValues").unwrap().as_map();
        from_map.extend_map(map, |i| format!("row {i}")).unwrap();
        from_struct
            .extend_parsed(
                adds.column_by_name("partitionValues_parsed")
                    .unwrap()
                    .as_struct(),
            )
            .unwrap();
    }
    let (a, b) = (from_map.finish().unwrap(), from_struct.finish().unwrap());
    assert_eq!(a, b);
    let parts: Vec<_> = a[0].as_primitive::<Int32Type>().iter().collect();
    assert_eq!(parts, [Some(0), Some(1), Some(1), Some(2), Some(2)]);
}

#[test]
fn bad_partition_value_names_file_column_value() {
    let Some(table) = dar_testdata::table("kernel/basic-decimal-table") else {
        return;
    };
    let (schema, mode, partitions) = parse_metadata(&last_metadata(&table)).unwrap();
    let mut builder = PartitionValuesBuilder::new(
        PartitionColumn::resolve_all(&schema, &partitions, mode).unwrap(),
    );
    let err = builder
        .push("part=x/file.parquet", &[("part", Some("12.3.4"))])
        .unwrap_err();
    assert!(
        matches!(&err, LogError::PartitionValue { file, column, value, data_type }
        if file == "part=x/file.parquet" && column == "part" && value == "12.3.4" && data_type == "decimal(12,5)"),
        "{err}"
    );
    // Seven integer digits fit decimal(12,5); eight do not.
    let err = builder
        .push("f", &[("part", Some("12345678.5"))])
        .unwrap_err();
    assert!(err.to_string().contains("12345678.5"), "{err}");
}

#[test]
fn parsed_stats_json_equals_stats_parsed() {
    let Some(table) = dar_testdata::table("kernel/parsed-stats") else {
        return;
    };
    let json = json_stats(&table);
    assert_eq!(json.len(), 6);
    let ids = json.column("id").unwrap();
    let min_ids: Vec<_> = ids
        .min_values
        .as_ref()
        .unwrap()
        .as_primitive::<Int64Type>()
        .iter()
        .flatten()
        .collect();
    assert_eq!(min_ids, [1, 101, 201, 301, 401, 501]);
    let max_names = json.column("name").unwrap().max_values.clone().unwrap();
    assert_eq!(strings(&max_names)[0], Some("name_99"));
    let ts = json.column("ts_col").unwrap();
    let ts_min: Vec<_> = ts
        .min_values
        .as_ref()
        .unwrap()
        .as_primitive::<TimestampMicrosecondType>()
        .iter()
        .flatten()
        .collect();
    assert_eq!(
        ts_min,
        [
            1_000_000, 3_000_000, 5_000_000, 7_000_000, 9_000_000, 11_000_000
        ]
    );
    assert_eq!(json.num_records.iter().flatten().sum::<i64>(), 600);

    // The checkpoint at version 3 holds the first four files as stats_parsed.
    let adds = checkpoint_adds(&table.join("_delta_log/00000000000000000003.checkpoint.parquet"));
    let (schema, mode, partitions) = parse_metadata(&last_metadata(&table)).unwrap();
    let columns = schema
        .stats_columns(mode, &partitions, &StatsColumnsConfig::default())
        .unwrap();
    let mut parsed = StatsBuilder::new(columns.clone());
    parsed
        .extend_parsed(adds.column_by_name("stats_parsed").unwrap().as_struct())
        .unwrap();
    let parsed = parsed.finish().unwrap();
    let mut from_checkpoint_json = StatsBuilder::new(columns);
    let stats = adds.column_by_name("stats").unwrap().as_string::<i32>();
    stats.iter().for_each(|s| from_checkpoint_json.push_json(s));
    let from_checkpoint_json = from_checkpoint_json.finish().unwrap();
    assert_eq!(parsed.len(), 4);
    assert_eq!(parsed.num_records, from_checkpoint_json.num_records);
    for (a, b) in parsed.columns.iter().zip(&from_checkpoint_json.columns) {
        assert_eq!(a.min_values, b.min_values, "{}", a.column.logical_name());
        assert_eq!(a.max_values, b.max_values, "{}", a.column.logical_name());
        assert_eq!(a.null_count, b.null_count);
        assert_eq!((a.invalid, b.invalid), (0, 0));
    }
}

#[test]
#[expect(
    clippy::approx_constant,
    reason = "the table's float stats are 3.14 and 6.28"
)]
fn stats_writing_all_types_exact() {
    let Some(table) = dar_testdata::table("kernel/stats-writing-all-types/delta") else {
        return;
    };
    let stats = json_stats(&table);
    let min = |c: &str| stats.column(c).unwrap().min_values.clone().unwrap();
    let max = |c: &str| stats.column(c).unwrap().max_values.clone().unwrap();
    assert_eq!(stats.num_records.value(0), 4);
    assert_eq!(min("byte_col").as_primitive::<Int8Type>().value(0), 1);
    assert_eq!(max("short_col").as_primitive::<Int16Type>().value(0), 500);
    assert_eq!(max("int_col").as_primitive::<Int32Type>().value(0), 5000);
    assert_eq!(min("long_col").as_primitive::<Int64Type>().value(0), 10000);
    assert_eq!(
        max("float_col").as_primitive::<Float32Type>().value(0),
        3.14f32
    );
    assert_eq!(
        max("double_col").as_primitive::<Float64Type>().value(0),
        6.28
    );
    assert_eq!(
        min("date_col").as_primitive::<Date32Type>().value(0),
        19_372
    );
    assert_eq!(
        max("timestamp_col")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_735_084_800_000_000
    );
    assert_eq!(
        min("timestamp_ntz_col")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_686_832_200_000_000
    );
    assert_eq!(strings(&max("string_col")), [Some("gamma")]);
    assert_eq!(
        min("decimal_col").as_primitive::<Decimal128Type>().value(0),
        12_345
    );
    assert_eq!(
        max("decimal_col").as_primitive::<Decimal128Type>().value(0),
        99_999
    );
    assert_eq!(
        max("nested_struct.inner_double")
            .as_primitive::<Float64Type>()
            .value(0),
        5.5
    );
    assert_eq!(
        strings(&min("nested_struct.inner_string")),
        [Some("nested_a")]
    );
    for (column, nulls) in [
        ("boolean_col", 1),
        ("binary_col", 1),
        ("array_col", 1),
        ("map_col", 1),
        ("nested_struct.inner_string", 2),
    ] {
        let c = stats.column(column).unwrap();
        assert_eq!(c.null_count.value(0), nulls, "{column}");
    }
    assert!(stats.column("boolean_col").unwrap().min_values.is_none());
    assert!(stats.columns.iter().all(|c| c.invalid == 0));
    assert!(stats.tight_bounds.value(0));
}

#[test]
fn timestamp_truncation_stats_exact() {
    let Some(table) = dar_testdata::table("kernel/timestamp-truncation-stats") else {
        return;
    };
    let stats = json_stats(&table);
    let ts = stats.column("ts_col").unwrap();
    let values = |a: &Option<ArrayRef>| -> Vec<i64> {
        a.as_ref()
            .unwrap()
            .as_primitive::<TimestampMicrosecondType>()
            .iter()
            .flatten()
            .collect()
    };
    assert_eq!(values(&ts.min_values), [1_000_000, 3_000_000, 7_000_000]);
    assert_eq!(values(&ts.max_values), [2_000_000, 4_000_000, 8_000_000]);
}
