//! dar-log stats parsing: 100k `add.stats` JSON strings over 20 columns into
//! typed Arrow columns, against a baseline that builds a serde_json `Value`
//! tree per file and reads each stat out of it into the same Arrow builders.
//!
//! Run: `cargo bench -p dar-benches --bench log_stats`. Before criterion's
//! own runs, it prints one line with the best-of-3 times of both and their
//! ratio, measured in the same process.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "bench")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use arrow_array::builder::{
    Date32Builder, Decimal128Builder, Float64Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use criterion::{Criterion, Throughput};
use dar_log::schema::{ColumnMappingMode, StatsColumn, StatsColumnsConfig, StructType};
use dar_log::stats::StatsBuilder;
use serde_json::Value;

const FILES: usize = 100_000;

/// The 20 columns: name and Delta type.
const COLUMNS: [(&str, &str); 20] = [
    ("id", "long"),
    ("user_id", "long"),
    ("order_id", "long"),
    ("quantity", "long"),
    ("version", "long"),
    ("day_of_week", "integer"),
    ("shard", "integer"),
    ("region_code", "integer"),
    ("price", "double"),
    ("discount", "double"),
    ("score", "double"),
    ("name", "string"),
    ("country", "string"),
    ("comment", "string"),
    ("amount", "decimal(12,2)"),
    ("tax", "decimal(12,2)"),
    ("created_at", "timestamp"),
    ("updated_at", "timestamp"),
    ("birthday", "date"),
    ("active", "boolean"),
];

/// A small deterministic generator (no rand dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

fn value(ty: &str, rng: &mut Lcg) -> String {
    let r = rng.next();
    match ty {
        "long" => (r * 7919).to_string(),
        "integer" => (r % 100_000).to_string(),
        "double" => format!("{}.{}", r % 10_000, r % 97),
        "string" => format!(
            "\"val_{:08}_{}\"",
            r % 100_000_000,
            ["a", "bb", "ccc"][(r % 3) as usize]
        ),
        "decimal(12,2)" => format!("{}.{:02}", r % 1_000_000_000, r % 100),
        "timestamp" => format!(
            "\"2024-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z\"",
            r % 12 + 1,
            r % 28 + 1,
            r % 24,
            r % 60,
            (r / 7) % 60,
            r % 1000
        ),
        "date" => format!("\"20{:02}-{:02}-{:02}\"", r % 30, r % 12 + 1, r % 28 + 1),
        _ => "true".to_owned(),
    }
}

fn stats_strings() -> Vec<String> {
    let mut rng = Lcg(42);
    (0..FILES)
        .map(|_| {
            let section = |rng: &mut Lcg| {
                let parts: Vec<String> = COLUMNS
                    .iter()
                    .filter(|(_, ty)| *ty != "boolean")
                    .map(|(name, ty)| format!("\"{name}\":{}", value(ty, rng)))
                    .collect();
                parts.join(",")
            };
            let nulls: Vec<String> = COLUMNS.iter().map(|(n, _)| format!("\"{n}\":{}", rng.next() % 5)).collect();
            format!(
                "{{\"numRecords\":{},\"minValues\":{{{}}},\"maxValues\":{{{}}},\"nullCount\":{{{}}},\"tightBounds\":true}}",
                rng.next() % 1_000_000,
                section(&mut rng),
                section(&mut rng),
                nulls.join(",")
            )
        })
        .collect()
}

fn stats_columns() -> Vec<StatsColumn> {
    let fields: Vec<Value> = COLUMNS
        .iter()
        .map(|(name, ty)| serde_json::json!({"name": name, "type": ty, "nullable": true, "metadata": {}}))
        .collect();
    let schema =
        StructType::from_json(&serde_json::json!({"type": "struct", "fields": fields}).to_string())
            .unwrap();
    schema
        .stats_columns(ColumnMappingMode::None, &[], &StatsColumnsConfig::default())
        .unwrap()
}

fn dar(columns: &[StatsColumn], stats: &[String]) -> usize {
    let mut builder = StatsBuilder::with_capacity(columns.to_vec(), stats.len());
    for s in stats {
        builder.push_json(Some(s));
    }
    builder.finish().unwrap().len()
}

/// Typed builders of the baseline, one per column per min/max.
enum Typed {
    Long(Int64Builder),
    Int(Int32Builder),
    Double(Float64Builder),
    Str(StringBuilder),
    Dec(Decimal128Builder),
    Ts(TimestampMicrosecondBuilder),
    Date(Date32Builder),
    None,
}

impl Typed {
    fn new(ty: &str) -> Self {
        match ty {
            "long" => Self::Long(Int64Builder::new()),
            "integer" => Self::Int(Int32Builder::new()),
            "double" => Self::Double(Float64Builder::new()),
            "string" => Self::Str(StringBuilder::new()),
            "decimal(12,2)" => Self::Dec(Decimal128Builder::new()),
            "timestamp" => Self::Ts(TimestampMicrosecondBuilder::new()),
            "date" => Self::Date(Date32Builder::new()),
            _ => Self::None,
        }
    }

