//! Bad logs get specific errors naming the file, version or line.

use dar_log::LogError;
use object_store::ObjectStoreExt;
use serde_json::json;

use crate::writer::{TestLog, add, checkpoint_bytes, metadata, protocol};

async fn basic(log: &TestLog, versions: u64) {
    log.commit(0, &[protocol(), metadata(false), add("a.parquet", None)])
        .await;
    for v in 1..versions {
        log.commit(v, &[add(&format!("f{v}.parquet"), None)]).await;
    }
}

#[tokio::test]
async fn no_delta_log() {
    let log = TestLog::new();
    log.put("part-0.parquet", "not a table").await;
    let err = log.builder().build().await.unwrap_err();
    assert!(matches!(err, LogError::NoLog { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "not a Delta table: no commits or checkpoints under t/_delta_log"
    );
}

#[tokio::test]
async fn version_gap_names_missing_version() {
    let log = TestLog::new();
    basic(&log, 5).await;
    log.store
        .delete(&"t/_delta_log/00000000000000000003.json".into())
        .await
        .unwrap();
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(err, LogError::VersionGap { missing: 3, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("missing commit version 3 in t/_delta_log"),
        "{err}"
    );
    // Versions before the gap still load.
    assert_eq!(
        log.builder()
            .with_version(2)
            .build()
            .await
            .unwrap()
            .num_files(),
        3
    );
}

#[tokio::test]
async fn truncated_history_without_checkpoint() {
    let log = TestLog::new();
    basic(&log, 3).await;
    log.store
        .delete(&"t/_delta_log/00000000000000000000.json".into())
        .await
        .unwrap();
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(
            err,
            LogError::TruncatedHistory {
                earliest: 1,
                target: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn missing_protocol_or_metadata() {
    let log = TestLog::new();
    log.commit(0, &[metadata(false)]).await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(err, LogError::MissingProtocol { version: 0, .. }),
        "{err}"
    );
    let log = TestLog::new();
    log.commit(0, &[protocol(), add("a", None)]).await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(err, LogError::MissingMetadata { version: 0, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("no metaData action found for version 0")
    );
}

#[tokio::test]
async fn unsupported_reader_feature_and_version() {
    let log = TestLog::new();
    let p = json!({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
        "readerFeatures": ["deletionVectors", "catalogManaged"], "writerFeatures": ["deletionVectors", "someWriterOnly"]}});
    log.commit(0, &[p, metadata(false)]).await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::UnsupportedFeature { feature, version: 0 } if feature == "catalogManaged"),
        "{err}"
    );
    // The check runs on the protocol of the requested version.
    let log = TestLog::new();
    log.commit(0, &[protocol(), metadata(false)]).await;
    log.commit(
        1,
        &[json!({"protocol": {"minReaderVersion": 4, "minWriterVersion": 7}})],
    )
    .await;
    assert!(matches!(
        log.builder().build().await,
        Err(LogError::UnsupportedReaderVersion {
            reader_version: 4,
            version: 1
        })
    ));
    assert_eq!(
        log.builder()
            .with_version(0)
            .build()
            .await
            .unwrap()
            .version(),
        0
    );
    // Writer-only features never block.
    let log = TestLog::new();
    let p = json!({"protocol": {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["unknownWriterFeature"]}});
    log.commit(0, &[p, metadata(false)]).await;
    assert!(log.builder().build().await.is_ok());
}

#[tokio::test]
async fn malformed_json_line() {
    let log = TestLog::new();
    basic(&log, 2).await;
    log.put(
        "_delta_log/00000000000000000002.json",
        "{\"commitInfo\":{}}\n{\"add\":{\"path\":\"x\",\"size\":1,\n",
    )
    .await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::MalformedJson { path, line: 2, .. } if path == "t/_delta_log/00000000000000000002.json"),
        "{err}"
    );
    // A partition value that is neither a string nor null.
    log.put(
        "_delta_log/00000000000000000002.json",
        "{\"commitInfo\":{}}\n{\"add\":{\"path\":\"x\",\"size\":1,\"partitionValues\":{\"p\":[1]}}}\n",
    )
    .await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::MalformedJson { line: 2, .. }),
        "{err}"
    );
    // An empty commit is corrupt, too.
    log.put("_delta_log/00000000000000000002.json", "").await;
    let err = log.builder().build().await.unwrap_err();
    assert!(matches!(err, LogError::EmptyCommit { .. }), "{err}");
}

