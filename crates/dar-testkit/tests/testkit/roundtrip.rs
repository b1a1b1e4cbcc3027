//! Data files read back by arrow-rs hold exactly the appended rows; DVs
//! decode to exactly the deleted rows; the same calls give the same bytes.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{Array, RecordBatch, UInt32Array};
use dar_dv::{DvDescriptor, StorageType};
use dar_testkit::{ColumnMappingMode, DataFile, DvStorage, ParquetOptions, TableWriter};
use object_store::path::Path;

use crate::*;

/// The rows of `batch` that belong in `file`, judged by its partition values.
fn expected_rows(batch: &RecordBatch, file: &DataFile) -> RecordBatch {
    let regions = batch.column(14).as_string::<i32>();
    let buckets = batch.column(15).as_primitive::<Int32Type>();
    let want_region = file.partition_values[0].1.as_deref();
    let want_bucket = file.partition_values[1].1.clone();
    let rows: Vec<u32> = (0..batch.num_rows())
        .filter(|&i| {
            let region = (!regions.is_null(i)).then(|| regions.value(i));
            region == want_region && Some(buckets.value(i).to_string()) == want_bucket
        })
        .map(|i| i as u32)
        .collect();
    arrow_select::take::take_record_batch(batch, &UInt32Array::from(rows)).unwrap()
}

async fn roundtrip(mode: ColumnMappingMode) {
    let store = memory();
    let root = Path::from("tables/all");
    let layout = ParquetOptions::default()
        .with_row_group_rows(7)
        .with_page_rows(3);
    let mut table = TableWriter::builder(store.clone(), root.clone(), all_types_schema())
        .with_partition_columns(["region", "bucket"])
        .with_column_mapping(mode)
        .with_parquet_options(layout)
        .create()
        .await
        .unwrap();
    let mut written = 0;
    for (first_id, rows) in [(0, 50), (1000, 23)] {
        let batch = all_types_batch(rows, first_id);
        let commit = table.append(&batch).await.unwrap();
        // Regions US/East, eu west, ap#1, null x buckets 0, 1: all 8 combinations.
        assert_eq!(commit.added.len(), 8, "{mode:?}");
        for file in &commit.added {
            let location = dar_log::file_index::resolve_path(&root, &file.path).unwrap();
            let read = read_parquet(&store, &location).await;
            let expected = table.physical_batch(&expected_rows(&batch, file)).unwrap();
            assert_eq!(read.num_rows() as u64, file.num_records);
            assert_eq!(read.schema().fields().len(), expected.num_columns());
            for (i, field) in expected.schema().fields().iter().enumerate() {
                assert_eq!(read.schema().field(i).name(), field.name(), "{mode:?}");
                assert_eq!(
                    read.column(i).as_ref(),
                    expected.column(i).as_ref(),
                    "{mode:?} column {}",
                    field.name()
                );
            }
            written += read.num_rows();
        }
    }
    assert_eq!(written, 73);
    assert_eq!(table.live_rows(), 73);
}

#[tokio::test]
async fn rows_read_back_exactly_without_mapping() {
    roundtrip(ColumnMappingMode::None).await;
}

#[tokio::test]
async fn rows_read_back_exactly_with_name_mapping() {
    roundtrip(ColumnMappingMode::Name).await;
}

#[tokio::test]
async fn rows_read_back_exactly_with_id_mapping() {
    roundtrip(ColumnMappingMode::Id).await;
}

/// A one-file table (no partitions) with `rows` rows and DVs allowed.
pub async fn dv_table(
    store: &Arc<dyn ObjectStore>,
    root: &Path,
    rows: usize,
) -> (TableWriter, String) {
    let schema = all_types_schema();
    let mut table = TableWriter::builder(store.clone(), root.clone(), schema)
        .with_deletion_vectors(true)
        .with_parquet_options(ParquetOptions::default().with_row_group_rows(16))
        .create()
        .await
        .unwrap();
    let commit = table.append(&all_types_batch(rows, 0)).await.unwrap();
    let path = commit.added[0].path.clone();
    (table, path)
}

