//! Arbitrary bytes as the one data file of a table, read by a full scan and
//! a filtered one: rows, or an error naming the file — never a panic on
//! the calling thread, never an abort (a stack overflow from a deep
//! footer once was one). Panics inside parquet's decoder on a spawned
//! decode task are dar's `TaskFailed` error, so the default panic report
//! is silenced and only an unwinding panic here counts as a crash.
#![no_main]

use std::sync::Arc;

use bytes::Bytes;
use dar_scan::{Table, TableOptions};
use futures::TryStreamExt;
use libfuzzer_sys::fuzz_target;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

const LOG: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"fuzz","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":0}}
"#;

fuzz_target!(|data: &[u8]| {
    std::panic::set_hook(Box::new(|_| {}));
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        return;
    };
    let data = Bytes::copy_from_slice(data);
    rt.block_on(async move {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let add = format!(
            "{{\"add\":{{\"path\":\"p.parquet\",\"partitionValues\":{{}},\"size\":{},\"modificationTime\":0,\"dataChange\":true}}}}\n",
            data.len()
        );
        let log = format!("{LOG}{add}");
        let _ = store
            .put(&Path::from("t/_delta_log/00000000000000000000.json"), PutPayload::from(log))
            .await;
        let _ = store.put(&Path::from("t/p.parquet"), PutPayload::from(data)).await;
        let Ok(table_store) = dar_io::TableStore::builder("memory://t").with_store(store).build() else {
            return;
        };
        let Ok(table) = Table::from_store(table_store, TableOptions::new()).await else {
            return;
        };
        for filter in [None, Some("a > 3 AND s LIKE 'x%'")] {
            let mut scan = table.scan();
            if let Some(f) = filter {
                scan = scan.with_predicate_sql(f);
            }
            if let Ok(plan) = scan.build() {
                let _ = plan.execute().try_collect::<Vec<_>>().await;
            }
        }
    });
});
