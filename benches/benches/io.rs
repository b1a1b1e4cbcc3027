//! dar-io: reading selected pages of a multi-row-group Parquet file through
//! object_store's `ThrottledStore`, with three range strategies:
//!
//! - `dar_planner`: [`dar_io::plan_ranges`] with the store's learned cost model;
//! - `object_store_default`: `object_store::coalesce_ranges` with its default
//!   1 MiB gap and 10 requests in flight, i.e. what `ObjectStore::get_ranges`
//!   does for S3/GCS/Azure (ThrottledStore's own `get_ranges` would charge one
//!   call for the whole batch, which no real backend does, so it is not used);
//! - `exact_ranges`: one GET per range, 10 in flight.
//!
//! All three share one footer (cached) and 10 request lanes. Two network
//! settings: (a) 1 ms per request, 1 Gbit/s; (b) 200 ms per request,
//! 150 Mbit/s. ThrottledStore applies its per-byte wait to each request
//! separately, like per-connection throughput on S3.
//!
//! Before criterion runs, a report prints requests, bytes and time of each
//! strategy as ratios against object_store's default, measured in the same
//! run (median of 3).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs,
    reason = "bench"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use criterion::Criterion;
use dar_io::{
    CostParams, IoSnapshot, ObjectClass, ProbeBudget, RangeStrategy, StorageOptions, TableStore,
};
use futures::TryStreamExt;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::throttle::{ThrottleConfig, ThrottledStore};
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, RowSelection, RowSelector};
use parquet::file::metadata::PageIndexPolicy;

const ROW_GROUPS: usize = 8;
const RG_ROWS: usize = 100_000;
const PAGE_ROWS: usize = 10_000;
const FILE: &str = "t/part-0.parquet";

fn parquet_file() -> Vec<u8> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("value", DataType::Float64, false),
        Field::new("name", DataType::Utf8, false),
        Field::new("other", DataType::Int64, false),
    ]));
    dar_io::testing::paged_parquet(schema, ROW_GROUPS, RG_ROWS, PAGE_ROWS, |ids| {
        let values = ids.clone().map(|i| i as f64 * 1.5);
        let names = ids.clone().map(|i| format!("name-{i:012}"));
        let other = ids.clone().map(|i| i.wrapping_mul(2_654_435_761));
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(Float64Array::from_iter_values(values)),
            Arc::new(StringArray::from_iter_values(names)),
            Arc::new(Int64Array::from_iter_values(other)),
        ]
    })
    .unwrap()
}

/// Three row runs of each row group, [10k, 20k), [40k, 50k), [70k, 80k):
/// pages 1, 4 and 7 of 10 in every column chunk (what a page index prunes
/// to for a selective predicate).
fn selection() -> RowSelection {
    let mut sel = Vec::new();
    for _ in 0..ROW_GROUPS {
        for _ in 0..3 {
            sel.push(RowSelector::skip(10_000));
            sel.push(RowSelector::select(10_000));
            sel.push(RowSelector::skip(10_000));
        }
        sel.push(RowSelector::skip(RG_ROWS - 90_000));
    }
    RowSelection::from(sel)
}

struct Setting {
    name: &'static str,
    per_call: Duration,
    bits_per_sec: f64,
}

struct Env {
    table: TableStore,
    size: u64,
}

async fn env(setting: &Setting, data: &[u8]) -> Env {
    let inner = InMemory::new();
    inner
        .put(&Path::from(FILE), data.to_vec().into())
        .await
        .unwrap();
    let per_byte_ns = (8e9 / setting.bits_per_sec).round() as u64;
    let config = ThrottleConfig {
        wait_get_per_call: setting.per_call,
        wait_get_per_byte: Duration::from_nanos(per_byte_ns),
        ..Default::default()
    };
    let store: Arc<dyn ObjectStore> = Arc::new(ThrottledStore::new(inner, config));
    let table = TableStore::builder("memory://t")
        .with_options(StorageOptions::new())
        .with_store(store)
        .with_cost_params(CostParams::remote().with_max_concurrency(10))
        .build()
        .unwrap();
    // Prime the cost model: a bounded probe, then one untimed scan (its
    // page reads teach throughput).
    table
        .cost_model()
        .probe(
            table.store().as_ref(),
            &Path::from(FILE),
            data.len() as u64,
            ProbeBudget::default(),
        )
        .await
        .unwrap();
    let env = Env {
        table,
        size: data.len() as u64,
    };
    scan(&env, RangeStrategy::Planned).await;
    env
}

