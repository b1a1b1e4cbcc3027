//! Wrong rows at the edges of types (the second hardening round), on
//! tables written by hand so that the log says exactly what a writer
//! once wrote: old files' statistics after type widening, floats' signed
//! zeros, statistics that contradict themselves.

use std::sync::Arc;

use arrow_array::{ArrayRef, Date32Array, Decimal128Array, Float32Array, Int32Array, RecordBatch};
use dar_scan::Table;
use dar_testkit::HandTable;
use futures::TryStreamExt;
use serde_json::{Value, json};

use super::common::*;

/// A one-column table whose single file holds `column` (as the file
/// stores it) with JSON `stats`, under a schema declaring `delta_type`
/// widened from `from_type`.
fn widened_table(
    dir: &std::path::Path,
    column: ArrayRef,
    delta_type: Value,
    from_type: &str,
    stats: Value,
) -> HandTable {
    let mut t = HandTable::new(dir).unwrap();
    let batch = RecordBatch::try_from_iter([("x", column)]).unwrap();
    let size = t.write_parquet("part-0.parquet", &batch).unwrap();
    let changes = json!({"delta.typeChanges": [{"fromType": from_type, "toType": delta_type}]});
    t.commit(&[
        HandTable::protocol_with(&["typeWidening"]),
        HandTable::metadata(
            json!([HandTable::field("x", delta_type.clone(), changes)]),
            &[],
            json!({}),
        ),
        HandTable::add("part-0.parquet", size, json!({}), Some(stats)),
    ])
    .unwrap();
    t
}

async fn rows_matching(uri: &str, predicate: &str) -> usize {
    let table = Table::open(uri).await.unwrap();
    let plan = table.scan().with_predicate_sql(predicate).build().unwrap();
    let batches: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
    num_rows(&batches)
}

/// After `float -> double`, an old file's JSON bound `0.1` is the text of
/// the float 0.100000001490116…, above the double 0.1: the file's row must
/// match predicates on its exact value.
#[tokio::test]
async fn old_float_stats_of_a_widened_double_column_keep_their_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let t = widened_table(
        tmp.path(),
        Arc::new(Float32Array::from(vec![0.1f32])),
        json!("double"),
        "float",
        json!({"numRecords": 1, "minValues": {"x": 0.1}, "maxValues": {"x": 0.1}, "nullCount": {"x": 0}}),
    );
    let uri = t.uri();
    let exact = f64::from(0.1f32);
    assert_eq!(rows_matching(&uri, &format!("x = {exact:?}")).await, 1);
    assert_eq!(rows_matching(&uri, "x > 0.1").await, 1);
    assert_eq!(rows_matching(&uri, &format!("x <= {exact:?}")).await, 1);
    // And what truly has no match is still pruned.
    assert_eq!(rows_matching(&uri, "x > 0.2").await, 0);
}

/// Every other widening path: the old stats are read exactly (an int,
/// a date read as midnight, a decimal at the new scale).
#[tokio::test]
async fn old_stats_of_every_widening_path_keep_their_rows() {
    let cases: Vec<(ArrayRef, Value, &str, Value, &str)> = vec![
        (
            Arc::new(Int32Array::from(vec![7])),
            json!("long"),
            "integer",
            json!(7),
            "x = 7",
        ),
        (
            Arc::new(Int32Array::from(vec![7])),
            json!("double"),
            "integer",
            json!(7),
            "x = 7.0",
        ),
        (
            Arc::new(Date32Array::from(vec![19723])), // 2024-01-01
            json!("timestamp_ntz"),
            "date",
            json!("2024-01-01"),
            "x = TIMESTAMP_NTZ '2024-01-01 00:00:00'",
        ),
        (
            Arc::new(
                Decimal128Array::from(vec![123])
                    .with_precision_and_scale(5, 2)
                    .unwrap(),
            ),
            json!("decimal(7,3)"),
            "decimal(5,2)",
            json!(1.23),
            "x = 1.230",
        ),
        (
            Arc::new(Int32Array::from(vec![7])),
            json!("decimal(12,2)"),
            "integer",
            json!(7),
            "x = 7.00",
        ),
    ];
    for (column, to, from, stat, predicate) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let stats = json!({"numRecords": 1, "minValues": {"x": stat}, "maxValues": {"x": stat}, "nullCount": {"x": 0}});
        let t = widened_table(tmp.path(), column, to.clone(), from, stats);
        assert_eq!(
            rows_matching(&t.uri(), predicate).await,
            1,
            "{from} -> {to}: {predicate}"
        );
    }
}

