//! The table's byte-range cache, from the requests scans make: a repeated
//! query on an open table over S3 fetches nothing the first one fetched; a
//! new process with the same cache directory skips footers, DVs, pages and
//! checkpoints; a damaged cache file is fetched again and counted; and every
//! shared table reads the same rows with the cache on and off.

use std::sync::Arc;

use arrow_array::RecordBatch;
use dar_io::testing::S3Server;
use dar_io::{ObjectClass, TableStore};
use dar_scan::{Table, TableOptions};
use futures::TryStreamExt;

use crate::common::{collect, int64s, rows};
use crate::io_shape::{FILES, ROWS, write_wide_dv_table};

/// The four-file table of the I/O-shape test (a DV in each file, all in
/// one DV file, and a checkpoint), uploaded to a fresh S3 server.
async fn table_on_s3() -> (S3Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = write_wide_dv_table(dir.path()).await;
    w.checkpoint().await.unwrap();
    let server = S3Server::start().await.unwrap();
    server.create_bucket("cache").await.unwrap();
    server
        .upload_dir(&dir.path().join("t"), "cache", "t")
        .unwrap();
    (server, dir)
}

async fn open(server: &S3Server, options: TableOptions) -> Table {
    let store = TableStore::builder("s3://cache/t")
        .with_env(Vec::new())
        .with_options(server.storage_options())
        .build()
        .unwrap();
    Table::from_store(store, options).await.unwrap()
}

/// Ids of rows 4,410..=4,420 of every file (through `v0` and `v9`).
async fn selective(t: &Table, column: &str) -> (Vec<i64>, dar_scan::MetricsSnapshot) {
    let plan = t
        .scan()
        .with_columns(["id", column])
        .with_predicate_sql("k BETWEEN 4410 AND 4420")
        .build()
        .unwrap();
    let batches = collect(&plan).await;
    (ids(&batches), plan.metrics().snapshot())
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    let mut ids = int64s(batches, 0);
    ids.sort_unstable();
    ids
}

