//! Concurrent loads of column statistics (issue 33 item 16).

use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::add_columns::{AddColumnsBuilder, AddRow};
use crate::commit::PartitionEntries;
use crate::schema::{ColumnMappingMode, StatsColumnsConfig, StructType};

/// What a parse on this thread calls first, with the columns it parses.
type Hook = Box<dyn Fn(&[StatsColumn])>;

thread_local! {
    pub(super) static PARSE_HOOK: RefCell<Option<Hook>> = RefCell::new(None);
}

/// Index stats of 100 files over long columns `a` and `b`.
fn index_stats() -> IndexStats {
    let fields = json!([{"name": "a", "type": "long"}, {"name": "b", "type": "long"}]);
    let schema =
        StructType::from_json(&json!({"type": "struct", "fields": fields}).to_string()).unwrap();
    let columns = schema
        .stats_columns(ColumnMappingMode::None, &[], &StatsColumnsConfig::default())
        .unwrap();
    let mut adds = AddColumnsBuilder::default();
    for i in 0..100 {
        let stats = format!(
            "{{\"numRecords\":1,\"minValues\":{{\"a\":{i},\"b\":{}}},\"maxValues\":{{\"a\":{i},\"b\":{}}}}}",
            -i, -i
        );
        adds.append(AddRow {
            path: &format!("f{i}.parquet"),
            partition_values: PartitionEntries(None),
            size: Some(1),
            modification_time: Some(0),
            stats: Some(&stats),
            dv: None,
            plain_path: true,
        })
        .unwrap();
    }
    IndexStats::build(columns, &[adds.finish()], &StatsLoading::OnDemand).unwrap()
}

/// What the parses of a test saw.
#[derive(Default)]
struct Seen {
    inside: AtomicUsize,
    met: AtomicUsize,
    parses: Mutex<Vec<String>>,
}

/// A hook that records the columns parsed, then waits (up to 5 s) until
/// two parses are inside at once, and holds its parse a little longer.
fn rendezvous(seen: &Arc<Seen>) -> Hook {
    let seen = Arc::clone(seen);
    Box::new(move |columns: &[StatsColumn]| {
        seen.parses
            .lock()
            .unwrap()
            .extend(columns.iter().map(StatsColumn::logical_name));
        seen.inside.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(5);
        while seen.inside.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if seen.inside.load(Ordering::SeqCst) >= 2 {
            seen.met.fetch_add(1, Ordering::SeqCst);
            // Hold the parse while the third load asks for it.
            std::thread::sleep(Duration::from_millis(50));
        }
    })
}

/// Two queries parsing different columns of one table both parse at once
/// (before, the first held the stats' lock for its whole parse, and the
/// second waited: this rendezvous timed out); a third that wants both
/// columns while they are parsed waits for them and parses neither again.
#[test]
fn loads_of_other_columns_parse_side_by_side_and_one_column_parses_once() {
    let stats = index_stats();
    let seen = Arc::new(Seen::default());
    std::thread::scope(|s| {
        for column in ["a", "b"] {
            let (stats, seen) = (&stats, &seen);
            s.spawn(move || {
                PARSE_HOOK.with(|h| *h.borrow_mut() = Some(rendezvous(seen)));
                let c = stats.column(column).unwrap().unwrap();
                assert_eq!(c.null_count.len(), 100);
            });
        }
        s.spawn(|| {
            while seen.inside.load(Ordering::SeqCst) < 2 {
                std::thread::sleep(Duration::from_millis(1));
            }
            PARSE_HOOK.with(|h| *h.borrow_mut() = Some(rendezvous(&seen)));
            assert_eq!(stats.all().unwrap().len(), 2);
        });
    });
    assert_eq!(
        seen.met.load(Ordering::SeqCst),
        2,
        "the two parses did not overlap"
    );
    let mut parsed = seen.parses.lock().unwrap().clone();
    parsed.sort();
    assert_eq!(parsed, ["a", "b"]);
    assert_eq!(stats.parsed_columns(), 2);
}