    fn append(&mut self, v: Option<&Value>) {
        match self {
            Self::Long(b) => b.append_option(v.and_then(Value::as_i64)),
            Self::Int(b) => b.append_option(
                v.and_then(Value::as_i64)
                    .and_then(|x| i32::try_from(x).ok()),
            ),
            Self::Double(b) => b.append_option(v.and_then(Value::as_f64)),
            Self::Str(b) => b.append_option(v.and_then(Value::as_str)),
            // The usual shortcut: through f64 (lossy; dar parses the text).
            Self::Dec(b) => b.append_option(
                v.and_then(Value::as_f64)
                    .map(|x| (x * 100.0).round() as i128),
            ),
            Self::Ts(b) => b.append_option(
                v.and_then(Value::as_str)
                    .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
                    .map(|t| t.timestamp_micros()),
            ),
            Self::Date(b) => b.append_option(
                v.and_then(Value::as_str)
                    .and_then(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
                    .map(|d| (d - chrono::NaiveDate::default()).num_days() as i32),
            ),
            Self::None => {}
        }
    }

    fn len(&mut self) -> usize {
        use arrow_array::Array;
        match self {
            Self::Long(b) => b.finish().len(),
            Self::Int(b) => b.finish().len(),
            Self::Double(b) => b.finish().len(),
            Self::Str(b) => b.finish().len(),
            Self::Dec(b) => b.finish().len(),
            Self::Ts(b) => b.finish().len(),
            Self::Date(b) => b.finish().len(),
            Self::None => 0,
        }
    }
}

fn serde_tree(stats: &[String]) -> usize {
    let mut num_records = Int64Builder::new();
    let mut mins: Vec<Typed> = COLUMNS.iter().map(|(_, t)| Typed::new(t)).collect();
    let mut maxs: Vec<Typed> = COLUMNS.iter().map(|(_, t)| Typed::new(t)).collect();
    let mut nulls: Vec<Int64Builder> = COLUMNS.iter().map(|_| Int64Builder::new()).collect();
    for s in stats {
        let v: Value = serde_json::from_str(s).unwrap();
        num_records.append_option(v.get("numRecords").and_then(Value::as_i64));
        for (i, (name, _)) in COLUMNS.iter().enumerate() {
            mins[i].append(v.get("minValues").and_then(|m| m.get(name)));
            maxs[i].append(v.get("maxValues").and_then(|m| m.get(name)));
            nulls[i].append_option(
                v.get("nullCount")
                    .and_then(|m| m.get(name))
                    .and_then(Value::as_i64),
            );
        }
    }
    mins.iter_mut()
        .chain(maxs.iter_mut())
        .map(Typed::len)
        .sum::<usize>()
        + num_records.finish().len()
}

fn best_of_3(mut f: impl FnMut() -> usize) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap()
}

fn main() {
    let stats = stats_strings();
    let columns = stats_columns();
    let bytes: usize = stats.iter().map(String::len).sum();
    let ours = best_of_3(|| dar(&columns, &stats));
    let baseline = best_of_3(|| serde_tree(&stats));
    // The floor of any serde_json-based reader: validate and skip every byte.
    let floor = best_of_3(|| {
        stats
            .iter()
            .map(|s| serde_json::from_str::<&serde_json::value::RawValue>(s).is_ok() as usize)
            .sum()
    });
    println!(
        "log_stats: serde_json skip-only floor {:.1} ms (dar is {:.2}x the floor)",
        floor.as_secs_f64() * 1e3,
        ours.as_secs_f64() / floor.as_secs_f64()
    );
    // What a plan over one column and an open (the counts) parse.
    let one = best_of_3(|| dar(&columns[..1], &stats));
    let counts = best_of_3(|| dar(&[], &stats));
    println!(
        "log_stats: one column {:.1} ms ({:.2}x the floor), counts only {:.1} ms ({:.2}x the floor)",
        one.as_secs_f64() * 1e3,
        one.as_secs_f64() / floor.as_secs_f64(),
        counts.as_secs_f64() * 1e3,
        counts.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "log_stats: {FILES} stats strings, {} MB, 20 columns: dar StatsBuilder {:.1} ms, serde Value tree {:.1} ms, ratio {:.2}x faster",
        bytes / 1_000_000,
        ours.as_secs_f64() * 1e3,
        baseline.as_secs_f64() * 1e3,
        baseline.as_secs_f64() / ours.as_secs_f64()
    );

    let mut c = Criterion::default().sample_size(10).configure_from_args();
    let mut group = c.benchmark_group("log_stats");
    group.throughput(Throughput::Elements(FILES as u64));
    group.bench_function("dar_stats_builder", |b| b.iter(|| dar(&columns, &stats)));
    group.bench_function("dar_one_column", |b| b.iter(|| dar(&columns[..1], &stats)));
    group.bench_function("dar_counts_only", |b| b.iter(|| dar(&[], &stats)));
    group.bench_function("serde_value_tree", |b| b.iter(|| serde_tree(&stats)));
    group.finish();
    c.final_summary();
}
