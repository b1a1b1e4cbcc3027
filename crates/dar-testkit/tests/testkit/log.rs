//! The log: commit lines carry the protocol's fields, checkpoints hold the
//! state, and dar-log loads what the kit writes.

use std::collections::BTreeMap;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use dar_log::Snapshot;
use dar_testkit::sample::{SAMPLE_CHECKPOINT_VERSION, SampleSummary, write_sample};
use dar_testkit::{ColumnMappingMode, DvStorage, TableWriter};
use object_store::path::Path;

use crate::*;

#[tokio::test]
async fn commits_carry_the_protocol_fields() {
    let store = memory();
    let root = Path::from("log");
    let mut table = TableWriter::builder(store.clone(), root.clone(), all_types_schema())
        .with_partition_columns(["region"])
        .with_column_mapping(ColumnMappingMode::Name)
        .with_deletion_vectors(true)
        .with_property("delta.appendOnly", "false")
        .create()
        .await
        .unwrap();
    table.append(&all_types_batch(12, 0)).await.unwrap();

    let v0 = commit_actions(&store, &root, 0).await;
    assert!(v0[0]["commitInfo"]["timestamp"].is_i64());
    let protocol = &v0[1]["protocol"];
    assert_eq!(protocol["minReaderVersion"], 3);
    assert_eq!(protocol["minWriterVersion"], 7);
    let features = serde_json::json!(["columnMapping", "deletionVectors", "timestampNtz"]);
    assert_eq!(protocol["readerFeatures"], features);
    assert_eq!(protocol["writerFeatures"], features);
    let metadata = &v0[2]["metaData"];
    assert_eq!(metadata["format"]["provider"], "parquet");
    assert_eq!(metadata["partitionColumns"], serde_json::json!(["region"]));
    assert_eq!(
        metadata["configuration"]["delta.columnMapping.mode"],
        "name"
    );
    assert_eq!(
        metadata["configuration"]["delta.columnMapping.maxColumnId"],
        "20"
    );
    assert_eq!(
        metadata["configuration"]["delta.enableDeletionVectors"],
        "true"
    );
    assert_eq!(metadata["configuration"]["delta.appendOnly"], "false");
    let schema: serde_json::Value =
        serde_json::from_str(metadata["schemaString"].as_str().unwrap()).unwrap();
    let region = &schema["fields"][14];
    assert_eq!(region["name"], "region");
    let region_physical = region["metadata"]["delta.columnMapping.physicalName"]
        .as_str()
        .unwrap();
    let id_physical = schema["fields"][0]["metadata"]["delta.columnMapping.physicalName"]
        .as_str()
        .unwrap();

    let v1 = commit_actions(&store, &root, 1).await;
    let adds: Vec<&serde_json::Value> = v1.iter().filter_map(|a| a.get("add")).collect();
    assert_eq!(adds.len(), 4);
    for add in adds {
        assert!(
            add["path"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{region_physical}="))
        );
        assert!(
            add["partitionValues"].get(region_physical).is_some(),
            "keyed by physical name"
        );
        assert!(add["size"].as_u64().unwrap() > 0);
        assert_eq!(add["modificationTime"], 1_704_067_200_000i64 + 60_000);
        assert_eq!(add["dataChange"], true);
        assert!(add.get("deletionVector").is_none());
        let stats: serde_json::Value =
            serde_json::from_str(add["stats"].as_str().unwrap()).unwrap();
        assert!(stats["numRecords"].as_u64().unwrap() > 0);
        assert!(stats["minValues"][id_physical].is_i64());
        assert!(stats["nullCount"][id_physical].is_u64());
        assert!(
            stats["minValues"].get("id").is_none(),
            "stats use physical names"
        );
        assert_eq!(stats["tightBounds"], true);
    }

    // A table using no feature gets the legacy protocol without feature lists.
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, true)]));
    TableWriter::builder(store.clone(), Path::from("legacy"), schema)
        .create()
        .await
        .unwrap();
    let protocol = &commit_actions(&store, &Path::from("legacy"), 0).await[1]["protocol"];
    assert_eq!(
        protocol,
        &serde_json::json!({"minReaderVersion": 1, "minWriterVersion": 2})
    );
}

/// Per-file (path -> DV cardinality) from dar-log's file index.
fn dar_log_files(snapshot: &Snapshot) -> BTreeMap<String, Option<u64>> {
    let index = snapshot.file_index().unwrap();
    (0..index.len())
        .map(|i| {
            (
                index.path.value(i).to_owned(),
                index.deletion_vector(i).unwrap().map(|dv| dv.cardinality()),
            )
        })
        .collect()
}

