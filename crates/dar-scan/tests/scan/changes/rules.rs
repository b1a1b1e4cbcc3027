//! The rules of a commit's change files on hand-written and kit-written
//! tables: DV replacement, column mapping with partitions and a rename,
//! `cdc` files beside grown DVs; pruning, projection and tasks as data.

use super::*;
use arrow_schema::TimeUnit;
use dar_scan::{ScanContext, ScanRuntime, ScanSpec, ScanTask};
use dar_testkit::HandTable;
use dar_testkit::log_json::{
    add, add_with_dv, cdf_on, field, id_field, metadata, protocol_with, remove,
};
use serde_json::json;

/// A DV that grows, then is replaced by one that restores a row and
/// deletes another, then the file is removed: only the rows that change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_deletion_vectors_yield_only_the_rows_that_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let size = t
        .write_parquet("f.parquet", &ids_batch(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
        .unwrap();
    t.commit(&[
        protocol_with(&["deletionVectors"]),
        metadata(id_field(), &[], cdf_on()),
        add_with_dv("f.parquet", size, None),
    ])
    .unwrap();
    // v1: a first DV {2, 5}.
    t.commit(&[
        remove("f.parquet", size, None),
        add_with_dv("f.parquet", size, Some(&[2, 5])),
    ])
    .unwrap();
    // v2: it grows by 7.
    t.commit(&[
        remove("f.parquet", size, Some(&[2, 5])),
        add_with_dv("f.parquet", size, Some(&[2, 5, 7])),
    ])
    .unwrap();
    // v3: replaced: 2 restored, 9 deleted.
    t.commit(&[
        remove("f.parquet", size, Some(&[2, 5, 7])),
        add_with_dv("f.parquet", size, Some(&[5, 7, 9])),
    ])
    .unwrap();
    // v4: the same DV again (no change), v5: the file removed.
    t.commit(&[
        remove("f.parquet", size, Some(&[5, 7, 9])),
        add_with_dv("f.parquet", size, Some(&[5, 7, 9])),
    ])
    .unwrap();
    t.commit(&[remove("f.parquet", size, Some(&[5, 7, 9]))])
        .unwrap();
    let expected = [
        ids(0..10, "insert", 0),
        ids([2, 5], "delete", 1),
        ids([7], "delete", 2),
        ids([9], "delete", 3),
        ids([2], "insert", 3),
        ids([0, 1, 2, 3, 4, 6, 8], "delete", 5),
    ]
    .concat();
    assert_eq!(rows_of(dir.path(), 0, None).await, sorted(expected));
    // One version alone: only its rows.
    assert_eq!(
        rows_of(dir.path(), 3, Some(3)).await,
        sorted([ids([9], "delete", 3), ids([2], "insert", 3)].concat())
    );
    // The DV pair travels in the tasks.
    let plan = plan_of(dir.path(), 3, Some(3)).await.unwrap();
    assert_eq!(plan.tasks().len(), 2);
    assert!(plan.tasks().iter().all(|t| t.paired_dv.is_some()));
    // The change type of adds and removes prunes before any I/O.
    let plan = open(dir.path())
        .await
        .changes(v(0), None)
        .with_predicate_sql("_change_type = 'delete'")
        .build()
        .await
        .unwrap();
    let delete = dar_scan::Scalar::Utf8("delete".into());
    assert!(
        plan.tasks()
            .iter()
            .all(|t| t.partition_value("_change_type") == Some(&delete))
    );
    assert_eq!(plan.tasks().len(), 4, "{:?}", plan.metrics().snapshot());
    assert_eq!(
        change_rows(&collect(&plan).await),
        sorted(
            [
                ids([2, 5], "delete", 1),
                ids([7], "delete", 2),
                ids([9], "delete", 3),
                ids([0, 1, 2, 3, 4, 6, 8], "delete", 5),
            ]
            .concat()
        )
    );
}

/// Column mapping (name mode) with a partition column, a `cdc` commit, a
/// rename in the range, and removes that carry their partition values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_mapping_partitions_and_a_rename() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let mapped = |name: &str, id: i64, phys: &str, ty: &str| {
        field(
            name,
            json!(ty),
            json!({"delta.columnMapping.id": id, "delta.columnMapping.physicalName": phys}),
        )
    };
    let fields = |v_name: &str| {
        json!([
            mapped(v_name, 1, "col-v", "integer"),
            mapped("p", 2, "col-p", "string")
        ])
    };
    let config = json!({"delta.enableChangeDataFeed": "true", "delta.columnMapping.mode": "name",
        "delta.columnMapping.maxColumnId": "2"});
    let data = |vals: &[i32]| {
        let schema = Schema::new(vec![Field::new("col-v", DataType::Int32, true)]);
        RecordBatch::try_new(
            std::sync::Arc::new(schema),
            vec![std::sync::Arc::new(Int32Array::from(vals.to_vec()))],
        )
        .unwrap()
    };
    let s1 = t
        .write_parquet("col-p=a/f1.parquet", &data(&[1, 2]))
        .unwrap();
    let proto = json!({"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}});
    t.commit(&[
        proto,
        metadata(fields("v"), &["p"], config.clone()),
        add("col-p=a/f1.parquet", s1, json!({"col-p": "a"}), None),
    ])
    .unwrap();
    // v1: an update through a cdc file (which stores `_change_type`).
    let cdc_schema = Schema::new(vec![
        Field::new("col-v", DataType::Int32, true),
        Field::new("_change_type", DataType::Utf8, true),
    ]);
    let cdc = RecordBatch::try_new(
        std::sync::Arc::new(cdc_schema),
        vec![
            std::sync::Arc::new(Int32Array::from(vec![2, 20])),
            std::sync::Arc::new(StringArray::from(vec![
                "update_preimage",
                "update_postimage",
            ])),
        ],
    )
    .unwrap();
    let cs = t
        .write_parquet("_change_data/p=a/c1.parquet", &cdc)
        .unwrap();
    let s2 = t
        .write_parquet("col-p=a/f2.parquet", &data(&[1, 20]))
        .unwrap();
    t.commit(&[
        json!({"remove": {"path": "col-p=a/f1.parquet", "dataChange": true, "partitionValues": {"col-p": "a"}, "size": s1}}),
        add("col-p=a/f2.parquet", s2, json!({"col-p": "a"}), None),
        json!({"cdc": {"path": "_change_data/p=a/c1.parquet", "partitionValues": {"col-p": "a"}, "size": cs, "dataChange": false}}),
    ])
    .unwrap();
    // v2: `v` renamed `w` (same physical column).
    t.commit(&[metadata(fields("w"), &["p"], config)]).unwrap();
    // v3: insert into partition b, v4: delete partition a.
    let s3 = t.write_parquet("col-p=b/f3.parquet", &data(&[3])).unwrap();
    t.commit(&[add("col-p=b/f3.parquet", s3, json!({"col-p": "b"}), None)])
        .unwrap();
    t.commit(&[json!({"remove": {"path": "col-p=a/f2.parquet", "dataChange": true, "partitionValues": {"col-p": "a"}, "size": s2}})])
        .unwrap();
    let plan = plan_of(dir.path(), 0, None).await.unwrap();
    let names: Vec<String> = plan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        names,
        [
            "w",
            "p",
            "_change_type",
            "_commit_version",
            "_commit_timestamp"
        ]
    );
    assert_eq!(
        change_rows(&collect(&plan).await),
        [
            "1|a|delete|4",
            "1|a|insert|0",
            "20|a|delete|4",
            "20|a|update_postimage|1",
            "2|a|insert|0",
            "2|a|update_preimage|1",
            "3|b|insert|3",
        ]
    );
    // A partition predicate prunes before any file is read.
    let plan = open(dir.path())
        .await
        .changes(v(0), None)
        .with_predicate_sql("p = 'b'")
        .build()
        .await
        .unwrap();
    assert_eq!(change_rows(&collect(&plan).await), ["3|b|insert|3"]);
    assert_eq!(plan.metrics().snapshot().files_read, 1);
    // A predicate on `_change_type` keeps the cdc file's own values.
    let plan = open(dir.path())
        .await
        .changes(v(0), None)
        .with_predicate_sql("_change_type = 'update_preimage' OR _change_type = 'insert'")
        .build()
        .await
        .unwrap();
    assert_eq!(
        change_rows(&collect(&plan).await),
        [
            "1|a|insert|0",
            "2|a|insert|0",
            "2|a|update_preimage|1",
            "3|b|insert|3"
        ]
    );
}