async fn decode(store: &Arc<dyn ObjectStore>, root: &Path, dv: &DvDescriptor) -> Vec<u64> {
    let rows = match dv.storage_type() {
        StorageType::Inline => dar_dv::decode_inline(dv).unwrap(),
        _ => {
            let root_url = url::Url::parse("memory:///tables/dv/").unwrap();
            let file = dv.file_url(&root_url).unwrap().unwrap();
            let location = Path::from_url_path(file.path()).unwrap();
            assert!(location.as_ref().starts_with(root.as_ref()));
            let bytes = read(store, &location).await;
            dar_dv::decode_file_bytes(dv, location.as_ref(), 0, &bytes).unwrap()
        }
    };
    rows.iter().collect()
}

#[tokio::test]
async fn deletion_vectors_decode_to_the_deleted_rows_and_merge() {
    let store = memory();
    let root = Path::from("tables/dv");
    let (mut table, path) = dv_table(&store, &root, 40).await;
    let mut expected = BTreeSet::new();
    let steps: [(&[u64], DvStorage); 4] = [
        (&[3, 4, 39], DvStorage::File),
        (&[0, 4], DvStorage::Inline),
        (&[17], DvStorage::FileWithPrefix("ab".into())),
        (&[], DvStorage::File),
    ];
    for (rows, storage) in steps {
        let commit = table
            .delete_rows(&path, rows, storage.clone())
            .await
            .unwrap();
        expected.extend(rows.iter().copied());
        let file = &commit.added[0];
        let dv = file.deletion_vector.as_ref().unwrap();
        assert_eq!(dv.cardinality(), expected.len() as u64);
        assert_eq!(
            decode(&store, &root, dv).await,
            expected.iter().copied().collect::<Vec<_>>()
        );
        assert_eq!(
            file.deleted_rows(),
            expected.iter().copied().collect::<Vec<_>>()
        );
        assert_eq!(file.live_rows(), 40 - expected.len() as u64);
        if storage == DvStorage::FileWithPrefix("ab".into()) {
            assert!(dv.path_or_inline_dv().starts_with("ab"));
        }
        // The commit: remove (old DV) + add (new DV, wide bounds).
        let actions = commit_actions(&store, &root, commit.version).await;
        let remove = &actions.iter().find(|a| a.get("remove").is_some()).unwrap()["remove"];
        let add = &actions.iter().find(|a| a.get("add").is_some()).unwrap()["add"];
        assert_eq!(remove["path"], add["path"]);
        assert_eq!(add["deletionVector"]["cardinality"], expected.len() as u64);
        assert_eq!(
            add["deletionVector"]["storageType"],
            dv.storage_type().code().to_string()
        );
        let stats: serde_json::Value =
            serde_json::from_str(add["stats"].as_str().unwrap()).unwrap();
        assert_eq!(stats["tightBounds"], false);
        assert_eq!(stats["numRecords"], 40);
    }
}

#[tokio::test]
async fn one_dv_file_serves_several_data_files() {
    let store = memory();
    let root = Path::from("tables/dv");
    let (mut table, first) = dv_table(&store, &root, 20).await;
    let second = table.append(&all_types_batch(30, 100)).await.unwrap().added[0]
        .path
        .clone();
    let commit = table
        .delete_rows_in(&[(&first, &[1, 2]), (&second, &[29])], DvStorage::File)
        .await
        .unwrap();
    let dvs: Vec<&DvDescriptor> = commit
        .added
        .iter()
        .map(|f| f.deletion_vector.as_ref().unwrap())
        .collect();
    assert_eq!(dvs[0].path_or_inline_dv(), dvs[1].path_or_inline_dv());
    assert_ne!(dvs[0].offset(), dvs[1].offset());
    assert_eq!(decode(&store, &root, dvs[0]).await, [1, 2]);
    assert_eq!(decode(&store, &root, dvs[1]).await, [29]);
}

async fn build_everything(store: &Arc<dyn ObjectStore>) {
    let root = Path::from("t");
    let mut table = TableWriter::builder(store.clone(), root, all_types_schema())
        .with_partition_columns(["bucket"])
        .with_column_mapping(ColumnMappingMode::Name)
        .with_deletion_vectors(true)
        .with_seed(99)
        .create()
        .await
        .unwrap();
    let files = table.append(&all_types_batch(30, 0)).await.unwrap().added;
    table
        .delete_rows(&files[0].path, &[1, 5], DvStorage::File)
        .await
        .unwrap();
    table
        .delete_rows(&files[1].path, &[0], DvStorage::Inline)
        .await
        .unwrap();
    table.checkpoint().await.unwrap();
    table.remove_files(&[&files[1].path]).await.unwrap();
}

