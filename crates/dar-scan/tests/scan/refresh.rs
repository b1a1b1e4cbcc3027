//! `Table::refresh` against a log that moves on: a checkpoint written
//! since the table was opened is not read (only the new commits are), and
//! a log cleaned up past the table's version is read from its newest
//! checkpoint instead of failing on the missing commits.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use dar_io::{ObjectClass, TableStore};
use dar_scan::{ScanError, Table, TableOptions};
use dar_testkit::TableWriter;
use object_store::ObjectStore;
use object_store::memory::InMemory;

use crate::common::{collect, int64s};

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]))
}

fn ids(range: std::ops::Range<i64>) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![Arc::new(Int64Array::from_iter_values(range))],
    )
    .unwrap()
}

/// A table in memory with one commit of ids 0..10, and the table opened
/// over the same store.
async fn written() -> (TableWriter, Table) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut w = TableWriter::builder(Arc::clone(&store), "t".into(), schema())
        .create()
        .await
        .unwrap();
    w.append(&ids(0..10)).await.unwrap();
    let table_store = TableStore::builder("memory://t")
        .with_store(store)
        .build()
        .unwrap();
    let t = Table::from_store(table_store, TableOptions::new())
        .await
        .unwrap();
    (w, t)
}

async fn sorted_ids(t: &Table) -> Vec<i64> {
    let mut out = int64s(&collect(&t.scan().build().unwrap()).await, 0);
    out.sort_unstable();
    out
}

#[tokio::test]
async fn a_checkpoint_written_since_is_not_read_by_a_refresh() {
    let (mut w, mut t) = written().await;
    let opened = t.version();
    w.append(&ids(10..20)).await.unwrap();
    w.checkpoint().await.unwrap();
    w.append(&ids(20..30)).await.unwrap();
    let before = t.store().metrics().snapshot();
    t.refresh().await.unwrap();
    let io = t.store().metrics().snapshot();
    assert_eq!(t.version(), opened + 2);
    // The two new commits, nothing of the checkpoint.
    assert_eq!(
        io.class(ObjectClass::Log).requests - before.class(ObjectClass::Log).requests,
        2,
        "{io}"
    );
    assert_eq!(
        io.class(ObjectClass::Checkpoint).requests,
        before.class(ObjectClass::Checkpoint).requests,
        "{io}"
    );
    assert_eq!(sorted_ids(&t).await, (0..30).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_log_cleaned_up_past_the_version_is_read_from_its_checkpoint() {
    let (mut w, mut t) = written().await;
    w.append(&ids(10..20)).await.unwrap();
    w.append(&ids(20..30)).await.unwrap();
    w.checkpoint().await.unwrap();
    let checkpoint = w.version();
    w.append(&ids(30..40)).await.unwrap();
    // Log cleanup: the commits the table would replay are gone.
    assert!(w.delete_commits_before(checkpoint).await.unwrap() > 0);
    t.refresh().await.unwrap();
    assert_eq!(t.version(), checkpoint + 1);
    assert_eq!(sorted_ids(&t).await, (0..40).collect::<Vec<_>>());
    // And it goes on replaying commits from there.
    w.append(&ids(40..45)).await.unwrap();
    t.refresh().await.unwrap();
    assert_eq!(t.version(), checkpoint + 2);
    assert_eq!(sorted_ids(&t).await, (0..45).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_gap_no_checkpoint_covers_fails_naming_the_version_and_keeps_the_table() {
    let (mut w, mut t) = written().await;
    let opened = t.version();
    w.append(&ids(10..20)).await.unwrap();
    w.append(&ids(20..30)).await.unwrap();
    // A commit after the table's version is gone, and no checkpoint
    // covers it.
    w.delete_commits_before(opened + 2).await.unwrap();
    let err = t.refresh().await.unwrap_err();
    assert!(matches!(err, ScanError::Log { .. }), "{err:?}");
    let text = dar_scan::one_line(&err);
    assert!(
        text.contains("memory://t") || text.contains("_delta_log"),
        "{text}"
    );
    // The table still reads the version it had.
    assert_eq!(t.version(), opened);
    assert_eq!(sorted_ids(&t).await, (0..10).collect::<Vec<_>>());
}
