//! Statistics a reader must not believe as written (issue 33, items 6, 7
//! and 10), through the scan: the rows a predicate keeps, and the plan's
//! statistics (what an engine answers `count`, `min` and `max` from).
//! Widened columns' bounds from every source (JSON, a checkpoint's
//! `stats_parsed`, row groups, pages), and statistics that are impossible
//! or contradict themselves.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, Float64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_io::TableStore;
use dar_prune::{Predicate, Scalar};
use dar_scan::{Estimate, Table, TableOptions};
use dar_testkit::{
    BAD_STATS_FILE, BadStats, CheckpointOptions, ParquetOptions, TableWriter,
    write_bad_stats_table, write_log_checkpoint, write_widened_float_table,
};
use futures::TryStreamExt;
use object_store::ObjectStore;
use object_store::memory::InMemory;
use object_store::path::Path;
use proptest::prelude::*;

use super::bad_input::copy_table;
use super::common::*;

async fn matching(table: &Table, predicate: &str) -> Vec<RecordBatch> {
    let plan = table.scan().with_predicate_sql(predicate).build().unwrap();
    plan.execute().try_collect().await.unwrap()
}

/// How many of the kit's snapshot `rows` match `predicate`.
fn expected(rows: &RecordBatch, predicate: &str) -> usize {
    let p = Predicate::parse(predicate, &rows.schema()).unwrap();
    p.filter(rows).unwrap().num_rows()
}

/// The checkpoints of the widened tables: where the old files' bounds are
/// read from.
fn checkpoints() -> Vec<(&'static str, CheckpointOptions, bool)> {
    let parsed = CheckpointOptions::default().with_stats_parsed(true);
    vec![
        (
            "stats_parsed only",
            parsed.clone().with_stats_json(false),
            false,
        ),
        ("stats_parsed and JSON", parsed.clone(), false),
        ("JSON only", CheckpointOptions::default(), false),
        (
            "v2 sidecars, stats_parsed only",
            parsed.with_stats_json(false).with_sidecars(2),
            true,
        ),
    ]
}

/// Issue 33 item 6: after `float -> double`, a checkpoint's `stats_parsed`
/// holds the old files' bounds as the floats' text read as doubles (`0.1`
/// below the float 0.100000001…, `0.7` above 0.699999988…). Equality, IN
/// and ranges on the values the files hold keep their rows, from every
/// source of statistics (and row groups and pages, in the float files'
/// own type), while what has no match is still pruned.
#[tokio::test]
async fn widened_float_bounds_from_every_source_keep_their_rows() {
    let f = |v: f32| format!("{:?}", f64::from(v));
    let predicates = [
        format!("x = {}", f(0.7)),
        format!("x = {}", f(0.1)),
        format!("x IN ({}, {})", f(0.7), f(0.1)),
        format!("x IN ({}, 9.5)", f(2.0)),
        format!("x >= {} AND x <= {}", f(0.1), f(0.1)),
        format!("x <= {}", f(0.7)),
        "x > 0.1".to_string(),
        "x < 0.7".to_string(),
        "x = 0.1".to_string(),
        "x = 2.5".to_string(),
        "x IS NULL".to_string(),
        "x < -100".to_string(),
    ];
    for (name, options, v2) in checkpoints() {
        let tmp = tempfile::tempdir().unwrap();
        let writer = write_widened_float_table(tmp.path(), &options, v2)
            .await
            .unwrap();
        let rows = writer.snapshot_rows().unwrap();
        let table = open(tmp.path()).await;
        for p in &predicates {
            let got = num_rows(&matching(&table, p).await);
            assert_eq!(got, expected(&rows, p), "{name}: {p}");
        }
        // Nothing matches below every value: the files are still pruned
        // (above every value, a NaN the bounds leave out could match).
        let plan = table.scan().with_predicate_sql("x < -100").build().unwrap();
        assert_eq!(plan.tasks().len(), 0, "{name}");
    }
}

