//! A long change range streams: 10,000 commits whose rows would take about
//! 340 MiB as Arrow arrays are read with the process's peak resident memory
//! growing by far less (about 30 MiB). A test binary of its own, so that no other test
//! shares the process whose peak is measured.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::{ChangeBound, Table};
use dar_testkit::HandTable;
use futures::StreamExt;
use serde_json::json;

const COMMITS: usize = 10_000;
const ROWS: usize = 250;

/// The peak resident set size of this process (Linux `VmHWM`), bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_range_streams_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = HandTable::new(dir.path()).unwrap();
    // One data file of 250 rows of ~100-byte strings (unique, so not
    // dictionary-encoded), added by every commit: each commit inserts its
    // rows again.
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (0..ROWS as i64).collect();
    let strings: Vec<String> = ids.iter().map(|i| format!("{i:0>100}")).collect();
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(strings)),
        ],
    )
    .unwrap();
    let size = t.write_parquet("f.parquet", &batch).unwrap();
    let fields = json!([
        HandTable::field("id", json!("long"), json!({})),
        HandTable::field("s", json!("string"), json!({})),
    ]);
    let stats = json!({"numRecords": ROWS});
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(fields, &[], json!({"delta.enableChangeDataFeed": "true"})),
        HandTable::add("f.parquet", size, json!({}), Some(stats.clone())),
    ])
    .unwrap();
    for _ in 1..COMMITS {
        t.commit(&[HandTable::add(
            "f.parquet",
            size,
            json!({}),
            Some(stats.clone()),
        )])
        .unwrap();
    }
    let Some(before) = peak_rss() else {
        eprintln!("SKIPPED: no /proc/self/status on this platform");
        return;
    };
    let table = Table::open(&t.uri()).await.unwrap();
    let plan = table
        .changes(ChangeBound::Version(0), None)
        .build()
        .await
        .unwrap();
    assert_eq!(plan.tasks().len(), COMMITS);
    let mut stream = plan.execute();
    let (mut rows, mut bytes, mut versions) = (0usize, 0usize, std::collections::BTreeSet::new());
    while let Some(b) = stream.next().await {
        let b = b.unwrap();
        rows += b.num_rows();
        bytes += b.get_array_memory_size();
        let v = b
            .column_by_name("_commit_version")
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        versions.extend(v.values().iter().copied());
    }
    assert_eq!(rows, COMMITS * ROWS);
    assert_eq!(versions.len(), COMMITS);
    let growth = peak_rss().unwrap().saturating_sub(before);
    // Every row held at once would be ~340 MiB of arrays; the scan holds
    // the read-ahead budget (32 MiB), the files in flight and the plan's
    // 10,000 tasks.
    assert!(
        bytes > 200 << 20,
        "the range is big enough to tell: {bytes}"
    );
    assert!(
        growth < 120 << 20,
        "peak RSS grew by {} MiB for {} MiB of rows",
        growth >> 20,
        bytes >> 20
    );
    eprintln!(
        "{COMMITS} commits, {} MiB of rows streamed, peak RSS +{} MiB",
        bytes >> 20,
        growth >> 20
    );
}
