use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as A, Field, Fields, TimeUnit};
use serde_json::json;

use super::stats_columns::parse_column_list_for_tests;
use super::*;
use crate::error::LogError;

fn schema(fields: serde_json::Value) -> StructType {
    StructType::from_json(&json!({"type": "struct", "fields": fields}).to_string()).unwrap()
}

fn mapped(name: &str, ty: serde_json::Value, id: i64, phys: &str) -> serde_json::Value {
    json!({"name": name, "type": ty, "nullable": true, "metadata": {
        "delta.columnMapping.id": id, "delta.columnMapping.physicalName": phys}})
}

#[test]
fn every_primitive_maps_to_its_arrow_type() {
    let cases = [
        ("string", A::Utf8),
        ("long", A::Int64),
        ("integer", A::Int32),
        ("short", A::Int16),
        ("byte", A::Int8),
        ("float", A::Float32),
        ("double", A::Float64),
        ("boolean", A::Boolean),
        ("binary", A::Binary),
        ("date", A::Date32),
        (
            "timestamp",
            A::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        ("timestamp_ntz", A::Timestamp(TimeUnit::Microsecond, None)),
        ("decimal(10, 2)", A::Decimal128(10, 2)),
        ("decimal(38,38)", A::Decimal128(38, 38)),
        ("decimal", A::Decimal128(10, 0)),
        ("void", A::Null),
        ("interval year to month", A::Int32),
        ("interval day to second", A::Int64),
    ];
    for (name, arrow) in cases {
        let s = schema(json!([{"name": "c", "type": name}]));
        let field = s
            .to_arrow(ColumnMappingMode::None)
            .unwrap()
            .field(0)
            .clone();
        assert_eq!(field.data_type(), &arrow, "{name}");
        assert!(field.is_nullable(), "nullable defaults to true");
        assert_eq!(s.fields[0].data_type.to_string().replace(' ', ""), {
            let canonical = if name == "decimal" {
                "decimal(10,0)"
            } else {
                name
            };
            canonical.replace(' ', "")
        });
    }
}

#[test]
fn nested_types_and_variant_forms() {
    let s = schema(json!([
        {"name": "a", "type": {"type": "array", "elementType": "integer", "containsNull": false}},
        {"name": "m", "type": {"type": "map", "keyType": "string", "valueType": "long"}},
        {"name": "v1", "type": "variant", "nullable": false},
        {"name": "v2", "type": {"type": "variant"}},
        {"name": "s", "type": {"type": "struct", "fields": [{"name": "x", "type": "date"}]}},
    ]));
    let arrow = s.to_arrow(ColumnMappingMode::None).unwrap();
    assert_eq!(
        arrow.field(0).data_type(),
        &A::List(Arc::new(Field::new("element", A::Int32, false)))
    );
    let entries = Fields::from(vec![
        Field::new("key", A::Utf8, false),
        Field::new("value", A::Int64, true),
    ]);
    assert_eq!(
        arrow.field(1).data_type(),
        &A::Map(
            Arc::new(Field::new("key_value", A::Struct(entries), false)),
            false
        )
    );
    assert_eq!(arrow.field(2).data_type(), &variant_arrow_type());
    assert!(!arrow.field(2).is_nullable());
    assert_eq!(arrow.field(3).data_type(), &variant_arrow_type());
    assert_eq!(
        arrow.field(4).data_type(),
        &A::Struct(Fields::from(vec![Field::new("x", A::Date32, true)]))
    );
}

#[test]
fn metadata_keeps_arbitrary_json() {
    let s = schema(json!([{"name": "c", "type": "long", "metadata": {
        "num": 1, "s": "x", "arr": [1, {"a": null}], "obj": {"k": true}}}]));
    let md = &s.fields[0].metadata;
    assert_eq!(md["num"], json!(1));
    assert_eq!(md["arr"], json!([1, {"a": null}]));
    assert_eq!(md["obj"], json!({"k": true}));
}

#[test]
fn bad_schemas_name_the_field_and_type() {
    let err = StructType::from_json(
        &json!({"type": "struct", "fields": [{"name": "outer", "type": {"type": "struct",
            "fields": [{"name": "g", "type": "geometry(OGC:CRS84)"}]}}]})
        .to_string(),
    )
    .unwrap_err();
    match &err {
        LogError::UnknownType { field, type_name } => {
            assert_eq!(field, "outer.g");
            assert_eq!(type_name, "geometry(OGC:CRS84)");
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("geometry(OGC:CRS84)"));

    for (bad, needle) in [
        ("decimal(39,0)", "decimal(39,0)"),
        ("decimal(5,6)", "decimal(5,6)"),
        ("decimal(0,0)", "decimal(0,0)"),
        ("int", "int"),
    ] {
        let err = StructType::from_json(
            &json!({"type": "struct", "fields": [{"name": "d", "type": bad}]}).to_string(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, LogError::UnknownType { field, .. } if field == "d"),
            "{err}"
        );
        assert!(err.to_string().contains(needle), "{err}");
    }
    let array_err = StructType::from_json(
        &json!({"type": "struct", "fields": [{"name": "a", "type":
            {"type": "array", "elementType": "uuid"}}]})
        .to_string(),
    )
    .unwrap_err();
    assert!(matches!(&array_err, LogError::UnknownType { field, .. } if field == "a.element"));

    assert!(matches!(
        StructType::from_json("{"),
        Err(LogError::SchemaJson { .. })
    ));
    assert!(matches!(
        StructType::from_json("\"long\""),
        Err(LogError::InvalidSchema { .. })
    ));
    let dup = StructType::from_json(
        &json!({"type": "struct", "fields": [{"name": "a", "type": "long"},
            {"name": "A", "type": "long"}]})
        .to_string(),
    );
    assert!(matches!(dup, Err(LogError::InvalidSchema { field, .. }) if field == "A"));
    let bad_nullable = StructType::from_json(
        &json!({"type": "struct", "fields": [{"name": "a", "type": "long", "nullable": "yes"}]})
            .to_string(),
    );
    assert!(matches!(bad_nullable, Err(LogError::InvalidSchema { field, .. }) if field == "a"));
}

#[test]
fn column_mapping_mode_needs_protocol_support() {
    assert_eq!(
        ColumnMappingMode::from_property(Some("name"), false).unwrap(),
        ColumnMappingMode::None
    );
    assert_eq!(
        ColumnMappingMode::from_property(Some("name"), true).unwrap(),
        ColumnMappingMode::Name
    );
    assert_eq!(
        ColumnMappingMode::from_property(Some("ID"), true).unwrap(),
        ColumnMappingMode::Id
    );
    assert_eq!(
        ColumnMappingMode::from_property(None, true).unwrap(),
        ColumnMappingMode::None
    );
    assert!(matches!(
        ColumnMappingMode::from_property(Some("position"), true),
        Err(LogError::UnknownColumnMappingMode { mode }) if mode == "position"
    ));
}

#[test]
fn physical_schema_renames_at_every_depth() {
    let inner = json!({"type": "struct", "fields": [mapped("x", json!("long"), 3, "px")]});
    let s = schema(json!([
        mapped(
            "a",
            json!({"type": "array", "elementType": inner, "containsNull": true}),
            1,
            "pa"
        ),
        mapped(
            "m",
            json!({"type": "map", "keyType": "string", "valueType": inner}),
            2,
            "pm"
        ),
    ]));
    let physical = s.physical_schema(ColumnMappingMode::Name).unwrap();
    let arrow = physical.to_arrow(ColumnMappingMode::Id).unwrap();
    assert_eq!(arrow.field(0).name(), "pa");
    assert_eq!(arrow.field(0).metadata()["PARQUET:field_id"], "1");
    let A::List(element) = arrow.field(0).data_type() else {
        panic!()
    };
    let A::Struct(fields) = element.data_type() else {
        panic!()
    };
    assert_eq!(fields[0].name(), "px");
    assert_eq!(fields[0].metadata()["PARQUET:field_id"], "3");
    let A::Map(entries, _) = arrow.field(1).data_type() else {
        panic!()
    };
    let A::Struct(kv) = entries.data_type() else {
        panic!()
    };
    let A::Struct(value_fields) = kv[1].data_type() else {
        panic!()
    };
    assert_eq!(value_fields[0].name(), "px");

    // The logical Arrow schema keeps names and carries the mapping.
    let logical = s.to_arrow(ColumnMappingMode::Name).unwrap();
    assert_eq!(logical.field(0).name(), "a");
    assert_eq!(
        logical.field(0).metadata()["delta.columnMapping.physicalName"],
        "pa"
    );
    // In `none` mode leftover mapping metadata is inert.
    assert!(
        s.to_arrow(ColumnMappingMode::None)
            .unwrap()
            .field(0)
            .metadata()
            .is_empty()
    );
    assert_eq!(s.physical_schema(ColumnMappingMode::None).unwrap(), s);
}

#[test]
fn missing_mapping_metadata_is_an_error_naming_the_field() {
    let s = schema(json!([{"name": "s", "type": {"type": "struct", "fields": [
        {"name": "y", "type": "long"}]}, "metadata": {
        "delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "ps"}}]));
    let err = s.physical_schema(ColumnMappingMode::Name).unwrap_err();
    assert!(
        matches!(&err, LogError::ColumnMapping { field, .. } if field == "s.y"),
        "{err}"
    );
    let no_id = schema(json!([{"name": "c", "type": "long", "metadata": {
        "delta.columnMapping.physicalName": "pc"}}]));
    assert!(no_id.physical_schema(ColumnMappingMode::Name).is_ok());
    assert!(matches!(
        no_id.physical_schema(ColumnMappingMode::Id),
        Err(LogError::ColumnMapping { field, .. }) if field == "c"
    ));
}

#[test]
fn widening_rules() {
    let p = |s: &str| PrimitiveType::parse(s).unwrap();
    for (from, to) in [
        ("byte", "short"),
        ("byte", "long"),
        ("short", "integer"),
        ("integer", "long"),
        ("float", "double"),
        ("byte", "double"),
        ("integer", "double"),
        ("date", "timestamp_ntz"),
        ("decimal(10,2)", "decimal(20,2)"),
        ("decimal(10,2)", "decimal(20,5)"),
        ("decimal(10,2)", "decimal(11,3)"),
        ("byte", "decimal(4,1)"),
        ("short", "decimal(6,1)"),
        ("integer", "decimal(10,0)"),
        ("long", "decimal(21,1)"),
    ] {
        assert!(is_allowed_widening(p(from), p(to)), "{from} -> {to}");
    }
    for (from, to) in [
        ("long", "integer"),
        ("long", "double"),
        ("double", "float"),
        ("timestamp", "timestamp_ntz"),
        ("date", "timestamp"),
        ("decimal(10,2)", "decimal(10,3)"),
        ("decimal(10,2)", "decimal(12,1)"),
        ("integer", "decimal(10,1)"),
        ("long", "decimal(20,1)"),
        ("string", "binary"),
        ("integer", "string"),
    ] {
        assert!(!is_allowed_widening(p(from), p(to)), "{from} -> {to}");
    }
}

#[test]
fn type_changes_are_validated_everywhere() {
    let change = |from: &str, to: &str, path: Option<&str>| {
        let mut c = json!({"fromType": from, "toType": to, "tableVersion": 2});
        if let Some(p) = path {
            c["fieldPath"] = json!(p);
        }
        json!({"delta.typeChanges": [c]})
    };
    let ok = schema(json!([
        {"name": "a", "type": "long", "metadata": change("integer", "long", None)},
        {"name": "arr", "type": {"type": "array", "elementType": "double"},
         "metadata": change("float", "double", Some("element"))},
    ]));
    ok.validate_type_changes().unwrap();

    let nested_bad = schema(
        json!([{"name": "s", "type": {"type": "array", "elementType":
        {"type": "struct", "fields": [{"name": "m", "type":
            {"type": "map", "keyType": "string", "valueType": "integer"},
            "metadata": change("long", "integer", Some("value"))}]}}}]),
    );
    let err = nested_bad.validate_type_changes().unwrap_err();
    match &err {
        LogError::InvalidTypeChange {
            field,
            from_type,
            to_type,
        } => {
            assert_eq!(field, "s.element.m.value");
            assert_eq!((from_type.as_str(), to_type.as_str()), ("long", "integer"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("long") && err.to_string().contains("s.element.m.value"));

    let unknown =
        schema(json!([{"name": "a", "type": "long", "metadata": change("uint", "long", None)}]));
    assert!(
        matches!(unknown.validate_type_changes(), Err(LogError::InvalidTypeChange { from_type, .. }) if from_type == "uint")
    );
    let malformed =
        schema(json!([{"name": "a", "type": "long", "metadata": {"delta.typeChanges": {"x": 1}}}]));
    assert!(
        matches!(malformed.validate_type_changes(), Err(LogError::InvalidTypeChangeMetadata { field, .. }) if field == "a")
    );
    let no_to = schema(
        json!([{"name": "a", "type": "long", "metadata": {"delta.typeChanges": [{"fromType": "byte"}]}}]),
    );
    assert!(matches!(
        no_to.validate_type_changes(),
        Err(LogError::InvalidTypeChangeMetadata { .. })
    ));
}

#[test]
fn stats_columns_follow_config_and_skip_partitions() {
    let s = schema(json!([
        mapped("p", json!("string"), 1, "pp"),
        mapped("a", json!("long"), 2, "pa"),
        mapped(
            "s",
            json!({"type": "struct", "fields": [
            mapped("x", json!("date"), 4, "px"), mapped("b", json!("boolean"), 5, "pb")]}),
            3,
            "ps"
        ),
        mapped("v", json!("void"), 6, "pv"),
        mapped(
            "arr",
            json!({"type": "array", "elementType": "long"}),
            7,
            "parr"
        ),
        mapped("z", json!("decimal(5,1)"), 8, "pz"),
    ]));
    let parts = vec!["P".to_owned()];
    let all = s
        .stats_columns(
            ColumnMappingMode::Name,
            &parts,
            &StatsColumnsConfig::default(),
        )
        .unwrap();
    let names: Vec<String> = all.iter().map(StatsColumn::logical_name).collect();
    assert_eq!(names, ["a", "s.x", "s.b", "arr", "z"]);
    assert_eq!(all[1].physical_path, ["ps", "px"]);
    let min_max: Vec<bool> = all.iter().map(StatsColumn::has_min_max).collect();
    assert_eq!(min_max, [true, true, false, false, true]);

    let two = StatsColumnsConfig::default().with_num_indexed_cols(2);
    assert_eq!(
        s.stats_columns(ColumnMappingMode::Name, &parts, &two)
            .unwrap()
            .len(),
        2
    );
    let conf: HashMap<String, String> = [
        (NUM_INDEXED_COLS_KEY.to_owned(), "1".to_owned()),
        (STATS_COLUMNS_KEY.to_owned(), "z, S".to_owned()),
    ]
    .into();
    let listed = s
        .stats_columns(
            ColumnMappingMode::None,
            &parts,
            &StatsColumnsConfig::from_configuration(&conf).unwrap(),
        )
        .unwrap();
    let names: Vec<String> = listed.iter().map(StatsColumn::logical_name).collect();
    assert_eq!(names, ["s.x", "s.b", "z"], "the list wins over the count");
    assert_eq!(
        listed[0].physical_path,
        ["s", "x"],
        "none mode uses logical names"
    );

    let bad: HashMap<String, String> = [(NUM_INDEXED_COLS_KEY.to_owned(), "-2".to_owned())].into();
    assert!(matches!(
        StatsColumnsConfig::from_configuration(&bad),
        Err(LogError::InvalidTableProperty { value, .. }) if value == "-2"
    ));
    let all_cols = StatsColumnsConfig::default().with_num_indexed_cols(-1);
    assert_eq!(
        s.stats_columns(ColumnMappingMode::None, &[], &all_cols)
            .unwrap()
            .len(),
        6
    );
}

#[test]
fn stats_column_lists_parse_backticks() {
    assert_eq!(
        parse_column_list_for_tests("a, b.c ,`d.e`.f, `g``h`").unwrap(),
        vec![vec!["a"], vec!["b", "c"], vec!["d.e", "f"], vec!["g`h"]]
    );
    assert_eq!(
        parse_column_list_for_tests("").unwrap(),
        Vec::<Vec<String>>::new()
    );
    assert!(parse_column_list_for_tests("`open").is_none());
    assert!(parse_column_list_for_tests("a,,b").is_none());
}

#[test]
fn field_lookup_by_path() {
    let s = schema(
        json!([{"name": "Outer", "type": {"type": "struct", "fields": [
        {"name": "inner", "type": "long"}]}}]),
    );
    assert_eq!(s.field_at_path(&["outer", "INNER"]).unwrap().name, "inner");
    assert!(
        matches!(s.field_at_path(&["outer", "nope"]), Err(LogError::ColumnNotFound { column }) if column == "outer.nope")
    );
}