#[tokio::test]
async fn same_calls_write_identical_bytes() {
    let (a, b) = (memory(), memory());
    build_everything(&a).await;
    build_everything(&b).await;
    let (a, b) = (
        snapshot_store(&a, &Path::from("t")).await,
        snapshot_store(&b, &Path::from("t")).await,
    );
    assert_eq!(
        a.len(),
        10,
        "{:?}",
        a.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(a, b);
}

#[tokio::test]
async fn local_directories_are_hive_escaped_and_resolve_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn ObjectStore> =
        Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let mut table = TableWriter::builder(store.clone(), Path::from("t"), all_types_schema())
        .with_partition_columns(["region"])
        .create()
        .await
        .unwrap();
    let batch = all_types_batch(8, 0);
    let commit = table.append(&batch).await.unwrap();
    let mut dirs: Vec<String> = std::fs::read_dir(dir.path().join("t"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    dirs.sort();
    assert_eq!(
        dirs,
        [
            "_delta_log",
            "region=US%2FEast",
            "region=__HIVE_DEFAULT_PARTITION__",
            "region=ap%231",
            "region=eu west"
        ]
    );
    let paths: Vec<&str> = commit.added.iter().map(|f| f.path.as_str()).collect();
    assert!(
        paths[0].starts_with("region=US%252FEast/part-00000-"),
        "{paths:?}"
    );
    assert!(paths[1].starts_with("region=eu%20west/"), "{paths:?}");
    assert!(paths[2].starts_with("region=ap%25231/"), "{paths:?}");
    for file in &commit.added {
        let location = dar_log::file_index::resolve_path(&Path::from("t"), &file.path).unwrap();
        assert_eq!(
            read_parquet(&store, &location).await.num_rows() as u64,
            file.num_records
        );
    }
    let null_region = commit
        .added
        .iter()
        .find(|f| f.partition_values[0].1.is_none())
        .unwrap();
    assert_eq!(null_region.num_records, 2);
    let snapshot = dar_log::Snapshot::load(store, Path::from("t"))
        .await
        .unwrap();
    assert_eq!(snapshot.num_files(), 4);
}

#[tokio::test]
async fn lists_maps_and_structs_in_lists_round_trip_under_mapping() {
    use arrow_array::builder::{Int64Builder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{Int32Array, Int64Array, ListArray, StructArray};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{DataType, Field, Fields, Schema};

    let mut tags = ListBuilder::new(StringBuilder::new());
    let mut attrs = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
    for i in 0..6i64 {
        for t in 0..i % 3 {
            tags.values().append_value(format!("t{t}"));
        }
        tags.append(i != 4);
        for k in 0..i % 2 + 1 {
            attrs.keys().append_value(format!("k{k}"));
            attrs.values().append_option((k != 1).then_some(i * 10));
        }
        attrs.append(i != 5).unwrap();
    }
    let (tags, attrs) = (tags.finish(), attrs.finish());
    let point = Fields::from(vec![
        Field::new("x", DataType::Int32, true),
        Field::new("y", DataType::Int32, true),
    ]);
    let points = StructArray::new(
        point.clone(),
        vec![
            Arc::new(Int32Array::from((0..9).collect::<Vec<_>>())) as ArrayRef,
            Arc::new(Int32Array::from(
                (0..9).map(|v: i32| -v).collect::<Vec<_>>(),
            )),
        ],
        None,
    );
    let point_field = Arc::new(Field::new("item", DataType::Struct(point), true));
    let points = ListArray::new(
        point_field.clone(),
        OffsetBuffer::from_lengths([1, 2, 0, 3, 1, 2]),
        Arc::new(points),
        None,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("tags", tags.data_type().clone(), true),
        Field::new("attrs", attrs.data_type().clone(), true),
        Field::new("points", DataType::List(point_field), true),
        Field::new("part", DataType::Int64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from((0..6).collect::<Vec<_>>())),
            Arc::new(tags),
            Arc::new(attrs),
            Arc::new(points),
            Arc::new(Int64Array::from(vec![1, 1, 1, 2, 2, 2])),
        ],
    )
    .unwrap();

    let store = memory();
    let root = Path::from("nested");
    let mut table = TableWriter::builder(store.clone(), root.clone(), schema)
        .with_partition_columns(["part"])
        .with_column_mapping(ColumnMappingMode::Id)
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    let commit = table.append(&batch).await.unwrap();
    for (file, range) in commit.added.iter().zip([0..3, 3..6]) {
        let location = dar_log::file_index::resolve_path(&root, &file.path).unwrap();
        let read = read_parquet(&store, &location).await;
        let expected = table
            .physical_batch(&batch.slice(range.start, range.len()))
            .unwrap();
        for i in 0..expected.num_columns() {
            assert_eq!(
                read.column(i).as_ref(),
                expected.column(i).as_ref(),
                "column {i}"
            );
        }
    }
    table
        .delete_rows(&commit.added[1].path, &[0, 2], DvStorage::File)
        .await
        .unwrap();
    table.checkpoint().await.unwrap();

    let snapshot = dar_log::Snapshot::load(store, root).await.unwrap();
    assert_eq!(snapshot.version(), 2);
    assert_eq!(snapshot.num_files(), 2);
    assert_eq!(
        snapshot.column_mapping_mode(),
        dar_log::schema::ColumnMappingMode::Id
    );
    let arrow = snapshot.arrow_schema().unwrap();
    assert_eq!(
        arrow
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>(),
        ["id", "tags", "attrs", "points", "part"]
    );
    let index = snapshot.file_index().unwrap();
    let dvs = (0..index.len())
        .filter_map(|i| index.deletion_vector(i).unwrap())
        .map(|dv| dv.cardinality())
        .collect::<Vec<_>>();
    assert_eq!(dvs, [2]);
}

/// Brute force, as a reference reader would do it: every live file read
/// with arrow-rs, its DV (from the log, through dar-log) applied, against
/// the kit's own record of the rows.
#[tokio::test]
async fn random_tables_read_back_as_their_snapshot_rows() {
    use dar_testkit::random::{RandomTableOptions, write_random_table};

    let mut seen_dv_files = 0;
    for seed in 0..24u64 {
        let store = memory();
        let root = Path::from(format!("random/{seed}"));
        let options = RandomTableOptions::default()
            .with_column_mapping(true)
            .with_partitioned(seed % 4 != 0);
        let table = write_random_table(store.clone(), root.clone(), seed, &options)
            .await
            .unwrap();
        let expected = table
            .physical_batch(&table.snapshot_rows().unwrap())
            .unwrap();
        assert_eq!(expected.num_rows() as u64, table.live_rows(), "seed {seed}");

        let snapshot = dar_log::Snapshot::load(store.clone(), root.clone())
            .await
            .unwrap();
        assert_eq!(snapshot.version(), table.version(), "seed {seed}");
        let index = snapshot.file_index().unwrap();
        let mut order: Vec<usize> = (0..index.len()).collect();
        order.sort_by_key(|&i| index.path.value(i));
        let root_url = url::Url::parse(&format!("memory:///{root}/")).unwrap();
        let mut parts = Vec::new();
        for i in order {
            let location = dar_log::file_index::resolve_path(&root, index.path.value(i)).unwrap();
            let rows = read_parquet(&store, &location).await;
            let part = match index.deletion_vector(i).unwrap() {
                None => rows,
                Some(dv) => {
                    let deleted = match dv.file_url(&root_url).unwrap() {
                        None => dar_dv::decode_inline(&dv).unwrap(),
                        Some(url) => {
                            seen_dv_files += 1;
                            let path = Path::from_url_path(url.path()).unwrap();
                            dar_dv::decode_file_bytes(
                                &dv,
                                path.as_ref(),
                                0,
                                &read(&store, &path).await,
                            )
                            .unwrap()
                        }
                    };
                    let keep = deleted.mask(0..rows.num_rows() as u64);
                    arrow_select::filter::filter_record_batch(&rows, &keep).unwrap()
                }
            };
            parts.push(part);
        }
        assert_eq!(parts.len(), table.files().count(), "seed {seed}");
        for (c, field) in expected.schema().fields().iter().enumerate() {
            let column: Vec<&dyn Array> = parts.iter().map(|p| p.column(c).as_ref()).collect();
            let got = arrow_select::concat::concat(&column).unwrap();
            assert_eq!(
                got.as_ref(),
                expected.column(c).as_ref(),
                "seed {seed}, column {}",
                field.name()
            );
        }
    }
    assert!(seen_dv_files > 0, "some seeds put DVs in files");
}