async fn scan(env: &Env, strategy: RangeStrategy) -> usize {
    let reader = env
        .table
        .parquet_reader(env.table.child("part-0.parquet"), Some(env.size))
        .with_range_strategy(strategy);
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let b = ParquetRecordBatchStreamBuilder::new_with_options(reader, options)
        .await
        .unwrap()
        .with_row_selection(selection());
    let batches: Vec<RecordBatch> = b.build().unwrap().try_collect().await.unwrap();
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, ROW_GROUPS * 30_000);
    rows
}

fn strategies() -> [(&'static str, RangeStrategy); 3] {
    [
        (
            "object_store_default",
            RangeStrategy::Coalesce {
                max_gap: object_store::OBJECT_STORE_COALESCE_DEFAULT,
            },
        ),
        ("dar_planner", RangeStrategy::Planned),
        ("exact_ranges", RangeStrategy::Exact { concurrency: 10 }),
    ]
}

/// Requests, bytes and median time of 3 scans per strategy, as ratios.
async fn report(setting: &Setting, env: &Env) {
    let mut rows: Vec<(&str, IoSnapshot, Duration)> = Vec::new();
    for (name, strategy) in strategies() {
        let mut times = Vec::new();
        let mut io = IoSnapshot::default();
        for _ in 0..3 {
            let before = env.table.metrics().snapshot();
            let t = Instant::now();
            scan(env, strategy.clone()).await;
            times.push(t.elapsed());
            io = env.table.metrics().snapshot().since(&before);
        }
        times.sort();
        rows.push((name, io, times[1]));
    }
    let (_, base_io, base_t) = rows[0];
    let page = |s: &IoSnapshot| s.class(ObjectClass::PageData);
    println!(
        "dar-io bench {}: params learned {:?}",
        setting.name,
        env.table.cost_model().params()
    );
    for (name, io, t) in &rows {
        println!(
            "  {:<22} requests {:>4} ({:.2}x)  bytes {:>9} ({:.2}x)  time {:>8.1} ms ({:.2}x, speedup {:.2}x)",
            name,
            page(io).requests,
            page(io).requests as f64 / page(&base_io).requests.max(1) as f64,
            page(io).bytes,
            page(io).bytes as f64 / page(&base_io).bytes.max(1) as f64,
            t.as_secs_f64() * 1e3,
            t.as_secs_f64() / base_t.as_secs_f64(),
            base_t.as_secs_f64() / t.as_secs_f64(),
        );
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let data = parquet_file();
    let settings = [
        Setting {
            name: "a_1ms_1gbit",
            per_call: Duration::from_millis(1),
            bits_per_sec: 1e9,
        },
        Setting {
            name: "b_200ms_150mbit",
            per_call: Duration::from_millis(200),
            bits_per_sec: 150e6,
        },
    ];
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    println!("dar-io bench: file {} bytes", data.len());
    for setting in &settings {
        let env = rt.block_on(env(setting, &data));
        rt.block_on(report(setting, &env));
        let mut g = c.benchmark_group(format!("io_selected_pages/{}", setting.name));
        for (name, strategy) in strategies() {
            g.bench_function(name, |b| {
                b.iter(|| rt.block_on(scan(&env, strategy.clone())));
            });
        }
        g.finish();
    }
    c.final_summary();
}
