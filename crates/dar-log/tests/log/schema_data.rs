//! Every `schemaString` in the shared tables' commit files parses and
//! converts to Arrow; exact Arrow schemas for a representative set.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::{DataType as A, Field, Fields, Schema, TimeUnit};
use dar_log::LogError;
use dar_log::partition::PartitionColumn;
use dar_log::schema::{ColumnMappingMode, StatsColumnsConfig, StructType, variant_arrow_type};
use serde_json::Value;

/// Every action of every commit file (`_delta_log/*.json`), in version order.
pub fn log_actions(table: &Path) -> Vec<Value> {
    let log = if table.join("_delta_log").is_dir() {
        table.join("_delta_log")
    } else {
        table.join("delta/_delta_log")
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&log)
        .unwrap()
        .map(|e| e.unwrap().path())
        // Commit files only (`<20 digits>.json`): skips `._*` resource forks.
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.len() == 25
                && name.ends_with(".json")
                && name[..20].bytes().all(|b| b.is_ascii_digit())
        })
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The last `metaData` action of a table's commits.
pub fn last_metadata(table: &Path) -> Value {
    log_actions(table)
        .into_iter()
        .rev()
        .find_map(|a| a.get("metaData").cloned())
        .unwrap()
}

/// Schema, mode and partition columns of a `metaData` action. The mode is
/// taken as allowed by the protocol (the tables that set it all enable it).
pub fn parse_metadata(
    metadata: &Value,
) -> dar_log::Result<(StructType, ColumnMappingMode, Vec<String>)> {
    let schema = StructType::from_json(metadata["schemaString"].as_str().unwrap())?;
    let mode = ColumnMappingMode::from_property(
        metadata["configuration"]
            .get("delta.columnMapping.mode")
            .and_then(Value::as_str),
        true,
    )?;
    let partitions = metadata["partitionColumns"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    Ok((schema, mode, partitions))
}

fn tables_with_logs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "_delta_log") {
            out.push(path.parent().unwrap().to_path_buf());
        } else {
            tables_with_logs(&path, out);
        }
    }
}

#[test]
fn every_schema_string_parses_and_converts() {
    let Some(root) = dar_testdata::root() else {
        return;
    };
    let mut tables = Vec::new();
    tables_with_logs(&root, &mut tables);
    assert!(tables.len() > 50, "found only {} tables", tables.len());
    let mut schemas = 0;
    for table in tables {
        for action in log_actions(&table) {
            let Some(metadata) = action.get("metaData") else {
                continue;
            };
            schemas += 1;
            let result = parse_metadata(metadata);
            if table.ends_with("table-with-geo") {
                let err = result.map(|_| ()).unwrap_err();
                assert!(
                    matches!(&err, LogError::UnknownType { type_name, field }
                    if type_name == "geometry(OGC:CRS84)" && field == "geom"),
                    "{err}"
                );
                assert!(err.to_string().contains("geometry(OGC:CRS84)"));
                continue;
            }
            let (schema, mode, partitions) =
                result.unwrap_or_else(|e| panic!("{}: {e}", table.display()));
            schema.to_arrow(mode).unwrap();
            schema
                .physical_schema(mode)
                .unwrap()
                .to_arrow(mode)
                .unwrap();
            schema.validate_type_changes().unwrap();
            PartitionColumn::resolve_all(&schema, &partitions, mode).unwrap();
            let configuration: HashMap<String, String> =
                serde_json::from_value(metadata["configuration"].clone()).unwrap_or_default();
            let config = StatsColumnsConfig::from_configuration(&configuration).unwrap();
            schema.stats_columns(mode, &partitions, &config).unwrap();
        }
    }
    assert!(schemas > 60, "only {schemas} schemas");
}

fn table_schema(name: &str) -> Option<(Schema, Schema)> {
    let table = dar_testdata::table(name)?;
    let (schema, mode, _) = parse_metadata(&last_metadata(&table)).unwrap();
    let logical = schema.to_arrow(mode).unwrap();
    let physical = schema
        .physical_schema(mode)
        .unwrap()
        .to_arrow(mode)
        .unwrap();
    Some((logical, physical))
}

fn f(name: &str, ty: A) -> Field {
    Field::new(name, ty, true)
}

/// A field under column mapping: logical name, id and physical name in metadata.
fn mapped(name: &str, ty: A, id: i32, physical: &str) -> Field {
    f(name, ty).with_metadata(HashMap::from([
        ("PARQUET:field_id".to_owned(), id.to_string()),
        (
            "delta.columnMapping.physicalName".to_owned(),
            physical.to_owned(),
        ),
    ]))
}