#[tokio::test]
async fn dar_log_loads_the_sample_with_and_without_early_commits() {
    let store = memory();
    let root = Path::from("sample");
    let summary = write_sample(store.clone(), root.clone()).await.unwrap();
    assert_eq!(
        summary,
        SampleSummary {
            version: 7,
            files: 4,
            live_rows: 300,
            deleted_rows: 10
        }
    );

    let snapshot = Snapshot::load(store.clone(), root.clone()).await.unwrap();
    assert_eq!(snapshot.version(), 7);
    assert_eq!(snapshot.num_files(), 4);
    assert_eq!(snapshot.partition_columns(), ["day"]);
    let files = dar_log_files(&snapshot);
    let cardinalities: Vec<Option<u64>> = files.values().copied().collect();
    assert_eq!(
        cardinalities,
        [Some(5), Some(2), Some(3), None],
        "{files:?}"
    );
    let index = snapshot.file_index().unwrap();
    let records: i64 = index.stats.num_records.iter().flatten().sum();
    assert_eq!(records - 10, 300);
    let days = index.partition_values[0].as_primitive::<arrow_array::types::Date32Type>();
    let mut by_path: Vec<(&str, Option<&str>, i32)> = (0..index.len())
        .map(|i| {
            (
                index.path.value(i),
                index
                    .dv
                    .storage_type
                    .is_valid(i)
                    .then(|| index.dv.storage_type.value(i)),
                days.value(i),
            )
        })
        .collect();
    by_path.sort();
    let kinds: Vec<(Option<&str>, i32)> =
        by_path.iter().map(|(_, kind, day)| (*kind, *day)).collect();
    assert_eq!(
        kinds,
        [
            (Some("u"), 19_723),
            (Some("u"), 19_724),
            (Some("i"), 19_725),
            (None, 19_726)
        ]
    );

    // Time travel to the checkpoint and before it.
    let at_cp = Snapshot::builder(store.clone(), root.clone())
        .with_version(SAMPLE_CHECKPOINT_VERSION)
        .build()
        .await
        .unwrap();
    assert_eq!(at_cp.num_files(), 4);
    let at_1 = Snapshot::builder(store.clone(), root.clone())
        .with_version(1)
        .build()
        .await
        .unwrap();
    assert_eq!(
        dar_log_files(&at_1)
            .values()
            .filter(|dv| dv.is_some())
            .count(),
        0
    );

    // Without commits 0..=4 only the checkpoint can describe the table.
    for version in 0..=SAMPLE_CHECKPOINT_VERSION {
        store
            .delete(&log_file(&root, &format!("{version:020}.json")))
            .await
            .unwrap();
    }
    let from_checkpoint = Snapshot::load(store.clone(), root.clone()).await.unwrap();
    assert_eq!(from_checkpoint.version(), 7);
    assert_eq!(dar_log_files(&from_checkpoint), files);
}

#[tokio::test]
async fn checkpoint_rows_hold_the_state() {
    let store = memory();
    let root = Path::from("cp");
    let mut table = TableWriter::builder(store.clone(), root.clone(), all_types_schema())
        .with_partition_columns(["bucket"])
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    let files = table.append(&all_types_batch(20, 0)).await.unwrap().added;
    table
        .delete_rows(&files[0].path, &[2], DvStorage::Inline)
        .await
        .unwrap();
    table.checkpoint().await.unwrap();

    let hint: serde_json::Value =
        serde_json::from_slice(&read(&store, &log_file(&root, "_last_checkpoint")).await).unwrap();
    assert_eq!(hint["version"], 2);
    assert_eq!(hint["size"], 5, "protocol, metaData, 2 adds, 1 tombstone");
    assert_eq!(hint["numOfAddFiles"], 2);
    let checkpoint = read_parquet(
        &store,
        &log_file(&root, "00000000000000000002.checkpoint.parquet"),
    )
    .await;
    assert_eq!(checkpoint.num_rows(), 5);
    let add = checkpoint.column_by_name("add").unwrap().as_struct();
    assert_eq!(add.null_count(), 3);
    let dv = add.column_by_name("deletionVector").unwrap().as_struct();
    let paths = add.column_by_name("path").unwrap().as_string::<i32>();
    let with_dv: Vec<&str> = (0..5)
        .filter(|&i| add.is_valid(i) && dv.is_valid(i))
        .map(|i| paths.value(i))
        .collect();
    assert_eq!(with_dv, [files[0].path.as_str()]);
    let stats = add.column_by_name("stats").unwrap().as_string::<i32>();
    let first_add = (0..5).find(|&i| add.is_valid(i)).unwrap();
    let stats: serde_json::Value = serde_json::from_str(stats.value(first_add)).unwrap();
    assert!(stats["numRecords"].as_u64().unwrap() > 0);
    let protocol = checkpoint.column_by_name("protocol").unwrap().as_struct();
    assert!(protocol.is_valid(0) && protocol.null_count() == 4);
}

