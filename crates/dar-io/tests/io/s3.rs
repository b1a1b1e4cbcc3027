//! The reader against a real S3 server (s3s-fs on 127.0.0.1), including
//! options from the caller and from `AWS_*` variables.

use dar_io::{ObjectClass, RetryPolicy, StorageOptions, TableStore, TableStoreBuilder};
use object_store::ObjectStoreExt;

use crate::common::*;

fn builder(uri: &str) -> TableStoreBuilder {
    // Never pick up the developer's real AWS_* variables.
    TableStore::builder(uri).with_env(Vec::new())
}

/// The whole object at `path`.
async fn get_all(table: &TableStore, path: &object_store::path::Path) -> bytes::Bytes {
    table
        .store()
        .get(path)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reader_over_s3_with_exact_request_counts() {
    let server = start_s3("dar-bucket").await;
    let table = builder("s3://dar-bucket/tables/t1")
        .with_options(server.storage_options())
        .build()
        .unwrap();
    let data = parquet_file();
    let size = data.len() as u64;
    let path = table.child("part-0.parquet");
    assert_eq!(path.as_ref(), "tables/t1/part-0.parquet");
    table.store().put(&path, data.into()).await.unwrap();
    let head = table.store().head(&path).await.unwrap();
    assert_eq!(head.size, size);

    // A bounded probe at open: 3 small GETs + 1 MiB, and the model learns
    // loopback latency (far below the 50 ms remote default).
    let before = table.metrics().snapshot();
    let obs = table
        .probe(&path, size, dar_io::ProbeBudget::default())
        .await
        .unwrap();
    assert_eq!(obs.len(), 4);
    assert_eq!(table.metrics().snapshot().since(&before).requests(), 4);
    assert!(
        table.cost_model().params().request_latency < std::time::Duration::from_millis(50),
        "{:?}",
        table.cost_model().params()
    );
    let before = table.metrics().snapshot();

    // Full scan: one footer request, then page reads; rows exact.
    let got = scan(table.parquet_reader(path.clone(), Some(size)), None)
        .await
        .unwrap();
    assert_eq!(got, full_result());
    let s = table.metrics().snapshot().since(&before);
    assert_eq!(s.class(ObjectClass::Footer).requests, 1);
    assert_eq!(s.class(ObjectClass::Footer).bytes, 64 * 1024);
    assert_eq!(s.class(ObjectClass::PageData).errors, 0);

    // Selected pages, footer cached: page requests only.
    let (sel, want) = selection();
    let before = table.metrics().snapshot();
    let got = scan(table.parquet_reader(path.clone(), Some(size)), Some(sel))
        .await
        .unwrap();
    assert_eq!(got, want);
    let s2 = table.metrics().snapshot().since(&before);
    assert_eq!(s2.class(ObjectClass::Footer).requests, 0);
    assert!(s2.class(ObjectClass::PageData).bytes < s.class(ObjectClass::PageData).bytes);

    // A whole-object read below the threshold: exactly one request.
    let before = table.metrics().snapshot();
    let r = table
        .parquet_reader(path.clone(), Some(size))
        .with_cache(None)
        .with_whole_object_threshold(size);
    assert_eq!(scan(r, None).await.unwrap(), full_result());
    assert_eq!(table.metrics().snapshot().since(&before).requests(), 1);

    // The cost model learned from the real server (median of observations).
    assert!(table.cost_model().sample_counts().0 >= 3);

    // Missing object: an error naming it.
    let err = scan(
        table.parquet_reader(table.child("nope.parquet"), None),
        None,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("nope.parquet"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aws_environment_variables_configure_the_store() {
    let server = start_s3("env-bucket").await;
    let env = server.env();
    let table = TableStore::builder("s3://env-bucket/t")
        .with_env(env)
        .build()
        .unwrap();
    let path = table.child("x.json");
    table.store().put(&path, "{}".into()).await.unwrap();
    assert_eq!(&get_all(&table, &path).await[..], b"{}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_fail_without_leaking_them() {
    let server = start_s3("auth-bucket").await;
    let wrong = "WRONG-secret-that-must-not-print";
    let table = builder("s3://auth-bucket/t")
        .with_options(
            server
                .storage_options()
                .with("aws_secret_access_key", wrong),
        )
        .with_retry(RetryPolicy::default().with_max_attempts(1))
        .build()
        .unwrap();
    let err = table.store().get(&table.child("a.json")).await.unwrap_err();
    let msg = format!("{err} {err:?} {table:?}");
    assert!(!msg.contains(wrong), "{msg}");
    assert!(!msg.contains(S3Server::SECRET_KEY), "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn virtual_hosted_style_is_an_option() {
    // s3s-fs here serves path-style only; the option must at least be
    // accepted and change the request URL (the request then fails, naming
    // the object).
    let server = start_s3("vh-bucket").await;
    let table = builder("s3://vh-bucket/t")
        .with_options(
            server
                .storage_options()
                .with("aws_virtual_hosted_style_request", "true"),
        )
        .with_retry(RetryPolicy::default().with_max_attempts(1))
        .build()
        .unwrap();
    let err = table.store().get(&table.child("a.json")).await.unwrap_err();
    assert!(err.to_string().contains("a.json"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn footer_hint_is_clamped_to_small_objects() {
    // s3s-fs answers 500 to a suffix range longer than the object; the
    // reader knows the size and sends a bounded range of exactly the object.
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    let server = start_s3("small-bucket").await;
    let table = builder("s3://small-bucket/t")
        .with_options(server.storage_options())
        .build()
        .unwrap();
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from_iter_values(0..100)) as _)])
            .unwrap();
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let size = buf.len() as u64;
    assert!(size < 64 * 1024);
    let path = table.child("small.parquet");
    table.store().put(&path, buf.into()).await.unwrap();
    let before = table.metrics().snapshot();
    let r = table
        .parquet_reader(path, Some(size))
        .with_whole_object_threshold(0);
    let got = scan(r, None).await.unwrap();
    assert_eq!(got.rows, 100);
    assert_eq!(got.id_sum, 4950);
    let s = table.metrics().snapshot().since(&before);
    assert_eq!(s.class(ObjectClass::Footer).requests, 1);
    assert_eq!(s.class(ObjectClass::Footer).bytes, size);
    assert_eq!(s.class(ObjectClass::Footer).errors, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploaded_directory_is_served_under_its_prefix() {
    let server = start_s3("up-bucket").await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("_delta_log")).unwrap();
    std::fs::write(dir.path().join("_delta_log/0.json"), b"{\"a\":1}\n").unwrap();
    std::fs::write(dir.path().join("part-0.parquet"), b"PAR1").unwrap();
    server
        .upload_dir(dir.path(), "up-bucket", "tables/t")
        .unwrap();

    let table = builder("s3://up-bucket/tables/t")
        .with_options(server.storage_options())
        .build()
        .unwrap();
    let log = table.child("_delta_log/0.json");
    assert_eq!(&get_all(&table, &log).await[..], b"{\"a\":1}\n");
    let head = table
        .store()
        .head(&table.child("part-0.parquet"))
        .await
        .unwrap();
    assert_eq!(head.size, 4);

    let err = server
        .upload_dir(dir.path(), "no-such-bucket", "t")
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    assert!(err.to_string().contains("no-such-bucket"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_endpoint_fails_fast_naming_it() {
    // A port nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let table = builder("s3://refused-bucket/t")
        .with_options(
            StorageOptions::new()
                .with("aws_endpoint", &endpoint)
                .with("aws_allow_http", "true")
                .with("aws_region", S3Server::REGION)
                .with("aws_access_key_id", S3Server::ACCESS_KEY)
                .with("aws_secret_access_key", S3Server::SECRET_KEY),
        )
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let err = table.store().get(&table.child("a.json")).await.unwrap_err();
    let took = started.elapsed();
    let msg = err.to_string();
    assert!(took < std::time::Duration::from_secs(3), "{took:?}: {msg}");
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
    assert!(msg.contains("a.json"), "{msg}");
    // object_store's retries per the default policy (3), and nothing on
    // top: dar's layers see one request.
    assert!(msg.contains("after 3 retries"), "{msg}");
    assert_eq!(table.metrics().snapshot().requests(), 1, "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_error_is_not_retried() {
    let server = start_s3("forbidden-bucket").await;
    let table = builder("s3://forbidden-bucket/t")
        .with_options(
            server
                .storage_options()
                .with("aws_secret_access_key", "wrong"),
        )
        .build()
        .unwrap();
    let err = table.store().get(&table.child("a.json")).await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("a.json") && msg.contains("403"), "{msg}");
    assert!(!msg.contains("retries"), "a 4xx is not retried: {msg}");
    assert_eq!(table.metrics().snapshot().requests(), 1, "{msg}");
}

#[test]
fn an_unparsable_option_value_is_never_echoed() {
    let err = builder("s3://b/t")
        .with_options(StorageOptions::new().with("aws_allow_http", "maybe-SECRETISH"))
        .build()
        .unwrap_err()
        .to_string();
    assert!(!err.contains("maybe-SECRETISH"), "{err}");
    assert!(err.contains("s3://b/t"), "{err}");
}

/// Two S3-compatible endpoints hold an object at the same bucket, path
/// and size with other contents: readers sharing one footer cache (and one
/// byte-range cache) each get their own store's footer and bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_endpoints_with_one_bucket_and_path_share_no_cache_entry() {
    let footers = dar_io::MetadataCache::default();
    let ranges = dar_io::RangeCache::new(64 << 20);
    let mut servers = Vec::new();
    let mut tables = Vec::new();
    for offset in [0, 1_000_000] {
        let server = start_s3("same-bucket").await;
        let table = builder("s3://same-bucket/t")
            .with_options(server.storage_options())
            .with_metadata_cache(footers.clone())
            .with_range_cache(ranges.clone())
            .build()
            .unwrap();
        let data = parquet_file_from(offset);
        table
            .store()
            .put(&table.child("part-0.parquet"), data.into())
            .await
            .unwrap();
        servers.push(server);
        tables.push(table);
    }
    let size = |t: &TableStore| {
        let t = t.clone();
        async move {
            t.store()
                .head(&t.child("part-0.parquet"))
                .await
                .unwrap()
                .size
        }
    };
    let (a, b) = (size(&tables[0]).await, size(&tables[1]).await);
    assert_eq!(
        a, b,
        "the two files must have one size for the test to mean anything"
    );
    let mut minimums = Vec::new();
    for t in &tables {
        let md = t
            .parquet_reader(t.child("part-0.parquet"), Some(a))
            .load_metadata(None)
            .await
            .unwrap();
        let stats = md.row_group(0).column(0).statistics().unwrap();
        minimums.push(stats.min_bytes_opt().unwrap().to_vec());
        let got = scan(t.parquet_reader(t.child("part-0.parquet"), Some(a)), None)
            .await
            .unwrap();
        minimums.push(got.id_sum.to_le_bytes().to_vec());
    }
    assert_ne!(
        minimums[0], minimums[2],
        "footer of the other endpoint served"
    );
    assert_ne!(
        minimums[1], minimums[3],
        "bytes of the other endpoint served"
    );
    assert_eq!(footers.stats().entries, 2);
}
