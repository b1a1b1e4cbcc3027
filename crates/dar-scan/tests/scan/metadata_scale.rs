//! A 100,000-file table (log only: a checkpoint of JSON stats over four
//! columns, then commits): the scan metrics report the bytes its file
//! index holds, within a budget per file; opening parses no column stats,
//! a predicate parses only its column's, once.

use std::sync::Arc;

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use dar_scan::Table;
use dar_testkit::TableWriter;
use object_store::ObjectStore;
use object_store::memory::InMemory;

const FILES: usize = 100_000;

/// Bytes per file of the index without column stats: a path (~70 bytes),
/// size, time, counts, DV columns, and the compressed stats text kept for
/// later.
const BUDGET: u64 = 180;
/// What one column's parsed stats (min, max, null count) may add per file.
const ONE_COLUMN: u64 = 32;

async fn table(options: dar_scan::TableOptions) -> Table {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("value", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("day", DataType::Int64, true),
    ]));
    let mut w = TableWriter::builder(Arc::clone(&store), "t".into(), Arc::clone(&schema))
        .create()
        .await
        .unwrap();
    let rows = |from: i64, n: usize| {
        let ids: Vec<i64> = (from..from + n as i64).collect();
        RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(Float64Array::from_iter_values(
                    ids.iter().map(|i| *i as f64 / 7.0),
                )),
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("n{i:08}")),
                )),
                Arc::new(Int64Array::from_iter_values(ids.iter().map(|i| i % 365))),
            ],
        )
        .unwrap()
    };
    // Two rows per file.
    w.append_log_only(&rows(0, FILES * 2), 2).await.unwrap();
    w.checkpoint().await.unwrap();
    for c in 0..4 {
        let from = (FILES * 2 + c * 20) as i64;
        w.append_log_only(&rows(from, 20), 2).await.unwrap();
    }
    let store = dar_io::TableStore::builder("memory://t")
        .with_store(store)
        .build()
        .unwrap();
    Table::from_store(store, options).await.unwrap()
}

/// The plan of ids 1000..=1199: files 500..=599 (two rows each).
fn ids_1000_to_1199(t: &Table) -> dar_scan::ScanPlan {
    t.scan()
        .with_predicate_sql("id >= 1000 AND id < 1200")
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_bytes_per_file_stay_in_budget_and_only_queried_stats_are_parsed() {
    let t = table(dar_scan::TableOptions::new()).await;
    let files = (FILES + 40) as u64;

    let all = t.scan().build().unwrap();
    let m = all.metrics().snapshot();
    assert_eq!(m.files_total, files);
    assert_eq!(m.stats_columns_parsed, 0, "{m:?}");
    let bare = m.index_bytes / files;
    assert!(bare <= BUDGET, "{bare} bytes per file without stats");

    let plan = ids_1000_to_1199(&t);
    let m = plan.metrics().snapshot();
    assert_eq!(plan.tasks().len(), 100, "{m:?}");
    assert_eq!(m.stats_columns_parsed, 1, "{m:?}");
    let with_id = m.index_bytes / files;
    eprintln!("file index: {bare} bytes per file without column stats, {with_id} with id's");
    assert!(
        with_id > bare && with_id <= bare + ONE_COLUMN,
        "{with_id} bytes per file with id's stats ({bare} without)"
    );

    // The second query on the same column parses nothing.
    let again = t.scan().with_predicate_sql("id = 5").build().unwrap();
    assert_eq!(again.tasks().len(), 1);
    assert_eq!(again.metrics().snapshot().stats_columns_parsed, 0);
    // Another column's are parsed when asked for.
    let other = t.scan().with_predicate_sql("day = 400").build().unwrap();
    assert_eq!(other.tasks().len(), 0);
    assert_eq!(other.metrics().snapshot().stats_columns_parsed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_parsed_at_load_leave_nothing_to_parse_and_prune_the_same() {
    let t = table(dar_scan::TableOptions::new().with_stats_loading(dar_scan::StatsLoading::AtLoad))
        .await;
    let plan = ids_1000_to_1199(&t);
    let m = plan.metrics().snapshot();
    assert_eq!(plan.tasks().len(), 100, "{m:?}");
    assert_eq!(m.stats_columns_parsed, 0, "{m:?}");
    // Every column's stats are held: more than without any.
    assert!(m.index_bytes / m.files_total > BUDGET, "{m:?}");
}