#[tokio::test]
async fn in_commit_timestamps_and_indexed_columns() {
    let store = memory();
    let root = Path::from("ict");
    let mut table = TableWriter::builder(store.clone(), root.clone(), all_types_schema())
        .with_in_commit_timestamps(true)
        .with_num_indexed_cols(2)
        .with_start_time_ms(1_000_000)
        .create()
        .await
        .unwrap();
    assert_eq!(
        table.protocol_versions(),
        (3, 7),
        "timestamp_ntz is a reader feature"
    );
    for first_id in [0, 10, 20] {
        table.append(&all_types_batch(5, first_id)).await.unwrap();
    }
    let v0 = commit_actions(&store, &root, 0).await;
    assert_eq!(v0[0]["commitInfo"]["inCommitTimestamp"], 1_000_000);
    assert_eq!(
        v0[1]["protocol"]["readerFeatures"],
        serde_json::json!(["timestampNtz"])
    );
    assert_eq!(
        v0[1]["protocol"]["writerFeatures"],
        serde_json::json!(["timestampNtz", "inCommitTimestamp"])
    );
    assert_eq!(
        v0[2]["metaData"]["configuration"]["delta.dataSkippingNumIndexedCols"],
        "2"
    );
    let v2 = commit_actions(&store, &root, 2).await;
    assert_eq!(
        v2[0]["commitInfo"]["inCommitTimestamp"],
        1_000_000 + 2 * dar_testkit::COMMIT_INTERVAL_MS
    );
    let stats: serde_json::Value =
        serde_json::from_str(v2[1]["add"]["stats"].as_str().unwrap()).unwrap();
    let keys: Vec<&String> = stats["nullCount"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["flag", "id"], "only the first two leaves");

    // dar-log resolves timestamps through the in-commit timestamps.
    let at = 1_000_000 + 2 * dar_testkit::COMMIT_INTERVAL_MS + 30_000;
    let snapshot = Snapshot::builder(store.clone(), root.clone())
        .with_timestamp_ms(at)
        .build()
        .await
        .unwrap();
    assert_eq!(snapshot.version(), 2);
    assert_eq!(snapshot.num_files(), 2);
}

/// One history checkpointed as `options` say, read back whole by dar-log.
async fn index_after_checkpoint(
    options: dar_testkit::CheckpointOptions,
) -> arrow_array::RecordBatch {
    use arrow_array::{Date32Array, Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("x", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
    ]));
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("t"), Arc::clone(&schema))
        .with_v2_checkpoints(true)
        .create()
        .await
        .unwrap();
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(0..60)),
            Arc::new(Float64Array::from_iter(
                (0..60).map(|i| (i % 7 != 0).then_some(i as f64 / 3.0)),
            )),
            Arc::new(StringArray::from_iter_values(
                (0..60).map(|i| format!("v{i:03}")),
            )),
            Arc::new(Date32Array::from_iter_values((0..60).map(|i| 19_000 + i))),
        ],
    )
    .unwrap();
    w.append_log_only(&batch, 4).await.unwrap();
    let gone: Vec<String> = w.files().take(2).map(|f| f.path.clone()).collect();
    w.remove_files(&gone.iter().map(String::as_str).collect::<Vec<_>>())
        .await
        .unwrap();
    w.checkpoint_with(&options).await.unwrap();
    w.delete_commits_before(w.version()).await.unwrap();
    let snapshot = Snapshot::load(store, Path::from("t")).await.unwrap();
    assert_eq!(snapshot.num_files(), 13);
    snapshot.file_index().unwrap().to_record_batch().unwrap()
}

#[tokio::test]
async fn checkpoints_with_parsed_stats_or_sidecars_read_as_the_classic_one() {
    use dar_testkit::CheckpointOptions;

    let classic = index_after_checkpoint(CheckpointOptions::default()).await;
    let records = classic
        .column_by_name("num_records")
        .unwrap()
        .as_primitive::<arrow_array::types::Int64Type>();
    assert_eq!(records.iter().flatten().sum::<i64>(), 52);
    assert!(classic.column_by_name("min.d").unwrap().null_count() == 0);
    for options in [
        CheckpointOptions::default()
            .with_stats_json(false)
            .with_stats_parsed(true),
        CheckpointOptions::default().with_stats_parsed(true),
        CheckpointOptions::default().with_sidecars(3),
        CheckpointOptions::default()
            .with_stats_json(false)
            .with_stats_parsed(true)
            .with_sidecars(2),
    ] {
        let got = index_after_checkpoint(options.clone()).await;
        assert_eq!(got, classic, "{options:?}");
    }
}