/// Updates as a writer with DVs and the feed writes them (dar-testkit's
/// `update_rows`: the old rows deleted through a grown DV, a new file,
/// and a `cdc` file with their pre- and postimages) yield the `cdc` rows
/// only. A DV that only grows (a delete) yields its new rows as deletes;
/// its insert side changes nothing, so that file is not opened for it, and
/// the rows a side leaves out are not counted as deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_through_cdc_files_and_grown_dvs() {
    use dar_testkit::DvStorage;
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), false).await;
    let v1 = t
        .append(&id_part(&schema, &[0, 1, 2, 3, 4, 5], "a"))
        .await
        .unwrap();
    let path = v1.added[0].path.clone();
    t.delete_rows(&path, &[1], DvStorage::File).await.unwrap(); // v2
    let v3 = t
        .update_rows(
            &path,
            &[3, 4],
            &id_part(&schema, &[30, 40], "a"),
            DvStorage::File,
        )
        .await
        .unwrap();
    assert_eq!(
        v3.added.len(),
        2,
        "the file with its grown DV, and the new rows"
    );
    t.delete_rows(&path, &[5], DvStorage::Inline).await.unwrap(); // v4
    // Updating a deleted row, or without the new rows, is refused.
    assert!(
        t.update_rows(&path, &[1], &id_part(&schema, &[10], "a"), DvStorage::File)
            .await
            .is_err()
    );
    let root = dir.path().join("t");
    let mut expected: Vec<String> = (0..6).map(|i| format!("{i}|a|insert|1")).collect();
    expected.extend([
        "1|a|delete|2".to_string(),
        "3|a|update_preimage|3".into(),
        "4|a|update_preimage|3".into(),
        "30|a|update_postimage|3".into(),
        "40|a|update_postimage|3".into(),
        "5|a|delete|4".into(),
    ]);
    assert_eq!(rows_of(&root, 0, None).await, sorted(expected));
    // The update commit alone: its cdc file is its only task.
    let plan = plan_of(&root, 3, Some(3)).await.unwrap();
    assert_eq!(plan.tasks().len(), 1);
    assert!(plan.tasks()[0].object_path.contains("_change_data"));
    // The grown DV: two sides, one file read, nothing counted as deleted.
    for resolve in [false, true] {
        let mut plan = plan_of(&root, 4, Some(4)).await.unwrap();
        assert_eq!(plan.tasks().len(), 2);
        if resolve {
            plan = plan.resolve().await.unwrap();
            assert_eq!(plan.tasks().len(), 1, "the insert side is dropped");
        }
        assert_eq!(change_rows(&collect(&plan).await), ["5|a|delete|4"]);
        let m = plan.metrics().snapshot();
        // One file opened (a resolved plan opens it again to run it).
        assert_eq!(m.files_read, 1 + u64::from(resolve), "{m:?}");
        assert_eq!(m.rows_deleted_by_dv, 0, "{m:?}");
    }
    // The table itself reads as the writer says.
    let snapshot = t.snapshot_rows().unwrap();
    assert_eq!(snapshot.num_rows(), 4);
    let scanned = collect(&open(&root).await.scan().build().unwrap()).await;
    assert_eq!(scanned.iter().map(|b| b.num_rows()).sum::<usize>(), 4);
}

