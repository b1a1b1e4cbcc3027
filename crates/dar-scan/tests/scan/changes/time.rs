//! Commit timestamps: timestamp bounds resolved to commits, in-commit
//! timestamps, and each commit's own kind of timestamp where in-commit
//! timestamps were switched on and off.

use super::*;
use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use serde_json::Value;

/// Timestamps: a start resolves to the first commit at or after it, an end
/// to the last commit at or before it; `_commit_timestamp` is the commit's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamps_resolve_to_commits() {
    let Some(path) = table_path("kernel/cdf-table-simple") else {
        return;
    };
    let table = open(&path).await;
    let all = collect(&table.changes(v(0), None).build().await.unwrap()).await;
    // Commit timestamp of each version, from the feed itself.
    let mut ts = std::collections::BTreeMap::new();
    for b in &all {
        let versions = b
            .column_by_name("_commit_version")
            .unwrap()
            .as_primitive::<Int64Type>();
        let times = b
            .column_by_name("_commit_timestamp")
            .unwrap()
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        assert_eq!(times.null_count(), 0);
        for i in 0..b.num_rows() {
            let prev = ts.insert(versions.value(i), times.value(i) / 1000);
            assert!(prev.is_none_or(|p| p == times.value(i) / 1000));
        }
    }
    assert_eq!(ts.len(), 3);
    let (t0, t1, t2) = (ts[&0], ts[&1], ts[&2]);
    assert!(t0 < t1 && t1 < t2, "monotonized: {ts:?}");
    let versions_of = |batches: Vec<RecordBatch>| {
        let mut v: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                b.column_by_name("_commit_version")
                    .unwrap()
                    .as_primitive::<Int64Type>()
                    .values()
                    .to_vec()
            })
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let range = |s: i64, e: Option<i64>| {
        let table = table.clone();
        async move {
            let plan = table
                .changes(ChangeBound::TimestampMs(s), e.map(ChangeBound::TimestampMs))
                .build()
                .await?;
            Ok::<_, ScanError>(versions_of(collect(&plan).await))
        }
    };
    assert_eq!(range(t1, Some(t1)).await.unwrap(), [1]);
    assert_eq!(range(t0 + 1, Some(t2 - 1)).await.unwrap(), [1]);
    assert_eq!(range(t0 - 1000, None).await.unwrap(), [0, 1, 2]);
    let err = range(t2 + 1, None).await.unwrap_err();
    assert!(
        err.to_string().contains("is after the last commit"),
        "{err}"
    );
    let err = range(t0, Some(t0 - 1)).await.unwrap_err();
    assert!(
        err.to_string().contains("is before the first commit"),
        "{err}"
    );
}

/// With in-commit timestamps on, `_commit_timestamp` is each commit's
/// `inCommitTimestamp`, and timestamp bounds resolve by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_commit_timestamps_are_the_commit_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, schema) = writer_table(dir.path(), true).await;
    t.append(&id_part(&schema, &[1], "a")).await.unwrap();
    t.append(&id_part(&schema, &[2], "a")).await.unwrap();
    let root = dir.path().join("t");
    let mut ict = Vec::new();
    for v in 0..=2u64 {
        let text = std::fs::read_to_string(root.join(format!("_delta_log/{v:020}.json"))).unwrap();
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        ict.push(first["commitInfo"]["inCommitTimestamp"].as_i64().unwrap());
    }
    let table = open(&root).await;
    let plan = table.changes(v(1), None).build().await.unwrap();
    let mut seen = Vec::new();
    for b in collect(&plan).await {
        let versions = b
            .column_by_name("_commit_version")
            .unwrap()
            .as_primitive::<Int64Type>();
        let times = b
            .column_by_name("_commit_timestamp")
            .unwrap()
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            seen.push((versions.value(i), times.value(i)));
        }
    }
    seen.sort();
    assert_eq!(seen, [(1, ict[1] * 1000), (2, ict[2] * 1000)]);
    let plan = table
        .changes(ChangeBound::TimestampMs(ict[2]), None)
        .build()
        .await
        .unwrap();
    assert_eq!(change_rows(&collect(&plan).await), ["2|a|insert|2"]);
}

/// `(version, _commit_timestamp in ms)` of every row of `batches`, sorted.
fn commit_times(batches: &[RecordBatch]) -> Vec<(i64, i64)> {
    let mut seen = Vec::new();
    for b in batches {
        let versions = b
            .column_by_name("_commit_version")
            .unwrap()
            .as_primitive::<Int64Type>();
        let times = b
            .column_by_name("_commit_timestamp")
            .unwrap()
            .as_primitive::<arrow_array::types::TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            seen.push((versions.value(i), times.value(i) / 1000));
        }
    }
    seen.sort();
    seen
}

/// In-commit timestamps switched on at version 3 and off at 8: each
/// commit's `_commit_timestamp` is the kind the configuration in force at
/// that commit says (file times for 0-2 and 8-9, in-commit timestamps for
/// 3-7), whichever range reads it, run commit by commit or as a plan. The
/// end version's setting decided every commit's kind before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_commit_has_its_own_kind_of_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let expected = dar_testkit::write_ict_toggled_table(dir.path()).unwrap();
    let table = open(dir.path()).await;
    let want = |s: u64, e: u64| -> Vec<(i64, i64)> {
        expected
            .iter()
            .filter(|(v, _)| (s..=e).contains(v))
            .map(|&(v, t)| (v as i64, t))
            .collect()
    };
    for (s, e) in [(0, 9), (3, 7), (5, 9), (2, 3), (7, 8), (8, 9), (4, 4)] {
        let scan = table.changes(v(s), Some(v(e))).open().await.unwrap();
        assert_eq!(
            commit_times(&scan.collect().await.unwrap()),
            want(s, e),
            "{s}..={e}"
        );
        let plan = scan.plan().await.unwrap();
        assert_eq!(
            commit_times(&collect(&plan).await),
            want(s, e),
            "plan {s}..={e}"
        );
    }
    // At the latest version in-commit timestamps are off: timestamps
    // resolve by file times, as time travel resolves them.
    let file_time_5 = expected[5].1 + 3_600_000;
    let plan = table
        .changes(ChangeBound::TimestampMs(file_time_5), None)
        .build()
        .await
        .unwrap();
    assert_eq!(commit_times(&collect(&plan).await), want(5, 9));
}