/// A binary file column read as the table's string column holds bytes that
/// are not UTF-8: a schema mismatch naming file and column (it surfaced as
/// an internal Arrow error).
#[tokio::test]
async fn bytes_that_are_not_utf8_in_a_string_column_are_a_schema_mismatch() {
    use arrow_array::BinaryArray;
    let tmp = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(tmp.path()).unwrap();
    let column: ArrayRef = Arc::new(BinaryArray::from(vec![&b"ok"[..], &[0xff, 0xfe][..]]));
    let batch = RecordBatch::try_from_iter([("s", column)]).unwrap();
    let size = t.write_parquet("part-0.parquet", &batch).unwrap();
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(
            json!([HandTable::field("s", json!("string"), json!({}))]),
            &[],
            json!({}),
        ),
        HandTable::add("part-0.parquet", size, json!({}), None),
    ])
    .unwrap();
    let table = Table::open(&t.uri()).await.unwrap();
    let err = table
        .scan()
        .build()
        .unwrap()
        .execute()
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert!(
        matches!(err, dar_scan::ScanError::SchemaMismatch { .. }),
        "{err}"
    );
    assert_eq!(err.kind(), dar_scan::ErrorKind::SchemaViolation, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("part-0.parquet") && text.contains("'s'"),
        "{text}"
    );
}

/// A footer nesting thousands of groups (50 KB) once overflowed the stack
/// and aborted the process; now it is an error naming the file, and a
/// modest nesting still reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeply_nested_footer_is_an_error_not_an_abort() {
    for (groups, readable) in [(3usize, true), (5_000, false)] {
        let tmp = tempfile::tempdir().unwrap();
        let mut t = HandTable::new(tmp.path()).unwrap();
        let bytes = dar_testkit::deeply_nested_parquet(groups);
        std::fs::write(tmp.path().join("part-0.parquet"), &bytes).unwrap();
        // The Delta schema nests as the file does for the readable case;
        // for the deep one it names only the top-level struct (the log's
        // JSON parser bounds its own nesting): the depth is the file's.
        let mut declared = json!("integer");
        if readable {
            for _ in 1..groups {
                declared = json!({"type": "struct", "fields": [{"name": "g", "type": declared, "nullable": true, "metadata": {}}]});
            }
        } else {
            declared = json!({"type": "struct", "fields": []});
        }
        t.commit(&[
            HandTable::protocol(),
            HandTable::metadata(
                json!([HandTable::field("g", declared, json!({}))]),
                &[],
                json!({}),
            ),
            HandTable::add("part-0.parquet", bytes.len() as u64, json!({}), None),
        ])
        .unwrap();
        let table = Table::open(&t.uri()).await.unwrap();
        let result = table
            .scan()
            .build()
            .unwrap()
            .execute()
            .try_collect::<Vec<_>>()
            .await;
        match (readable, result) {
            (true, Ok(batches)) => assert_eq!(num_rows(&batches), 0),
            (false, Err(e)) => {
                let text = e.to_string();
                assert!(
                    text.contains("part-0.parquet") && text.contains("nests deeper"),
                    "{text}"
                );
                assert_eq!(e.kind(), dar_scan::ErrorKind::CorruptData, "{e}");
            }
            (readable, other) => panic!("{groups} groups (readable {readable}): {other:?}"),
        }
    }
}

/// `add.size` is a count of bytes: a negative one is a corrupt log,
/// refused when the table is opened (it was read as "unknown").
#[tokio::test]
async fn a_negative_file_size_is_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(tmp.path()).unwrap();
    let batch =
        RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
            .unwrap();
    t.write_parquet("part-0.parquet", &batch).unwrap();
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(
            json!([HandTable::field("x", json!("integer"), json!({}))]),
            &[],
            json!({}),
        ),
        HandTable::add("part-0.parquet", 0, json!({}), None),
    ])
    .unwrap();
    let log = t
        .path()
        .join("_delta_log")
        .join("00000000000000000000.json");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replace(r#""size":0"#, r#""size":-5"#)).unwrap();
    let err = Table::open(&t.uri()).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("part-0.parquet") && text.contains("-5"),
        "{text}"
    );
    assert_eq!(err.kind(), dar_scan::ErrorKind::CorruptData);
}

