//! Misuse is a specific error, never a panic.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_testkit::{DvStorage, TableWriter, TestkitError};
use object_store::path::Path;

use crate::*;

fn small_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn small_batch(p: &str) -> RecordBatch {
    RecordBatch::try_new(
        small_schema(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![p, p])),
        ],
    )
    .unwrap()
}

#[tokio::test]
async fn bad_settings_and_calls_are_named_errors() {
    let store = memory();
    let build = |root: &str| TableWriter::builder(store.clone(), Path::from(root), small_schema());

    let err = build("a")
        .with_partition_columns(["nope"])
        .create()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TestkitError::InvalidPartitionColumn { column, .. } if column == "nope"),
        "{err}"
    );
    let err = build("a")
        .with_partition_columns(["id", "p"])
        .create()
        .await
        .unwrap_err();
    assert!(
        matches!(err, TestkitError::InvalidPartitionColumn { .. }),
        "{err}"
    );

    let mut table = build("b")
        .with_partition_columns(["p"])
        .create()
        .await
        .unwrap();
    let err = build("b").create().await.unwrap_err();
    assert!(
        matches!(err, TestkitError::Store { .. }),
        "version 0 exists: {err}"
    );

    let err = table.append(&all_types_batch(3, 0)).await.unwrap_err();
    assert!(matches!(err, TestkitError::SchemaMismatch { .. }), "{err}");
    let err = table.append(&small_batch("")).await.unwrap_err();
    assert!(err.to_string().contains("empty string"), "{err}");
    let path = table.append(&small_batch("x")).await.unwrap().added[0]
        .path
        .clone();

    let err = table
        .delete_rows(&path, &[0], DvStorage::Inline)
        .await
        .unwrap_err();
    assert!(
        matches!(err, TestkitError::DeletionVectorsDisabled),
        "{err}"
    );
    let err = table.remove_files(&["missing.parquet"]).await.unwrap_err();
    assert!(
        matches!(&err, TestkitError::UnknownFile { path } if path == "missing.parquet"),
        "{err}"
    );
    assert_eq!(table.version(), 1, "failed calls commit nothing");

    let mut dv_table = build("c")
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    let path = dv_table.append(&small_batch("y")).await.unwrap().added[0]
        .path
        .clone();
    let err = dv_table
        .delete_rows(&path, &[2], DvStorage::File)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            TestkitError::RowOutOfRange {
                row: 2,
                num_records: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(dv_table.version(), 1);
}