#[tokio::test]
async fn truncated_checkpoint_names_the_file() {
    let log = TestLog::new();
    basic(&log, 3).await;
    let bytes = checkpoint_bytes(&[
        protocol(),
        metadata(false),
        add("a.parquet", None),
        add("f1.parquet", None),
    ]);
    log.put(
        "_delta_log/00000000000000000001.checkpoint.parquet",
        bytes[..bytes.len() / 2].to_vec(),
    )
    .await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::CheckpointParquet { path, .. } if path == "t/_delta_log/00000000000000000001.checkpoint.parquet"),
        "{err}"
    );
}

#[tokio::test]
async fn wrong_schema_checkpoint_names_the_file_and_column() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    let log = TestLog::new();
    basic(&log, 3).await;
    // `add` is a string column instead of a struct.
    let batch =
        RecordBatch::try_from_iter([("add", Arc::new(StringArray::from(vec!["x"])) as ArrayRef)])
            .unwrap();
    let mut out = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    log.put("_delta_log/00000000000000000001.checkpoint.parquet", out)
        .await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::CheckpointSchema { path, column, .. }
            if path == "t/_delta_log/00000000000000000001.checkpoint.parquet" && column == "add"),
        "{err}"
    );
}

#[tokio::test]
async fn incomplete_multi_part_checkpoint_is_not_used() {
    let log = TestLog::new();
    basic(&log, 4).await;
    let part = checkpoint_bytes(&[protocol(), metadata(false), add("a.parquet", None)]);
    log.put(
        "_delta_log/00000000000000000002.checkpoint.0000000001.0000000002.parquet",
        part,
    )
    .await;
    // Part 2 is missing: replay falls back to the commits.
    assert_eq!(log.builder().build().await.unwrap().num_files(), 4);
    // And without the older commits the table cannot be rebuilt.
    for v in 0..=2u64 {
        log.store
            .delete(&format!("t/_delta_log/{v:020}.json").into())
            .await
            .unwrap();
    }
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(err, LogError::TruncatedHistory { earliest: 3, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn bad_partition_value_names_file_and_column() {
    let log = TestLog::new();
    let mut a = add("p=x/a.parquet", None);
    a["add"]["partitionValues"] = json!({"p": "not-a-number"});
    log.commit(0, &[protocol(), metadata(true), a]).await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::PartitionValue { file, column, value, .. }
            if file == "p=x/a.parquet" && column == "p" && value == "not-a-number"),
        "{err}"
    );
    // Lazy mode defers the error to the first file-index use.
    let s = log
        .builder()
        .with_file_index(dar_log::FileIndexMode::Lazy)
        .build()
        .await
        .unwrap();
    assert_eq!(s.num_files(), 1);
    assert!(matches!(
        s.file_index(),
        Err(LogError::PartitionValue { .. })
    ));
}

#[tokio::test]
async fn last_checkpoint_hint_fallbacks() {
    let log = TestLog::new();
    basic(&log, 4).await;
    // A hint at a checkpoint that does not exist: the full listing is used.
    log.put("_delta_log/_last_checkpoint", r#"{"version":2,"size":3}"#)
        .await;
    assert_eq!(log.builder().build().await.unwrap().num_files(), 4);
    // Garbage hint: ignored.
    log.put("_delta_log/_last_checkpoint", "{not json").await;
    assert_eq!(log.builder().build().await.unwrap().num_files(), 4);
    // A real checkpoint at 2, hint stale at 1 (newer checkpoint wins), and
    // time travel below the hint.
    log.checkpoint(
        2,
        &[
            protocol(),
            metadata(false),
            add("a.parquet", None),
            add("f1.parquet", None),
            add("f2.parquet", None),
        ],
    )
    .await;
    log.put("_delta_log/_last_checkpoint", r#"{"version":1,"size":3}"#)
        .await;
    assert_eq!(log.builder().build().await.unwrap().num_files(), 4);
    log.put("_delta_log/_last_checkpoint", r#"{"version":2,"size":3}"#)
        .await;
    for v in 0..4u64 {
        assert_eq!(
            log.builder()
                .with_version(v)
                .build()
                .await
                .unwrap()
                .num_files(),
            v as usize + 1
        );
    }
}