/// The same for a checkpoint whose metaData has no schemaString (Spark
/// once wrote such checkpoints): the files are listed, a scan refuses.
#[tokio::test]
async fn a_checkpoint_without_a_schema_still_lists_its_files() {
    use arrow_array::cast::AsArray;
    use arrow_array::{Array, StructArray};
    use dar_testkit::TableWriter;
    use object_store::ObjectStore;
    use object_store::local::LocalFileSystem;
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let tmp = tempfile::tempdir().unwrap();
    let store: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(tmp.path()).unwrap());
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "x",
        arrow_schema::DataType::Int32,
        true,
    )]));
    let mut w = TableWriter::builder(store, object_store::path::Path::from("t"), schema.clone())
        .create()
        .await
        .unwrap();
    for i in 0..2 {
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![i]))])
            .unwrap();
        w.append(&batch).await.unwrap();
    }
    w.checkpoint().await.unwrap();
    let log = tmp.path().join("t").join("_delta_log");
    let checkpoint = std::fs::read_dir(&log)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".checkpoint.parquet"))
        .unwrap();
    // Rewrite the checkpoint with metaData.schemaString null.
    let file = std::fs::File::open(&checkpoint).unwrap();
    let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let edited: Vec<RecordBatch> = batches
        .iter()
        .map(|b| {
            let (i, _) = b.schema().column_with_name("metaData").unwrap();
            let md = b.column(i).as_struct();
            let (j, _) = md.fields().find("schemaString").unwrap();
            let mut fields: Vec<arrow_schema::Field> =
                md.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields[j] = fields[j].clone().with_nullable(true);
            let mut columns = md.columns().to_vec();
            columns[j] = arrow_array::new_null_array(&arrow_schema::DataType::Utf8, md.len());
            let md = StructArray::try_new(fields.into(), columns, md.nulls().cloned()).unwrap();
            let mut all_fields: Vec<arrow_schema::FieldRef> =
                b.schema().fields().iter().cloned().collect();
            all_fields[i] = Arc::new(arrow_schema::Field::new(
                "metaData",
                md.data_type().clone(),
                true,
            ));
            let mut all = b.columns().to_vec();
            all[i] = Arc::new(md);
            RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(all_fields)), all).unwrap()
        })
        .collect();
    let out = std::fs::File::create(&checkpoint).unwrap();
    let mut writer = ArrowWriter::try_new(out, edited[0].schema(), None).unwrap();
    for b in &edited {
        writer.write(b).unwrap();
    }
    writer.close().unwrap();
    // Only the checkpoint tells the schema now.
    for e in std::fs::read_dir(&log).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let uri = tmp.path().join("t");
    let table = Table::open(uri.to_str().unwrap()).await.unwrap();
    assert!(!table.snapshot().has_schema());
    assert_eq!(table.snapshot().file_index().unwrap().len(), 2);
    let err = table.scan().build().unwrap_err();
    assert!(err.to_string().contains("no schemaString"), "{err}");
}

fn field_with_id(name: &str, t: arrow_schema::DataType, id: i64) -> arrow_schema::Field {
    arrow_schema::Field::new(name, t, true).with_metadata(std::collections::HashMap::from([(
        "PARQUET:field_id".to_string(),
        id.to_string(),
    )]))
}

