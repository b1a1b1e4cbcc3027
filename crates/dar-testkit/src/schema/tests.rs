use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int32Array, ListArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};

use super::*;

fn nested_schema() -> SchemaRef {
    let inner = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Struct(inner), true),
        Field::new_list("l", Field::new_list_field(DataType::Int32, true), true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("d", DataType::Decimal128(10, 2), true),
    ]))
}

#[test]
fn delta_json_without_mapping() {
    let schema =
        TableSchema::new(nested_schema(), ColumnMappingMode::None, &mut Ids::new(1)).unwrap();
    assert_eq!(
        schema.delta_json,
        concat!(
            r#"{"type":"struct","fields":["#,
            r#"{"name":"id","type":"long","nullable":false,"metadata":{}},"#,
            r#"{"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},"#,
            r#"{"name":"l","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{}},"#,
            r#"{"name":"ts","type":"timestamp_ntz","nullable":true,"metadata":{}},"#,
            r#"{"name":"d","type":"decimal(10,2)","nullable":true,"metadata":{}}]}"#
        )
    );
    assert!(schema.uses_timestamp_ntz);
    assert_eq!(schema.max_column_id, 0);
    assert_eq!(schema.physical.field(0).name(), "id");
    assert!(schema.physical.field(0).metadata().is_empty());
}

#[test]
fn column_mapping_names_and_ids_every_struct_field() {
    let schema =
        TableSchema::new(nested_schema(), ColumnMappingMode::Id, &mut Ids::new(1)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&schema.delta_json).unwrap();
    let fields = json["fields"].as_array().unwrap();
    assert_eq!(fields[0]["metadata"]["delta.columnMapping.id"], 1);
    assert_eq!(
        fields[1]["type"]["fields"][0]["metadata"]["delta.columnMapping.id"],
        3
    );
    assert_eq!(schema.max_column_id, 6);
    let physical = schema.physical.field(1);
    let name = fields[1]["metadata"]["delta.columnMapping.physicalName"]
        .as_str()
        .unwrap();
    assert_eq!(physical.name(), name);
    assert!(name.starts_with("col-") && name.len() == 40);
    assert_eq!(physical.metadata()[PARQUET_FIELD_ID_KEY], "2");
    let DataType::Struct(inner) = physical.data_type() else {
        panic!()
    };
    assert_eq!(inner[0].metadata()[PARQUET_FIELD_ID_KEY], "3");
    let DataType::List(element) = schema.physical.field(2).data_type() else {
        panic!()
    };
    assert_eq!(element.name(), "element");
}

#[test]
fn relabels_nested_batches() {
    let logical = nested_schema();
    let schema =
        TableSchema::new(logical.clone(), ColumnMappingMode::Name, &mut Ids::new(3)).unwrap();
    let DataType::Struct(inner) = logical.field(1).data_type() else {
        panic!()
    };
    let batch = RecordBatch::try_new(
        logical.clone(),
        vec![
            Arc::new(arrow_array::Int64Array::from(vec![1, 2])),
            Arc::new(StructArray::new(
                inner.clone(),
                vec![Arc::new(Int32Array::from(vec![7, 8])) as ArrayRef],
                None,
            )),
            Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
                Some(vec![Some(1)]),
                None,
            ])),
            Arc::new(arrow_array::TimestampMicrosecondArray::from(vec![1, 2])),
            Arc::new(
                arrow_array::Decimal128Array::from(vec![1, 2])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
        ],
    )
    .unwrap()
    .slice(1, 1);
    let physical = to_physical(&batch, schema.physical.clone()).unwrap();
    assert_eq!(physical.schema(), schema.physical);
    assert_eq!(
        physical
            .column(1)
            .as_struct()
            .column(0)
            .as_primitive::<Int32Type>()
            .value(0),
        8
    );
}

#[test]
fn unsupported_types_name_the_column() {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "s",
        DataType::Struct(Fields::from(vec![Field::new("u", DataType::UInt32, true)])),
        true,
    )]));
    let err = TableSchema::new(schema, ColumnMappingMode::None, &mut Ids::new(0)).unwrap_err();
    assert!(
        matches!(&err, TestkitError::UnsupportedType { column, .. } if column == "s.u"),
        "{err}"
    );
}