/// The predicate prunes change files by partition values and stats, and
/// by `_commit_version` before any I/O; the projection keeps the three
/// change columns; tasks travel as bytes and run elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruning_projection_and_tasks_as_data() {
    let Some(path) = table_path("kernel/cdf-table") else {
        return;
    };
    let table = open(&path).await;
    let plan = table
        .changes(v(0), None)
        .with_columns(["id"])
        .with_predicate_sql("_commit_version = 2 AND _change_type = 'update_postimage'")
        .build()
        .await
        .unwrap();
    let batches = collect(&plan).await;
    assert_eq!(
        change_rows(&batches),
        [
            "5|update_postimage|2",
            "6|update_postimage|2",
            "7|update_postimage|2"
        ]
    );
    let schema = plan.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        ["id", "_change_type", "_commit_version", "_commit_timestamp"]
    );
    assert_eq!(schema.field(1).data_type(), &DataType::Utf8);
    assert_eq!(schema.field(2).data_type(), &DataType::Int64);
    assert_eq!(
        schema.field(3).data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    let m = plan.metrics().snapshot();
    // Only version 2's change files are opened.
    assert!(m.files_total > plan.tasks().len() as u64, "{m:?}");
    let opened = m.files_read;
    assert!(opened >= 1 && opened < m.files_total, "{m:?}");

    // Partition values prune change files (birthday is the partition).
    let plan = table
        .changes(v(0), None)
        .with_predicate_sql("birthday = DATE '2023-12-29'")
        .build()
        .await
        .unwrap();
    assert!(plan.metrics().snapshot().files_pruned > 0);
    assert_eq!(
        change_rows(&collect(&plan).await),
        [
            "5|Emily|2023-12-29|update_postimage|2",
            "6|Carl|2023-12-29|update_postimage|2",
            "7|Dennis|2023-12-29|delete|3",
            "7|Dennis|2023-12-29|update_postimage|2",
        ]
    );

    // Tasks as bytes, run with a context built from the spec's bytes.
    let plan = table.changes(v(1), Some(v(3))).build().await.unwrap();
    let spec = ScanSpec::from_bytes(&plan.context().spec().to_bytes().unwrap()).unwrap();
    let tasks: Vec<ScanTask> = plan
        .tasks()
        .iter()
        .map(|t| ScanTask::from_bytes(&t.to_bytes().unwrap()).unwrap())
        .collect();
    let runtime = ScanRuntime::open(spec.table_uri(), Default::default()).unwrap();
    let remote = ScanPlan::new(ScanContext::new(spec, runtime).unwrap(), tasks);
    assert_eq!(
        change_rows(&collect(&remote).await),
        change_rows(&collect(&plan).await)
    );
    // A limit stops the feed.
    let plan = table
        .changes(v(0), None)
        .with_limit(3)
        .build()
        .await
        .unwrap();
    assert_eq!(num_rows(&collect(&plan).await), 3);
}
