//! Ranges the log cannot give, each refused naming its version: out of
//! the history, the feed switched off, commits cleaned up, a schema the
//! end cannot read.

use super::*;
use dar_scan::ErrorKind;
use dar_testkit::HandTable;
use dar_testkit::log_json::{add, cdf_on, field, id_field, metadata, protocol, protocol_with};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_out_of_the_history_are_refused_by_version() {
    let Some(path) = table_path("kernel/cdf-table-simple") else {
        return;
    };
    let err = plan_of(&path, 1, Some(0)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("start version 1 is after end version 0"),
        "{err}"
    );
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let err = plan_of(&path, 3, Some(4)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("start version 3 is beyond the latest version 2"),
        "{err}"
    );
    let err = plan_of(&path, 0, Some(9)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("end version 9 is beyond the latest version 2"),
        "{err}"
    );
}

/// The feed off, then on, then off again: ranges that touch an off
/// version are refused naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_switched_off_is_refused_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let s = t.write_parquet("a.parquet", &ids_batch(&[1])).unwrap();
    let s2 = t.write_parquet("b.parquet", &ids_batch(&[2])).unwrap();
    let s3 = t.write_parquet("c.parquet", &ids_batch(&[3])).unwrap();
    t.commit(&[
        protocol(),
        metadata(id_field(), &[], json!({})),
        add("a.parquet", s, json!({}), None),
    ])
    .unwrap();
    t.commit(&[metadata(id_field(), &[], cdf_on())]).unwrap();
    t.commit(&[add("b.parquet", s2, json!({}), None)]).unwrap();
    t.commit(&[metadata(
        id_field(),
        &[],
        json!({"delta.enableChangeDataFeed": "false"}),
    )])
    .unwrap();
    t.commit(&[add("c.parquet", s3, json!({}), None)]).unwrap();
    assert_eq!(rows_of(dir.path(), 1, Some(2)).await, ["2|insert|2"]);
    for (s, e, off) in [(0, Some(2), 0), (1, Some(3), 3), (2, None, 3), (4, None, 4)] {
        let err = plan_of(dir.path(), s, e).await.unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("change data feed is not enabled at version {off}")),
            "{s}..{e:?}: {err}"
        );
    }
    // Run commit by commit, the rows before the refused commit come first,
    // then the error naming it; none after it.
    let scan = open(dir.path())
        .await
        .changes(v(1), Some(v(3)))
        .open()
        .await
        .unwrap();
    let mut stream = scan.execute();
    let mut rows = Vec::new();
    let err = loop {
        match futures::StreamExt::next(&mut stream).await {
            Some(Ok(b)) => rows.extend(change_rows(&[b])),
            Some(Err(e)) => break e,
            None => panic!("no refusal"),
        }
    };
    assert_eq!(rows, ["2|insert|2"]);
    assert!(
        err.to_string()
            .contains("change data feed is not enabled at version 3"),
        "{err}"
    );
    assert!(futures::StreamExt::next(&mut stream).await.is_none());
}

/// Commits removed by log cleanup (a checkpoint kept): a range that needs
/// one is refused naming it; one after the checkpoint reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleaned_up_commits_are_refused_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), false).await;
    t.append(&id_part(&schema, &[1, 2], "a")).await.unwrap(); // v1
    t.append(&id_part(&schema, &[3], "b")).await.unwrap(); // v2
    t.checkpoint().await.unwrap();
    let v3 = t.append(&id_part(&schema, &[4], "a")).await.unwrap(); // v3
    let path = v3.added[0].path.clone();
    t.delete_rows(&path, &[0], dar_testkit::DvStorage::Inline)
        .await
        .unwrap(); // v4
    let root = dir.path().join("t");
    for v in [0, 1] {
        std::fs::remove_file(root.join(format!("_delta_log/{v:020}.json"))).unwrap();
    }
    assert_eq!(
        rows_of(&root, 2, None).await,
        ["3|b|insert|2", "4|a|delete|4", "4|a|insert|3"]
    );
    for start in [0, 1] {
        let err = plan_of(&root, start, None).await.unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "commit version {start} of the change range is missing"
            )),
            "{err}"
        );
        assert_eq!(err.kind(), ErrorKind::NotFound);
    }
}

/// Type widening inside the range: an `integer` column widened to `long`
/// reads the old files' rows as longs; a later narrowing is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widened_types_read_and_narrowing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    let small = t.write_parquet("a.parquet", &ids_batch(&[1, 2])).unwrap();
    let long_batch = RecordBatch::try_new(
        std::sync::Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![std::sync::Arc::new(arrow_array::Int64Array::from(vec![
            5_000_000_000i64,
        ]))],
    )
    .unwrap();
    let big = t.write_parquet("b.parquet", &long_batch).unwrap();
    let config = json!({"delta.enableChangeDataFeed": "true", "delta.enableTypeWidening": "true"});
    t.commit(&[
        protocol_with(&["typeWidening"]),
        metadata(id_field(), &[], config.clone()),
        add("a.parquet", small, json!({}), None),
    ])
    .unwrap();
    let widened = json!([field(
        "id",
        json!("long"),
        json!({"delta.typeChanges": [{"fromType": "integer", "toType": "long"}]})
    )]);
    t.commit(&[metadata(widened, &[], config.clone())]).unwrap();
    t.commit(&[add("b.parquet", big, json!({}), None)]).unwrap();
    let plan = plan_of(dir.path(), 0, None).await.unwrap();
    assert_eq!(plan.schema().field(0).data_type(), &DataType::Int64);
    assert_eq!(
        change_rows(&collect(&plan).await),
        ["1|insert|0", "2|insert|0", "5000000000|insert|2"]
    );
    // Back to integer: version 0's and 1's data cannot be read as it.
    t.commit(&[metadata(id_field(), &[], config)]).unwrap();
    let err = plan_of(dir.path(), 0, None).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("column 'id' changes type from Long to Integer"),
        "{err}"
    );
}