fn utc() -> A {
    A::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

fn ntz() -> A {
    A::Timestamp(TimeUnit::Microsecond, None)
}

fn list(element: A) -> A {
    A::List(Arc::new(f("element", element)))
}

fn map(key: A, value: A) -> A {
    let entries = Fields::from(vec![Field::new("key", key, false), f("value", value)]);
    A::Map(
        Arc::new(Field::new("key_value", A::Struct(entries), false)),
        false,
    )
}

#[test]
fn stats_writing_all_types_schema() {
    let Some((logical, physical)) = table_schema("kernel/stats-writing-all-types/delta") else {
        return;
    };
    let nested = A::Struct(Fields::from(vec![
        mapped(
            "inner_int",
            A::Int32,
            17,
            "col-7f2f94cf-7082-430c-bba7-852bc6c5215e",
        ),
        mapped(
            "inner_string",
            A::Utf8,
            18,
            "col-26fcfd6b-04c7-4772-8bdf-04ac9425f06e",
        ),
        mapped(
            "inner_double",
            A::Float64,
            19,
            "col-92dcf16d-d249-48a9-afb8-93deeaf7ce23",
        ),
    ]));
    let expected = Schema::new(vec![
        mapped(
            "byte_col",
            A::Int8,
            1,
            "col-042fadad-0f76-466d-a94d-e1159c2a9ed6",
        ),
        mapped(
            "short_col",
            A::Int16,
            2,
            "col-6dc68f07-711d-4f00-8bd6-1f5bc698e8ad",
        ),
        mapped(
            "int_col",
            A::Int32,
            3,
            "col-e0571b78-2d49-4109-9add-f2c54d6ea29e",
        ),
        mapped(
            "long_col",
            A::Int64,
            4,
            "col-6c805ddb-539c-4ed3-bada-ac7a2082c889",
        ),
        mapped(
            "float_col",
            A::Float32,
            5,
            "col-ab1a4b4f-8850-48e3-a2ab-4eb52aa5bc57",
        ),
        mapped(
            "double_col",
            A::Float64,
            6,
            "col-fd0d362b-c828-4ab2-aea0-d7fb194a87fa",
        ),
        mapped(
            "date_col",
            A::Date32,
            7,
            "col-2e98df1d-e620-4a91-8ef8-6b196ce79105",
        ),
        mapped(
            "timestamp_col",
            utc(),
            8,
            "col-caa487cc-e27c-4d92-85ae-1c497cc9e92c",
        ),
        mapped(
            "timestamp_ntz_col",
            ntz(),
            9,
            "col-5a3cb861-db96-4e6d-a3b9-91aab0a9f0ab",
        ),
        mapped(
            "string_col",
            A::Utf8,
            10,
            "col-5006b1fd-f61e-40da-a5d4-3957248a4269",
        ),
        mapped(
            "decimal_col",
            A::Decimal128(10, 2),
            11,
            "col-970dbfdb-8cdd-4adf-a952-2fbefc038496",
        ),
        mapped(
            "boolean_col",
            A::Boolean,
            12,
            "col-f7007db6-65d0-4e2b-8552-d8a37bc06d2c",
        ),
        mapped(
            "binary_col",
            A::Binary,
            13,
            "col-cbe103e8-96dc-4fd7-821e-602cf8902e6b",
        ),
        mapped(
            "array_col",
            list(A::Int32),
            14,
            "col-57618ab3-6362-439f-b211-f1c164a8988a",
        ),
        mapped(
            "map_col",
            map(A::Utf8, A::Int32),
            15,
            "col-64713545-4f48-430e-bf3f-14203591996c",
        ),
        mapped(
            "nested_struct",
            nested,
            16,
            "col-481c7590-d3b8-4e9c-b40e-7b7128a972f4",
        ),
    ]);
    assert_eq!(logical, expected);
    assert_eq!(
        physical.field(0).name(),
        "col-042fadad-0f76-466d-a94d-e1159c2a9ed6"
    );
    let A::Struct(inner) = physical.field(15).data_type() else {
        panic!()
    };
    assert_eq!(inner[2].name(), "col-92dcf16d-d249-48a9-afb8-93deeaf7ce23");
    assert_eq!(inner[2].metadata()["PARQUET:field_id"], "19");
}

#[test]
fn column_mapping_id_mode_schemas() {
    if let Some((logical, physical)) = table_schema("kernel/cdf-column-mapping-id-mode") {
        // The last metaData of this table (after renames) keeps ids 1..3.
        let ids: Vec<&str> = logical
            .fields()
            .iter()
            .map(|f| f.metadata()["PARQUET:field_id"].as_str())
            .collect();
        assert_eq!(ids, ["1", "2", "3"]);
        let types: Vec<&A> = logical.fields().iter().map(|f| f.data_type()).collect();
        assert_eq!(types, [&A::Int64, &A::Utf8, &A::Float64]);
        assert_eq!(
            physical.field(0).name(),
            "col-b727ccd4-2c6f-43c0-b49e-2dfecc1f4e8b"
        );
        assert_eq!(
            physical.field(2).name(),
            "col-c5c121de-90b8-4720-a320-7c3626c06ddb"
        );
    }
    if let Some((logical, physical)) = table_schema("kernel/partition_cm/id") {
        assert_eq!(
            logical,
            Schema::new(vec![
                mapped(
                    "value",
                    A::Int32,
                    1,
                    "col-e0571b78-2d49-4109-9add-f2c54d6ea29e"
                ),
                mapped(
                    "category",
                    A::Utf8,
                    2,
                    "col-6dc68f07-711d-4f00-8bd6-1f5bc698e8ad"
                ),
            ])
        );
        assert_eq!(
            physical.field(1).name(),
            "col-6dc68f07-711d-4f00-8bd6-1f5bc698e8ad"
        );
    }
}

#[test]
fn plain_table_schemas() {
    if let Some((logical, _)) = table_schema("kernel/data-reader-timestamp_ntz") {
        assert_eq!(
            logical,
            Schema::new(vec![
                f("id", A::Int32),
                f("tsNtz", ntz()),
                f("tsNtzPartition", ntz())
            ])
        );
    }
    if let Some((logical, _)) = table_schema("kernel/type-widening") {
        let expected = Schema::new(vec![
            f("byte_long", A::Int64),
            f("int_long", A::Int64),
            f("float_double", A::Float64),
            f("byte_double", A::Float64),
            f("short_double", A::Float64),
            f("int_double", A::Float64),
            f("decimal_decimal_same_scale", A::Decimal128(20, 2)),
            f("decimal_decimal_greater_scale", A::Decimal128(20, 5)),
            f("byte_decimal", A::Decimal128(4, 1)),
            f("short_decimal", A::Decimal128(6, 1)),
            f("int_decimal", A::Decimal128(11, 1)),
            f("long_decimal", A::Decimal128(21, 1)),
            f("date_timestamp_ntz", ntz()),
        ]);
        assert_eq!(logical, expected);
    }
    if let Some((logical, _)) = table_schema("kernel/unshredded-variant") {
        let v = variant_arrow_type();
        let struct_of_v = A::Struct(Fields::from(vec![f("v", v.clone())]));
        let expected = Schema::new(vec![
            f("id", A::Int64),
            f("v", v.clone()),
            f("array_of_variants", list(v.clone())),
            f("struct_of_variants", struct_of_v.clone()),
            f("map_of_variants", map(A::Utf8, v.clone())),
            f("array_of_struct_of_variants", list(struct_of_v)),
            f(
                "struct_of_array_of_variants",
                A::Struct(Fields::from(vec![f("v", list(v))])),
            ),
        ]);
        assert_eq!(logical, expected);
    }
    if let Some((logical, _)) = table_schema("kernel/void-column") {
        assert_eq!(
            logical,
            Schema::new(vec![f("id", A::Int64), f("void_col", A::Null)])
        );
    }
    if let Some((logical, _)) = table_schema("kernel/basic-decimal-table") {
        assert_eq!(
            logical,
            Schema::new(vec![
                f("part", A::Decimal128(12, 5)),
                f("col1", A::Decimal128(5, 2)),
                f("col2", A::Decimal128(10, 5)),
                f("col3", A::Decimal128(20, 10)),
            ])
        );
    }
    if let Some(table) = dar_testdata::table("kernel/timestamp-partitioned-table") {
        let (schema, mode, _) = parse_metadata(&last_metadata(&table)).unwrap();
        let arrow = schema.to_arrow(mode).unwrap();
        assert!(
            !arrow.field(0).is_nullable(),
            "declared nullability is kept"
        );
        assert_eq!(arrow.field(3).data_type(), &utc());
    }
}

#[test]
fn type_widening_history_validates() {
    let Some(table) = dar_testdata::table("kernel/type-widening") else {
        return;
    };
    let (schema, _, _) = parse_metadata(&last_metadata(&table)).unwrap();
    schema.validate_type_changes().unwrap();
    // The same history with one pair reversed is refused, naming it.
    let mut bad = schema.clone();
    bad.fields[0].metadata.insert(
        "delta.typeChanges".to_owned(),
        serde_json::json!([{"fromType": "long", "toType": "byte", "tableVersion": 2}]),
    );
    let err = bad.validate_type_changes().unwrap_err();
    assert!(
        matches!(&err, LogError::InvalidTypeChange { field, from_type, to_type }
        if field == "byte_long" && from_type == "long" && to_type == "byte"),
        "{err}"
    );
}
