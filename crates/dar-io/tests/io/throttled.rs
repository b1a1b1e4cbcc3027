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
