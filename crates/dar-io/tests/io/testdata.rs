//! Real Delta tables from the shared test data (read in place): every data
//! file through the planned reader equals parquet's own reader, and the
//! metered classes match the table's layout.

use arrow_array::RecordBatch;
use dar_io::{ObjectClass, StorageOptions, TableStore};
use futures::TryStreamExt;
use object_store::{ObjectMeta, ObjectStoreExt};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::PageIndexPolicy;

async fn list(table: &TableStore) -> Vec<ObjectMeta> {
    let mut v: Vec<ObjectMeta> = table
        .store()
        .list(Some(table.root()))
        .try_collect()
        .await
        .unwrap();
    v.sort_by(|a, b| a.location.cmp(&b.location));
    v
}

#[tokio::test]
async fn dv_table_objects_are_classified_and_data_files_read_exactly() {
    let Some(dir) = dar_testdata::table("kernel/table-with-dv-small") else {
        return;
    };
    let table = TableStore::open(dir.to_str().unwrap(), StorageOptions::new()).unwrap();
    let objects = list(&table).await;
    let (mut logs, mut dvs, mut data) = (0u64, 0u64, Vec::new());
    for o in &objects {
        let rel = o.location.as_ref();
        match ObjectClass::classify(&o.location) {
            ObjectClass::Log => {
                logs += 1;
                let body = table
                    .store()
                    .get(&o.location)
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
                assert_eq!(body.len() as u64, o.size, "{rel}");
            }
            ObjectClass::DeletionVector => {
                dvs += 1;
                let body = table
                    .store()
                    .get_range(&o.location, 0..o.size)
                    .await
                    .unwrap();
                assert_eq!(body.len() as u64, o.size, "{rel}");
            }
            ObjectClass::PageData => data.push(o.clone()),
            _ => {}
        }
    }
    assert!(logs >= 2 && dvs >= 1 && !data.is_empty(), "{objects:?}");
    let s = table.metrics().snapshot();
    assert_eq!(s.class(ObjectClass::Log).requests, logs);
    assert_eq!(s.class(ObjectClass::DeletionVector).requests, dvs);
    assert_eq!(s.lists, 1);

    for o in &data {
        let ours = read_ours(&table, o).await;
        let file = std::fs::File::open(dir.join(o.location.filename().unwrap())).unwrap();
        let theirs: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(concat(&ours), concat(&theirs), "{}", o.location);
    }
    // Every data file's footer was fetched once (footer class), cached after.
    let s = table.metrics().snapshot();
    assert_eq!(s.class(ObjectClass::Footer).requests, data.len() as u64);
    assert_eq!(table.metadata_cache().stats().entries, data.len());
}

async fn read_ours(table: &TableStore, o: &ObjectMeta) -> Vec<RecordBatch> {
    let reader = table.parquet_reader(o.location.clone(), Some(o.size));
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    ParquetRecordBatchStreamBuilder::new_with_options(reader, options)
        .await
        .unwrap()
        .build()
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

fn concat(batches: &[RecordBatch]) -> Option<RecordBatch> {
    let schema = batches.first()?.schema();
    Some(arrow_select::concat::concat_batches(&schema, batches).unwrap())
}
