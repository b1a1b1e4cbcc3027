//! The reader over object_store's ThrottledStore (emulated latency and
//! per-request bandwidth): request counts per range strategy.

use std::sync::Arc;
use std::time::Duration;

use dar_io::{CostParams, ObjectClass, RangeStrategy, StorageOptions, TableStore};
use object_store::memory::InMemory;
use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::{ObjectStore, ObjectStoreExt};

use crate::common::*;

async fn throttled_table(params: CostParams) -> (TableStore, u64) {
    let inner = InMemory::new();
    let data = parquet_file();
    let size = data.len() as u64;
    inner
        .put(
            &object_store::path::Path::from("t/part-0.parquet"),
            data.into(),
        )
        .await
        .unwrap();
    let config = ThrottleConfig {
        wait_get_per_call: Duration::from_millis(5),
        ..Default::default()
    };
    let store: Arc<dyn ObjectStore> = Arc::new(ThrottledStore::new(inner, config));
    let table = TableStore::builder("memory://t")
        .with_options(StorageOptions::new())
        .with_store(store)
        .with_cost_params(params)
        .build()
        .unwrap();
    (table, size)
}

async fn page_requests(params: CostParams, strategy: RangeStrategy) -> (u64, u64) {
    let (table, size) = throttled_table(params).await;
    let (sel, want) = selection();
    let r = table
        .parquet_reader(table.child("part-0.parquet"), Some(size))
        .with_range_strategy(strategy);
    assert_eq!(scan(r, Some(sel)).await.unwrap(), want);
    let s = table.metrics().snapshot();
    assert_eq!(s.class(ObjectClass::Footer).requests, 1);
    (
        s.class(ObjectClass::PageData).requests,
        s.class(ObjectClass::PageData).bytes,
    )
}

#[tokio::test]
async fn planner_issues_one_request_per_row_group_when_requests_are_costly() {
    // One lane and a high per-request cost: every row group's selected pages
    // (two pages in each of three columns) merge into one GET.
    let serial = CostParams::remote()
        .with_request_latency(Duration::from_millis(5))
        .with_max_concurrency(1)
        .with_max_amplification(100.0)
        .with_min_split_bytes(u64::MAX);
    let (planned, planned_bytes) = page_requests(serial, RangeStrategy::Planned).await;
    assert_eq!(planned, 4, "one GET per row group");

    // Exact ranges: one GET per selected page (2 pages x 3 columns x 4 row groups).
    let (exact, exact_bytes) = page_requests(
        CostParams::remote(),
        RangeStrategy::Exact { concurrency: 10 },
    )
    .await;
    assert_eq!(exact, 24);
    assert!(exact_bytes <= planned_bytes);

    // object_store's default coalescing merges the 1 MiB-close pages too.
    let (coalesced, _) = page_requests(
        CostParams::remote(),
        RangeStrategy::Coalesce {
            max_gap: object_store::OBJECT_STORE_COALESCE_DEFAULT,
        },
    )
    .await;
    assert_eq!(coalesced, 4);
}

#[tokio::test]
async fn planner_keeps_ranges_exact_when_lanes_are_free() {
    // 16 lanes: a row group's ranges run side by side, so merging over gaps
    // only adds bytes. The planner fetches exactly the needed bytes; the two
    // selected pages of a column are adjacent, so they are one GET (12 GETs
    // where exact ranges take 24).
    let (planned, planned_bytes) =
        page_requests(CostParams::remote(), RangeStrategy::Planned).await;
    let (exact, exact_bytes) = page_requests(
        CostParams::remote(),
        RangeStrategy::Exact { concurrency: 16 },
    )
    .await;
    assert_eq!(planned_bytes, exact_bytes);
    assert_eq!((planned, exact), (12, 24));
}

/// A 4 MiB object served by `store` (over `inner`), with the remote
/// defaults a `TableStore` plans with (64 lanes).
async fn store_over(inner: &InMemory, store: Arc<dyn ObjectStore>) -> TableStore {
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
    inner
        .put(&object_store::path::Path::from("t/blob"), data.into())
        .await
        .unwrap();
    TableStore::builder("memory://t")
        .with_options(StorageOptions::new())
        .with_store(store)
        .with_cost_params(CostParams::remote().with_max_concurrency(64))
        .build()
        .unwrap()
}