/// The shared `type-widening` table (Delta-Spark: every widening of the
/// protocol, one file before and one after), read from its JSON log and
/// from a checkpoint with `stats_parsed` written for it: an equality on
/// each column's value in each file returns exactly that file's row, and
/// an IN of both returns both.
#[tokio::test]
async fn shared_type_widening_table_keeps_every_row_from_every_source() {
    let Some((_tmp, dir)) = copy_table("kernel/type-widening") else {
        return;
    };
    const OLD: &str = "byte_decimal=1.0, byte_double=5.0, byte_long=1, date_timestamp_ntz=2024-09-09T00:00:00, decimal_decimal_greater_scale=67.89000, decimal_decimal_same_scale=123.45, float_double=3.4000000953674316, int_decimal=3.0, int_double=7.0, int_long=2, long_decimal=4.0, short_decimal=2.0, short_double=6.0";
    const NEW: &str = "byte_decimal=123.4, byte_double=1.234567890123, byte_long=9223372036854775807, date_timestamp_ntz=2024-09-09T12:34:56.123456, decimal_decimal_greater_scale=12345678901.23456, decimal_decimal_same_scale=12345678901234.56, float_double=1.234567890123, int_decimal=1234567890.1, int_double=1.234567890123, int_long=9223372036854775807, long_decimal=123456789012345678.9, short_decimal=12345.6, short_double=1.234567890123";
    let values = [
        ("byte_long", "1", "9223372036854775807"),
        ("int_long", "2", "9223372036854775807"),
        ("float_double", "3.4000000953674316", "1.234567890123"),
        ("byte_double", "5.0", "1.234567890123"),
        ("short_double", "6.0", "1.234567890123"),
        ("int_double", "7.0", "1.234567890123"),
        ("decimal_decimal_same_scale", "123.45", "12345678901234.56"),
        (
            "decimal_decimal_greater_scale",
            "67.89",
            "12345678901.23456",
        ),
        ("byte_decimal", "1.0", "123.4"),
        ("short_decimal", "2.0", "12345.6"),
        ("int_decimal", "3.0", "1234567890.1"),
        ("long_decimal", "4.0", "123456789012345678.9"),
        (
            "date_timestamp_ntz",
            "TIMESTAMP_NTZ '2024-09-09 00:00:00'",
            "TIMESTAMP_NTZ '2024-09-09 12:34:56.123456'",
        ),
    ];
    for source in ["JSON", "stats_parsed"] {
        if source == "stats_parsed" {
            write_log_checkpoint(&dir).unwrap();
        }
        let table = open(&dir).await;
        for (column, old, new) in values {
            for (value, row) in [(old, OLD), (new, NEW)] {
                let p = format!("{column} = {value}");
                assert_eq!(rows(&matching(&table, &p).await), [row], "{source}: {p}");
            }
            let p = format!("{column} IN ({old}, {new})");
            assert_eq!(
                rows(&matching(&table, &p).await),
                [OLD, NEW],
                "{source}: {p}"
            );
        }
    }
}

/// The value of an estimate when it claims to be exact.
fn exact<T: Clone>(e: &Estimate<T>) -> Option<T> {
    match e {
        Estimate::Exact(v) => Some(v.clone()),
        _ => None,
    }
}

/// Issue 33 items 7 and 10: whatever way one file's statistics lie (every
/// value null yet bounds, more nulls than rows, a negative count, min above
/// max), predicates on the values the files hold keep their rows, and the
/// plan's statistics claim no exact count, null count or bound: an engine
/// answering `count(x)`, `min(x)` or `max(x)` from them reads the data.
/// Whatever is still exact is true.
#[tokio::test]
async fn statistics_that_lie_never_prune_nor_answer_exactly() {
    sane_statistics_stay_exact().await;
    for case in BadStats::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let truth = write_bad_stats_table(tmp.path(), case).unwrap();
        let table = open(tmp.path()).await;
        for v in truth.values.iter().flatten() {
            let p = format!("x = {v}");
            let got = num_rows(&matching(&table, &p).await) as u64;
            assert_eq!(got, truth.equal_to(*v), "{case:?}: {p}");
        }
        let plan = table.scan().build().unwrap();
        let stats = plan.statistics();
        let x = &stats.columns[0];
        assert_eq!(exact(&x.null_count), None, "{case:?}: {x:?}");
        assert_eq!(exact(&x.min), None, "{case:?}: {x:?}");
        assert_eq!(exact(&x.max), None, "{case:?}: {x:?}");
        if let Some(rows) = exact(&stats.num_rows) {
            assert_eq!(rows, truth.rows(), "{case:?}");
        }
        // A count answered from the log is the data's.
        let count = table
            .scan()
            .with_columns(Vec::<String>::new())
            .build()
            .unwrap();
        let counted: Vec<RecordBatch> = count.execute().try_collect().await.unwrap();
        assert_eq!(num_rows(&counted) as u64, truth.rows(), "{case:?}");
        let index = table.snapshot().file_index().unwrap();
        let impossible: Vec<&str> = index
            .stats
            .impossible
            .iter()
            .map(|&i| index.path.value(i))
            .collect();
        let expect: &[&str] = if case == BadStats::NegativeNumRecords {
            &[BAD_STATS_FILE]
        } else {
            &[]
        };
        assert_eq!(impossible, expect, "{case:?}");
    }
}