/// A nested field the reader finds case-insensitively (`s.X` for `s.x`),
/// or by field id under another name, is read from the same column by the
/// row-group statistics as by the decoder: `s.x = 5` keeps its row (the
/// statistics once saw the field as absent, all null, and pruned it).
#[tokio::test]
async fn nested_fields_found_by_id_or_case_prune_by_their_own_statistics() {
    use arrow_array::StructArray;
    use arrow_schema::{DataType, Fields};
    let cases: Vec<(&str, arrow_schema::Field, Value)> = vec![
        (
            "none",
            arrow_schema::Field::new(
                "s",
                DataType::Struct(Fields::from(vec![arrow_schema::Field::new(
                    "X",
                    DataType::Int32,
                    true,
                )])),
                true,
            ),
            json!([HandTable::field(
                "s",
                json!({"type": "struct", "fields": [HandTable::field("x", json!("integer"), json!({}))]}),
                json!({})
            )]),
        ),
        (
            "id",
            field_with_id(
                "s_written",
                DataType::Struct(Fields::from(vec![field_with_id(
                    "x_written",
                    DataType::Int32,
                    2,
                )])),
                1,
            ),
            json!([HandTable::field(
                "s",
                json!({"type": "struct", "fields": [HandTable::field("x", json!("integer"), json!({
                    "delta.columnMapping.id": 2,
                    "delta.columnMapping.physicalName": "col-x"
                }))]}),
                json!({"delta.columnMapping.id": 1, "delta.columnMapping.physicalName": "col-s"})
            )]),
        ),
    ];
    for (mode, file_field, delta_fields) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut t = HandTable::new(tmp.path()).unwrap();
        let DataType::Struct(children) = file_field.data_type().clone() else {
            unreachable!()
        };
        let s = StructArray::try_new(children, vec![Arc::new(Int32Array::from(vec![5, 6]))], None)
            .unwrap();
        let schema = Arc::new(arrow_schema::Schema::new(vec![file_field]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(s)]).unwrap();
        let size = t.write_parquet("part-0.parquet", &batch).unwrap();
        let (protocol, config) = if mode == "id" {
            (
                json!({"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}}),
                json!({"delta.columnMapping.mode": "id", "delta.columnMapping.maxColumnId": "2"}),
            )
        } else {
            (HandTable::protocol(), json!({}))
        };
        t.commit(&[
            protocol,
            HandTable::metadata(delta_fields, &[], config),
            // No log stats: only the file's own statistics can prune.
            HandTable::add("part-0.parquet", size, json!({}), None),
        ])
        .unwrap();
        assert_eq!(rows_matching(&t.uri(), "s.x = 5").await, 1, "{mode}");
        assert_eq!(rows_matching(&t.uri(), "s.x > 6").await, 0, "{mode}");
        // The statistics did the pruning of what has no match.
        let table = Table::open(&t.uri()).await.unwrap();
        let plan = table.scan().with_predicate_sql("s.x > 6").build().unwrap();
        let _: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
        assert_eq!(plan.metrics().snapshot().row_groups_pruned, 1, "{mode}");
    }
}

/// `id` column mapping with a physical name reused by a new column (drop
/// and re-add, as tables converted from Iceberg do): old files hold the
/// dropped column (field id 5) under the name, and their log stats describe
/// it. The data is matched by id (the current column, id 7, is absent from
/// old files: nulls), so those stats must not prune it: `d IS NULL` returns
/// the old file's rows, and no bound of `d` comes from them.
#[tokio::test]
async fn a_reused_physical_name_never_prunes_by_another_columns_stats() {
    use arrow_array::Int64Array;
    use arrow_schema::DataType;
    let tmp = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(tmp.path()).unwrap();
    let write = |name: &str, id: i64, values: Vec<i64>| {
        let schema = Arc::new(arrow_schema::Schema::new(vec![field_with_id(
            "d",
            DataType::Int64,
            id,
        )]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(values))]).unwrap();
        t.write_parquet(name, &batch).unwrap()
    };
    let old = write("old.parquet", 5, vec![1, 2]);
    let new = write("new.parquet", 7, vec![10]);
    let stats = |lo: i64, hi: i64, n: i64| json!({"numRecords": n, "minValues": {"d": lo}, "maxValues": {"d": hi}, "nullCount": {"d": 0}});
    t.commit(&[
        json!({"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}}),
        HandTable::metadata(
            json!([HandTable::field(
                "d",
                json!("long"),
                json!({"delta.columnMapping.id": 7, "delta.columnMapping.physicalName": "d"})
            )]),
            &[],
            json!({"delta.columnMapping.mode": "id", "delta.columnMapping.maxColumnId": "7"}),
        ),
        HandTable::add("old.parquet", old, json!({}), Some(stats(1, 2, 2))),
        HandTable::add("new.parquet", new, json!({}), Some(stats(10, 10, 1))),
    ])
    .unwrap();
    assert_eq!(rows_matching(&t.uri(), "d IS NULL").await, 2);
    assert_eq!(rows_matching(&t.uri(), "d = 10").await, 1);
    assert_eq!(rows_matching(&t.uri(), "d = 1").await, 0);
    let table = Table::open(&t.uri()).await.unwrap();
    let stats = table.scan().build().unwrap().statistics();
    assert_eq!(stats.columns[0].min, dar_scan::Estimate::Unknown);
    assert_eq!(stats.columns[0].null_count, dar_scan::Estimate::Unknown);
}
