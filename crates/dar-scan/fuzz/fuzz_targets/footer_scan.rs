//! Arbitrary bytes as the one data file of a table, read by a full scan and
//! a filtered one: rows, or an error of a kind that blames the input (the
//! log, the file), the scan's errors naming the file. dar failing is a
//! finding: an error of kind `Internal` (a decoder task that stopped, an
//! Arrow kernel failing on batches dar built), and any panic, on the
//! calling thread or in a spawned decoder task (libfuzzer's panic hook
//! aborts the process on a panic in any thread; nothing here silences it).
#![no_main]

use std::sync::Arc;

use bytes::Bytes;
use dar_scan::{ErrorKind, ScanError, Table, TableOptions};
use futures::TryStreamExt;
use libfuzzer_sys::fuzz_target;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

const LOG: &str = r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"fuzz","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":0}}
"#;

/// The value, or `None` for an error that blames the input; an internal
/// error is dar's bug, a finding.
fn judged<T>(result: Result<T, ScanError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if e.kind() == ErrorKind::Internal => panic!("internal error: {e}"),
        Err(_) => None,
    }
}

fuzz_target!(|data: &[u8]| {
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
        let Some(table) = judged(Table::from_store(table_store, TableOptions::new()).await) else {
            return;
        };
        for filter in [None, Some("a > 3 AND s LIKE 'x%'")] {
            let mut scan = table.scan();
            if let Some(f) = filter {
                scan = scan.with_predicate_sql(f);
            }
            let Some(plan) = judged(scan.build()) else {
                continue;
            };
            let read = plan.execute().try_collect::<Vec<_>>().await;
            if let Err(e) = &read {
                let text = e.to_string();
                assert!(text.contains("p.parquet"), "an error not naming the file: {text}");
            }
            judged(read);
        }
    });
});