/// Sane statistics stay exact beside the rule (no DV, no predicate, tight
/// bounds): the rule takes nothing a reader may believe.
async fn sane_statistics_stay_exact() {
    let tmp = tempfile::tempdir().unwrap();
    write_bad_stats_table(tmp.path(), BadStats::AllNullButValues).unwrap();
    // Drop the lying file: what is left is the sane one.
    let log = tmp.path().join("_delta_log/00000000000000000000.json");
    let text = std::fs::read_to_string(&log).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains(BAD_STATS_FILE))
        .collect();
    std::fs::write(&log, kept.join("\n") + "\n").unwrap();
    let table = open(tmp.path()).await;
    let stats = table.scan().build().unwrap().statistics();
    assert_eq!(exact(&stats.num_rows), Some(3));
    let x = &stats.columns[0];
    assert_eq!(exact(&x.null_count), Some(1));
    assert_eq!(exact(&x.min), Some(Scalar::Int64(1)));
    assert_eq!(exact(&x.max), Some(Scalar::Int64(2)));
}

/// One random widened table: `floats` files of `x: float`, the widening,
/// `doubles` files of `x: double`, a checkpoint (with `stats_parsed`, or
/// JSON stats, or none).
#[derive(Debug, Clone)]
struct Widened {
    floats: Vec<Vec<Option<f32>>>,
    doubles: Vec<Vec<Option<f64>>>,
    checkpoint: u8,
    /// Predicate values: indexes into the table's values, and how each is
    /// written (the value itself, or its shortest float text read as a
    /// double).
    probes: Vec<(usize, bool, u8)>,
}

/// Floats whose shortest text reads as a double away from the float.
fn interesting_float() -> impl Strategy<Value = f32> {
    prop_oneof![
        prop::sample::select(vec![
            0.1f32,
            0.7,
            3.4,
            -0.3,
            1.0e-3,
            16_777_217.0,
            0.0,
            -0.0
        ]),
        any::<u32>()
            .prop_map(f32::from_bits)
            .prop_filter("finite", |f| f.is_finite()),
    ]
}

fn widened() -> impl Strategy<Value = Widened> {
    let file = prop::collection::vec(prop::option::weighted(0.9, interesting_float()), 1..5);
    let double = prop::option::weighted(
        0.9,
        prop_oneof![
            interesting_float().prop_map(f64::from),
            interesting_float().prop_map(|f| format!("{f:?}").parse::<f64>().unwrap()),
        ],
    );
    (
        prop::collection::vec(file, 1..4),
        prop::collection::vec(prop::collection::vec(double, 1..4), 0..2),
        0u8..3,
        prop::collection::vec((any::<usize>(), any::<bool>(), 0u8..4), 1..6),
    )
        .prop_map(|(floats, doubles, checkpoint, probes)| Widened {
            floats,
            doubles,
            checkpoint,
            probes,
        })
}

async fn run_widened(spec: Widened) {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float32, true)]));
    let mut w = TableWriter::builder(Arc::clone(&store), Path::from("t"), schema)
        .with_parquet_options(
            ParquetOptions::default()
                .with_row_group_rows(2)
                .with_page_rows(1)
                .with_page_index(true),
        )
        .with_kept_rows(true)
        .create()
        .await
        .unwrap();
    for file in &spec.floats {
        let x: ArrayRef = Arc::new(Float32Array::from(file.clone()));
        let batch = RecordBatch::try_new(Arc::clone(w.schema()), vec![x]).unwrap();
        w.append(&batch).await.unwrap();
    }
    w.widen_column("x", DataType::Float64).await.unwrap();
    for file in &spec.doubles {
        let x: ArrayRef = Arc::new(Float64Array::from(file.clone()));
        let batch = RecordBatch::try_new(Arc::clone(w.schema()), vec![x]).unwrap();
        w.append(&batch).await.unwrap();
    }
    match spec.checkpoint {
        0 => {}
        1 => w.checkpoint().await.unwrap(),
        _ => {
            let options = CheckpointOptions::default()
                .with_stats_json(false)
                .with_stats_parsed(true);
            w.checkpoint_with(&options).await.unwrap();
        }
    }
    let rows = w.snapshot_rows().unwrap();
    let values: Vec<f64> = rows
        .column(0)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap()
        .iter()
        .flatten()
        .collect();
    let store = TableStore::builder("memory://t")
        .with_store(store)
        .build()
        .unwrap();
    let table = Table::from_store(store, TableOptions::new()).await.unwrap();
    for (at, as_text, op) in &spec.probes {
        if values.is_empty() {
            break;
        }
        let v = values[at % values.len()];
        // The value, or a float's shortest text read as a double.
        let v = match v as f32 {
            f if *as_text && f.is_finite() => format!("{f:?}").parse::<f64>().unwrap(),
            _ => v,
        };
        let p = match op {
            0 => format!("x = {v:?}"),
            1 => format!("x IN ({v:?}, 1e300)"),
            2 => format!("x <= {v:?}"),
            _ => format!("x >= {v:?}"),
        };
        let got = num_rows(&matching(&table, &p).await);
        assert_eq!(got, expected(&rows, &p), "{p} on {spec:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// Issue 33 item 6, as a property: pruning a widened column with its
    /// statistics from any source never drops a match.
    #[test]
    fn pruning_widened_floats_never_drops_a_match(spec in widened()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(run_widened(spec));
    }
}
