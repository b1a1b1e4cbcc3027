//! SQL on three workers equals SQL in one process, and every file is read
//! by exactly one worker.

use std::collections::{BTreeMap, BTreeSet};

use dar_datafusion::register_delta_table;
use dar_io::StorageOptions;
use dar_scan::Table;
use datafusion::prelude::SessionContext;

use crate::common::{coordinator, is_distributed, lines, single, start_workers, write_many_files};

/// Registers the shared tables (DV, partitioned, column mapping) and the
/// generated many-file table; `None` when the shared data is absent.
async fn register(ctx: &SessionContext, many: &str) -> Option<()> {
    let shared = [
        ("dv", "kernel/table-with-dv-small"),
        ("dvs", "kernel/cdf-table-with-cdc-and-dvs"),
        ("part", "kernel/basic_partitioned"),
        ("cm", "kernel/cdf-column-mapping-name-mode-3-7"),
    ];
    for (name, rel) in shared {
        let path = dar_testdata::table(rel)?;
        let table = Table::open(path.to_str().unwrap()).await.unwrap();
        register_delta_table(ctx, name, table).unwrap();
    }
    register_delta_table(ctx, "many", Table::open(many).await.unwrap()).unwrap();
    Some(())
}

/// Queries, and whether the planner runs them on the workers: a scan of
/// one file, or with a LIMIT pushed into it, stays in the coordinator.
const QUERIES: &[(&str, bool)] = &[
    // Filters over DVs, partitions and column mapping.
    ("SELECT value FROM dv WHERE value > 2", false),
    ("SELECT id, comment FROM dvs WHERE id > 0", true),
    (
        "SELECT letter, number FROM part WHERE number >= 2 OR letter IS NULL",
        true,
    ),
    (
        "SELECT id, name, value FROM cm WHERE value > 100 AND name LIKE '%a%'",
        true,
    ),
    (
        "SELECT id, grp, part FROM many WHERE grp = 'g3' AND id % 7 = 0",
        true,
    ),
    // Aggregates.
    (
        "SELECT letter, count(*) AS n, sum(number) AS s FROM part GROUP BY letter",
        true,
    ),
    (
        "SELECT grp, count(*) AS n, sum(id) AS s, min(id), max(id) FROM many GROUP BY grp",
        true,
    ),
    (
        "SELECT count(*) AS n, sum(id) AS s, max(comment) AS c FROM dvs",
        true,
    ),
    ("SELECT count(*) AS n, sum(value) AS s FROM dv", false),
    (
        "SELECT name, count(*) AS n, sum(value) AS s FROM cm GROUP BY name",
        true,
    ),
    (
        "SELECT count(*) AS n, count(DISTINCT part) AS parts FROM many",
        true,
    ),
    // Joins.
    (
        "SELECT d.value, p.letter FROM dv d JOIN part p ON d.value = p.number",
        true,
    ),
    (
        "SELECT c.id, c.name, s.comment FROM cm c JOIN dvs s ON c.id = s.id",
        true,
    ),
    (
        "SELECT m.grp, count(*) AS n, sum(m.id) AS s FROM many m \
         JOIN (SELECT DISTINCT part FROM many WHERE part % 3 = 0) k ON m.part = k.part GROUP BY m.grp",
        true,
    ),
    // LIMIT: ordered (the rows are defined; TopK above a full scan), and a
    // bare LIMIT's count (pushed into the scan: one task).
    ("SELECT id, grp FROM many ORDER BY id DESC LIMIT 5", true),
    ("SELECT id, name FROM cm ORDER BY id LIMIT 2", true),
    (
        "SELECT count(*) AS n FROM (SELECT id FROM many LIMIT 7)",
        false,
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_give_the_rows_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let many = write_many_files(dir.path(), 12, 40).await;
    let workers = start_workers(3, &StorageOptions::new()).await;
    let distributed = coordinator(&workers);
    let local = single();
    if register(&distributed, &many).await.is_none() || register(&local, &many).await.is_none() {
        return;
    }
    for (sql, on_workers) in QUERIES {
        let expected = lines(&local.sql(sql).await.unwrap().collect().await.unwrap());
        assert!(!expected.is_empty(), "{sql}: no rows");
        let df = distributed.sql(sql).await.unwrap();
        let plan = df.clone().create_physical_plan().await.unwrap();
        assert_eq!(is_distributed(&plan), *on_workers, "{sql}");
        let got = lines(&df.collect().await.unwrap());
        assert_eq!(got, expected, "{sql}");
    }
    let scans: usize = workers
        .iter()
        .map(|w| w.stores().recent_scans().len())
        .sum();
    assert!(scans > 0, "no worker ran a scan");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_file_is_read_by_exactly_one_worker() {
    let dir = tempfile::tempdir().unwrap();
    let files = 12;
    let many = write_many_files(dir.path(), files, 40).await;
    let workers = start_workers(3, &StorageOptions::new()).await;
    let ctx = coordinator(&workers);
    register_delta_table(&ctx, "many", Table::open(&many).await.unwrap()).unwrap();
    let batches = ctx
        .sql("SELECT sum(id) AS s, count(*) AS n FROM many")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    // 480 ids 0..480, less one deleted per file (physical row 1: id 40k+1).
    let all: i64 = (0..480).sum();
    let deleted: i64 = (0..files as i64).map(|k| 40 * k + 1).sum();
    assert_eq!(
        lines(&batches),
        [format!("| {} | 468 |", all - deleted)],
        "{}",
        arrow_cast::pretty::pretty_format_batches(&batches).unwrap()
    );

    // Which worker was given which files, and what each read.
    let mut owner: BTreeMap<String, usize> = BTreeMap::new();
    let mut read = 0;
    let mut busy = BTreeSet::new();
    for (w, worker) in workers.iter().enumerate() {
        for scan in worker.stores().recent_scans() {
            assert!(
                scan.table_uri.trim_end_matches('/').ends_with("/t"),
                "{}",
                scan.table_uri
            );
            for f in &scan.files {
                if let Some(other) = owner.insert(f.clone(), w) {
                    assert_eq!(other, w, "{f} given to workers {other} and {w}");
                }
            }
            read += scan.metrics.snapshot().files_read;
            busy.insert(w);
        }
    }
    assert_eq!(owner.len(), files, "{owner:?}");
    assert_eq!(read, files as u64, "files read across workers");
    assert!(busy.len() >= 2, "only workers {busy:?} scanned");
}

/// A local table's checkpoint replaced after the coordinator opened it
/// (by its own bytes): its files have no statistics for a column not
/// parsed yet, so the coordinator plans them all and the workers return
/// the rows one process returns from the shared sample.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_replaced_after_the_open_gives_the_rows_of_a_fresh_table() {
    let sample = dar_testdata::workspace_root().join("examples/data/sample");
    let dir = tempfile::tempdir().unwrap();
    dar_testdata::copy_dir(&sample, dir.path());
    let workers = start_workers(3, &StorageOptions::new()).await;
    let distributed = coordinator(&workers);
    let copy = Table::open(dir.path().to_str().unwrap()).await.unwrap();
    register_delta_table(&distributed, "t", copy).unwrap();
    dar_testdata::replace_by_copy(
        &dir.path()
            .join("_delta_log/00000000000000000004.checkpoint.parquet"),
    );
    let local = single();
    let fresh = Table::open(sample.to_str().unwrap()).await.unwrap();
    register_delta_table(&local, "t", fresh).unwrap();
    let sql = "SELECT trip_id, fare FROM t WHERE fare > 40";
    let expected = lines(&local.sql(sql).await.unwrap().collect().await.unwrap());
    assert!(!expected.is_empty());
    let df = distributed.sql(sql).await.unwrap();
    let plan = df.clone().create_physical_plan().await.unwrap();
    assert!(is_distributed(&plan), "the query stayed in the coordinator");
    assert_eq!(lines(&df.collect().await.unwrap()), expected);
}