/// GETs of one read of 24 ranges of 4 KiB, 60 KiB apart (the pages of
/// a column, say), checked byte for byte.
async fn scattered_read(table: &TableStore) -> u64 {
    scattered_read_of(table, 24).await
}

/// GETs of one read of `n` ranges of 4 KiB, 60 KiB apart, checked byte
/// for byte.
async fn scattered_read_of(table: &TableStore, n: u64) -> u64 {
    let before = table.metrics().snapshot();
    let ranges: Vec<std::ops::Range<u64>> = (0..n)
        .map(|i| i * 64 * 1024..i * 64 * 1024 + 4096)
        .collect();
    let got = table
        .fetch_ranges(&table.child("blob"), &ranges, ObjectClass::PageData)
        .await
        .unwrap();
    for (r, b) in ranges.iter().zip(&got) {
        let want: Vec<u8> = (r.start..r.end).map(|i| (i % 251) as u8).collect();
        assert_eq!(b.as_ref(), &want[..]);
    }
    table
        .metrics()
        .snapshot()
        .since(&before)
        .class(ObjectClass::PageData)
        .requests
}

/// The blob served by an emulator's server: 10 ms a request, one at a
/// time (slow enough that a loaded test machine's scheduling is noise
/// next to it).
async fn one_at_a_time_table() -> TableStore {
    let inner = InMemory::new();
    let serial = Arc::new(
        dar_io::testing::FaultStore::new(inner.clone())
            .with_serial_service(Duration::from_millis(10)),
    );
    store_over(&inner, serial).await
}

/// The cost model's parameters, asserted to hold the one-at-a-time
/// server's request cost (about 10 ms; at least half of it).
fn learned_request_cost(table: &TableStore) -> dar_io::CostParams {
    let learned = table.cost_model().params();
    assert!(
        learned.request_cost >= Duration::from_millis(5),
        "{learned:?}"
    );
    learned
}

#[tokio::test]
async fn a_server_that_serves_one_request_at_a_time_is_sent_fewer_larger_requests() {
    // An emulator's server: its latency alone looks cheap next to 64
    // lanes; the queue is what costs.
    let table = one_at_a_time_table().await;
    assert_eq!(scattered_read(&table).await, 24, "one GET a range at first");
    let learned = learned_request_cost(&table);
    // A 60 KiB gap costs 0.6 ms of a 100 MB/s link, a request 10 ms: the
    // gaps are fetched, in a few requests side by side (the model knows
    // no bandwidth of the server's, only its request cost).
    let second = scattered_read(&table).await;
    assert!(second <= 6, "{second} GETs with {learned:?}");

    // A store that serves requests side by side, as slow per request:
    // nothing to learn, the same 24 GETs every time.
    let inner = InMemory::new();
    let config = ThrottleConfig {
        wait_get_per_call: Duration::from_millis(10),
        ..Default::default()
    };
    let parallel = Arc::new(ThrottledStore::new(inner.clone(), config));
    let table = store_over(&inner, parallel).await;
    assert_eq!(scattered_read(&table).await, 24);
    assert_eq!(table.cost_model().params().request_cost, Duration::ZERO);
    assert_eq!(scattered_read(&table).await, 24);
}

#[tokio::test]
async fn a_first_burst_of_eight_requests_teaches_a_one_at_a_time_servers_cost() {
    // A one-shot scan of eight files asks for their footers at once and
    // plans its page reads next: eight requests queued at a server that
    // answers one at a time must be enough to learn its cost.
    let table = one_at_a_time_table().await;
    assert_eq!(scattered_read_of(&table, 8).await, 8);
    let learned = learned_request_cost(&table);
    let second = scattered_read(&table).await;
    assert!(second <= 6, "{second} GETs with {learned:?}");
}