fn expected_ids() -> Vec<i64> {
    (0..FILES)
        .flat_map(|f| (4_410..=4_420).map(move |k| f * ROWS + k))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_query_on_an_open_table_fetches_nothing_again() {
    let (server, _dir) = table_on_s3().await;
    // Defaults: an S3 table caches in memory.
    let t = open(&server, TableOptions::new()).await;
    let (first, m1) = selective(&t, "v0").await;
    assert_eq!(first, expected_ids());
    assert!(m1.io.class(ObjectClass::PageData).requests > 0, "{m1:?}");
    assert_eq!(m1.io.cache.hits, 0);
    // The first query after opening reads no log object: the table holds
    // its snapshot.
    assert_eq!(m1.io.class(ObjectClass::Log).requests, 0, "{}", m1.io);
    assert_eq!(
        m1.io.class(ObjectClass::Checkpoint).requests,
        0,
        "{}",
        m1.io
    );
    assert_eq!(m1.io.lists, 0);

    let (second, m2) = selective(&t, "v0").await;
    assert_eq!(second, first);
    // No request of any kind: footers (parsed cache), the DV (DV cache),
    // pages (range cache), and no log read.
    assert_eq!(m2.io.requests(), 0, "{:?}", m2.io);
    assert_eq!(m2.io.lists, 0);
    assert!(m2.io.cache.hits > 0);
    assert_eq!(m2.io.cache.misses, 0);

    // Another column: only its pages are fetched, the shared ones are not.
    let (third, m3) = selective(&t, "v9").await;
    assert_eq!(third, first);
    let pages = m3.io.class(ObjectClass::PageData);
    assert!(pages.requests > 0 && m3.io.cache.hits > 0, "{m3:?}");
    assert!(
        pages.bytes < m1.io.class(ObjectClass::PageData).bytes,
        "{m3:?} vs {m1:?}"
    );

    // Off: every query fetches its pages.
    let off = open(&server, TableOptions::new().with_data_cache_bytes(0)).await;
    selective(&off, "v0").await;
    let (_, m) = selective(&off, "v0").await;
    assert!(m.io.class(ObjectClass::PageData).requests > 0);
    assert_eq!(m.io.cache.hits + m.io.cache.misses, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_process_reads_what_the_cache_dir_holds_and_refetches_damage() {
    let (server, _dir) = table_on_s3().await;
    let cache = tempfile::tempdir().unwrap();
    let options = || {
        TableOptions::new()
            .with_data_cache_bytes(0)
            .with_cache_dir(cache.path())
    };
    let t = open(&server, options()).await;
    assert!(t.store().range_cache().disk_dir().is_some());
    let (first, _) = selective(&t, "v0").await;
    assert_eq!(first, expected_ids());
    // Entries are written in the background, after the rows went out.
    t.store().range_cache().flush().await;

    // A table opened anew (as another process would) over the directory.
    let io_before = {
        let t = open(&server, options()).await;
        let open_io = t.store().metrics().snapshot();
        // The checkpoint comes from the directory; only the log is read
        // (and, as this S3 server lists no ETags, the checkpoint's current
        // version asked by HEAD).
        assert_eq!(open_io.class(ObjectClass::Checkpoint).bytes, 0, "{open_io}");
        assert!(open_io.cache.disk_hits > 0);
        let (again, m) = selective(&t, "v0").await;
        assert_eq!(again, first);
        // No byte of a footer, page or DV is fetched: the one request per
        // object is the HEAD that checks it is the version the entries hold.
        let mut requests = 0;
        for class in [
            ObjectClass::Footer,
            ObjectClass::PageData,
            ObjectClass::DeletionVector,
        ] {
            assert_eq!(m.io.class(class).bytes, 0, "{class:?}: {}", m.io);
            requests += m.io.class(class).requests;
        }
        assert_eq!(requests, m.io.cache.validations, "{}", m.io);
        assert!(m.io.cache.disk_hits > 0);
        t.store().metrics().snapshot()
    };
    assert_eq!(io_before.cache.corrupt, 0);

    // Damage every cache file: the next process gets the right rows,
    // fetches again and reports each damaged file it met.
    let mut damaged = 0;
    let namespace = cache.path().join(dar_io::RangeCache::NAMESPACE);
    for f in dar_io::testing::files_under(&namespace) {
        if !std::fs::read(&f).unwrap().starts_with(b"DARCACHE") {
            continue;
        }
        let len = std::fs::metadata(&f).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .unwrap()
            .set_len(len - 1)
            .unwrap();
        damaged += 1;
    }
    assert!(damaged > 0);
    let t = open(&server, options()).await;
    let (again, m) = selective(&t, "v0").await;
    assert_eq!(again, first);
    let all = t.store().metrics().snapshot();
    assert!(all.cache.corrupt > 0, "{all}");
    assert_eq!(all.cache.disk_hits, 0, "{all}");
    assert!(m.io.class(ObjectClass::PageData).requests > 0);
}

/// Where the listing gives ETags (the local file system, S3, Azure), a
/// checkpoint part is served from the cache folder under the listing's
/// tag: a new process opening the table asks the store nothing about it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_checkpoint_is_served_from_the_cache_dir_without_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = write_wide_dv_table(dir.path()).await;
    w.checkpoint().await.unwrap();
    let cache = tempfile::tempdir().unwrap();
    let uri = dir.path().join("t");
    let open = || {
        Table::open_with(
            uri.to_str().unwrap(),
            TableOptions::new().with_cache_dir(cache.path()),
        )
    };
    let first = open().await.unwrap();
    assert!(
        first
            .store()
            .metrics()
            .snapshot()
            .class(ObjectClass::Checkpoint)
            .requests
            > 0
    );
    drop(first);
    let second = open().await.unwrap();
    let io = second.store().metrics().snapshot();
    assert_eq!(io.class(ObjectClass::Checkpoint).requests, 0, "{io}");
    assert!(io.cache.disk_hits > 0, "{io}");
    assert_eq!(io.cache.validations, 0, "{io}");
}

/// Every shared table that dar reads, at its latest version: the rows of
/// a full scan are the same without a cache, and twice with one (memory
/// and disk; the second scan served from it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shared_table_reads_the_same_rows_with_the_cache_on_and_off() {
    let Some(root) = dar_testdata::root() else {
        return;
    };
    let mut read = 0;
    for group in ["dat", "kernel", "kernel/partition_cm"] {
        for e in std::fs::read_dir(root.join(group)).unwrap() {
            let p = e.unwrap().path();
            let table = if group == "dat" { p.join("delta") } else { p };
            if !table.join("_delta_log").is_dir() {
                continue;
            }
            let uri = table.to_str().unwrap();
            let Ok(off) = Table::open_with(uri, TableOptions::new().with_data_cache_bytes(0)).await
            else {
                continue;
            };
            let plan = off.scan().build().unwrap();
            // Some tables lack their data files (log-only): not readable
            // either way.
            let Ok(batches) = plan.execute().try_collect::<Vec<_>>().await else {
                continue;
            };
            let want = rows(&batches);
            let cache = tempfile::tempdir().unwrap();
            let on = Table::open_with(
                uri,
                TableOptions::new()
                    .with_data_cache_bytes(64 << 20)
                    .with_cache_dir(cache.path()),
            )
            .await
            .unwrap();
            for round in 0..2 {
                let plan = on.scan().build().unwrap();
                let got = rows(&collect(&plan).await);
                assert_eq!(got, want, "{uri}, cached scan {round}");
                let m = plan.metrics().snapshot();
                if round == 1 {
                    assert_eq!(
                        m.io.class(ObjectClass::PageData).requests,
                        0,
                        "{uri}: {}",
                        m.io
                    );
                }
            }
            read += 1;
        }
    }
    assert!(read >= 35, "only {read} shared tables were read");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_scans_keep_the_cache_within_its_budget() {
    let (server, _dir) = table_on_s3().await;
    // Less than the table's pages: entries are evicted while scans run.
    let budget = 2 << 20;
    let t = open(&server, TableOptions::new().with_data_cache_bytes(budget)).await;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let (t, done) = (t.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            let mut most = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                most = most.max(t.store().range_cache().usage().memory_bytes);
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
            most
        })
    };
    let scans = (0..8).map(|i| {
        let t = t.clone();
        tokio::spawn(async move {
            let column = format!("v{}", i % 10);
            let plan = t
                .scan()
                .with_columns(["id", column.as_str()])
                .build()
                .unwrap();
            let batches = collect(&plan).await;
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            assert_eq!(rows as i64, FILES * (ROWS - 1));
        })
    });
    for s in futures::future::join_all(scans).await {
        s.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let most = watch.await.unwrap();
    assert!(most <= budget, "{most} > {budget}");
    let usage = t.store().range_cache().usage();
    assert!(
        usage.memory_bytes <= budget && usage.memory_bytes > 0,
        "{usage:?}"
    );
    assert!(t.store().metrics().snapshot().cache.evictions > 0);
}
