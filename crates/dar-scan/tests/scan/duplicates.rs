//! Issue 33 item 11 through the scan: a checkpoint that repeats a file
//! (across the parts of a multi-part checkpoint, across V2 sidecars, or in
//! its one file) yields that file's rows once; one that repeats it with
//! other values, or adds and removes it, is refused naming the file. A
//! commit that adds a file twice: the same for a snapshot and for the
//! change feed.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::{ChangeBound, ErrorKind, Table};
use dar_testkit::{CheckpointOptions, DvStorage, HandTable, Repeat, TableWriter};
use serde_json::json;

use crate::common::{collect, int64s};

/// A table of three files in two partitions, one with a deletion vector,
/// under `dir/t`; the path of the file with the DV.
async fn table(dir: &Path) -> (TableWriter, String) {
    let store: Arc<dyn object_store::ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("part", DataType::Utf8, true),
    ]));
    let mut t = TableWriter::builder(store, "t".into(), Arc::clone(&schema))
        .with_partition_columns(["part"])
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    let batch = |ids: &[i64], part: &str| {
        RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                Arc::new(StringArray::from(vec![part; ids.len()])),
            ],
        )
        .unwrap()
    };
    let first = t.append(&batch(&[1, 2, 3], "a")).await.unwrap();
    t.append(&batch(&[4, 5], "b")).await.unwrap();
    t.append(&batch(&[6], "a")).await.unwrap();
    let path = first.added[0].path.clone();
    t.delete_rows(&path, &[1], DvStorage::Inline).await.unwrap();
    (t, path)
}

/// The ids a scan of the table at `root` returns, sorted, and its files.
async fn scan(root: &Path) -> Result<(Vec<i64>, usize), dar_scan::ScanError> {
    let table = Table::open(root.to_str().unwrap()).await?;
    let plan = table.scan().with_columns(["id"]).build()?;
    let mut ids = int64s(&collect(&plan).await, 0);
    ids.sort_unstable();
    Ok((ids, plan.tasks().len()))
}

/// The shapes a repeat can take: in one file, across parts, across sidecars.
fn shapes() -> Vec<(&'static str, CheckpointOptions)> {
    vec![
        ("classic", CheckpointOptions::default()),
        ("2 parts", CheckpointOptions::default().with_parts(2)),
        (
            "3 parts, stats_parsed",
            CheckpointOptions::default()
                .with_parts(3)
                .with_stats_parsed(true),
        ),
        ("2 sidecars", CheckpointOptions::default().with_sidecars(2)),
    ]
}

/// The case and its class: the same add twice in a checkpoint is
/// read once, whatever the checkpoint's shape (before, the file's rows
/// came twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_repeated_by_a_checkpoint_is_read_once() {
    for (shape, options) in shapes() {
        for repeated in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let (mut t, path) = table(dir.path()).await;
            let options = if repeated {
                options.clone().with_repeated_file(&path, Repeat::Same)
            } else {
                options.clone()
            };
            t.checkpoint_with(&options).await.unwrap();
            let (ids, files) = scan(&dir.path().join("t")).await.unwrap();
            assert_eq!(ids, [1, 3, 4, 5, 6], "{shape}, repeated: {repeated}");
            assert_eq!(files, 3, "{shape}");
        }
    }
}

/// A checkpoint that repeats a file with another size or other statistics,
/// or that adds and removes it, is refused: the error names the file and
/// the version, and is corrupt data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_repeated_with_other_values_is_refused() {
    for (shape, options) in shapes() {
        for repeat in [Repeat::OtherSize, Repeat::OtherStats, Repeat::Removed] {
            let dir = tempfile::tempdir().unwrap();
            let (mut t, path) = table(dir.path()).await;
            let version = t.version();
            t.checkpoint_with(&options.clone().with_repeated_file(&path, repeat))
                .await
                .unwrap();
            let err = scan(&dir.path().join("t")).await.unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("conflicting actions")
                    && text.contains(&path)
                    && text.contains(&format!("version {version}")),
                "{shape}, {repeat:?}: {text}"
            );
            assert_eq!(err.kind(), ErrorKind::CorruptData, "{shape}: {text}");
        }
    }
}

fn ids_batch(ids: &[i32]) -> RecordBatch {
    let schema = Schema::new(vec![Field::new("id", DataType::Int32, true)]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(Int32Array::from(ids.to_vec()))],
    )
    .unwrap()
}

/// A table whose version 0 adds `f.parquet` (2 rows) twice, the second
/// time with other statistics when `differ`; version 1 removes it when
/// `removed`.
fn added_twice(dir: &Path, differ: bool, removed: bool) -> String {
    let mut t = HandTable::new(dir).unwrap();
    let size = t.write_parquet("f.parquet", &ids_batch(&[1, 2])).unwrap();
    let add = HandTable::add("f.parquet", size, json!({}), Some(json!({"numRecords": 2})));
    let mut again = add.clone();
    if differ {
        again["add"]["stats"] = json!("{\"numRecords\":3}");
    }
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(
            json!([HandTable::field("id", json!("integer"), json!({}))]),
            &[],
            json!({"delta.enableChangeDataFeed": "true"}),
        ),
        add,
        again,
    ])
    .unwrap();
    if removed {
        t.commit(&[
            json!({"remove": {"path": "f.parquet", "dataChange": true, "size": size,
            "partitionValues": {}, "deletionTimestamp": 0}}),
        ])
        .unwrap();
    }
    dir.to_str().unwrap().to_string()
}

/// The rows of the change feed of the table at `uri` from version 0.
async fn changes(uri: &str) -> Result<usize, String> {
    let table = Table::open(uri).await.map_err(|e| e.to_string())?;
    let plan = table
        .changes(ChangeBound::Version(0), None)
        .build()
        .await
        .map_err(|e| e.to_string())?;
    let batches: Vec<RecordBatch> = futures::TryStreamExt::try_collect(plan.execute())
        .await
        .map_err(|e| e.to_string())?;
    Ok(crate::common::num_rows(&batches))
}

/// A commit that adds one file twice: the same add is one file for a
/// snapshot, and one insert per row for the change feed (before, two);
/// adds that differ are refused by both, naming the commit's lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_added_twice_by_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let uri = added_twice(dir.path(), false, false);
    let table = Table::open(&uri).await.unwrap();
    let plan = table.scan().build().unwrap();
    assert_eq!(crate::common::num_rows(&collect(&plan).await), 2);
    assert_eq!(plan.tasks().len(), 1);

    let dir = tempfile::tempdir().unwrap();
    let uri = added_twice(dir.path(), true, false);
    let err = Table::open(&uri).await.unwrap_err().to_string();
    assert!(
        err.contains("f.parquet") && err.contains("lines 3 and 4"),
        "{err}"
    );

    // The feed: 2 inserts at version 0, 2 deletes at version 1.
    let dir = tempfile::tempdir().unwrap();
    let uri = added_twice(dir.path(), false, true);
    assert_eq!(changes(&uri).await.unwrap(), 4);
    let dir = tempfile::tempdir().unwrap();
    let uri = added_twice(dir.path(), true, true);
    let err = changes(&uri).await.unwrap_err();
    assert!(
        err.contains("f.parquet") && err.contains("lines 3 and 4"),
        "{err}"
    );
}
