//! dar-prune: pruning a 100k-file Delta file index with a 3-clause
//! predicate in one vectorized pass (`Predicate::prune` over
//! `FileStatistics` arrays), against the same predicate evaluated file by
//! file over parsed stats structs, measured in the same run. Two baselines:
//! a loop hand-specialized to this one predicate over typed structs (the
//! best a per-file reader can do), and the bound predicate interpreted per
//! file over stats keyed by column name (what a generic per-file reader
//! does). Throughput is files per second.
//!
//! `cargo bench -p dar-benches --bench prune`

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "bench setup")]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use std::collections::HashMap;

use arrow_array::{Int64Array, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dar_prune::{CmpOp, Expr, FileStatistics, Predicate, Scalar};

const FILES: usize = 100_000;
const PREDICATE: &str = "id BETWEEN 40000000 AND 41000000 \
     AND city = 'city_0042' \
     AND ts >= TIMESTAMP '2024-06-01T00:00:00Z'";

/// Delta stats of one column of one file, parsed into Rust values.
struct ColumnStats<T> {
    min: Option<T>,
    max: Option<T>,
    null_count: Option<i64>,
}

/// The baseline's per-file record (one heap string per string bound).
struct FileStats {
    num_records: i64,
    id: ColumnStats<i64>,
    city: ColumnStats<String>,
    ts: ColumnStats<i64>,
}

fn mix(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20
}

/// Deterministic index: ids clustered by file, cities and timestamps spread.
fn files() -> Vec<FileStats> {
    let day = 86_400_000_000i64;
    let base = 1_704_067_200_000_000i64; // 2024-01-01
    (0..FILES as u64)
        .map(|i| {
            let lo = (mix(i) % 100) as usize;
            let ts0 = base + (mix(i + 7) % 365) as i64 * day;
            FileStats {
                num_records: 1000,
                id: ColumnStats {
                    min: Some(i as i64 * 1000),
                    max: Some(i as i64 * 1000 + 999),
                    null_count: Some(0),
                },
                city: ColumnStats {
                    min: Some(format!("city_{lo:04}")),
                    max: Some(format!("city_{:04}", lo + 5)),
                    null_count: Some((mix(i + 3) % 3) as i64),
                },
                ts: ColumnStats {
                    min: Some(ts0),
                    max: Some(ts0 + 7 * day),
                    null_count: Some(0),
                },
            }
        })
        .collect()
}

fn index(files: &[FileStats]) -> FileStatistics {
    let ints = |f: &dyn Fn(&FileStats) -> Option<i64>| {
        Arc::new(files.iter().map(f).collect::<Int64Array>())
    };
    let ts = |f: &dyn Fn(&FileStats) -> Option<i64>| {
        Arc::new(
            files
                .iter()
                .map(f)
                .collect::<TimestampMicrosecondArray>()
                .with_timezone("+00:00"),
        )
    };
    let strs = |f: &dyn Fn(&FileStats) -> Option<&str>| {
        Arc::new(files.iter().map(f).collect::<StringArray>())
    };
    FileStatistics::builder(files.len())
        .with_num_records(ints(&|f| Some(f.num_records)))
        .with_min("id", ints(&|f| f.id.min))
        .with_max("id", ints(&|f| f.id.max))
        .with_null_count("id", ints(&|f| f.id.null_count))
        .with_min("city", strs(&|f| f.city.min.as_deref()))
        .with_max("city", strs(&|f| f.city.max.as_deref()))
        .with_null_count("city", ints(&|f| f.city.null_count))
        .with_min("ts", ts(&|f| f.ts.min))
        .with_max("ts", ts(&|f| f.ts.max))
        .with_null_count("ts", ints(&|f| f.ts.null_count))
        .build()
}

/// True where the string max may be a truncated prefix (Delta §8.3).
fn truncated(max: &str) -> Option<&str> {
    let stripped = max.strip_suffix(['\u{10FFFD}', '\u{10FFFF}', '\u{FFFD}', '\u{7F}']);
    if stripped.is_some() || max.chars().count() >= 32 {
        Some(stripped.unwrap_or(max))
    } else {
        None
    }
}

fn has_values<T>(c: &ColumnStats<T>, rows: i64) -> Option<bool> {
    Some(c.null_count? < rows)
}

/// Kleene AND of "may match" answers (None = unknown).
fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// The same rules as dar-prune, file by file, over the structs.
fn may_match(f: &FileStats, lo: i64, hi: i64, city: &str, ts: i64) -> bool {
    let id = and(
        and(f.id.min.map(|m| m <= hi), f.id.max.map(|m| m >= lo)),
        has_values(&f.id, f.num_records),
    );
    let city_eq = and(
        and(
            f.city.min.as_deref().map(|m| m <= city),
            f.city.max.as_deref().map(|m| {
                m >= city || truncated(m).is_some_and(|p| city <= p || city.starts_with(p))
            }),
        ),
        has_values(&f.city, f.num_records),
    );
    // Timestamp maxima are truncated to milliseconds: widen by 999 µs.
    let ts_ge = and(
        f.ts.max.map(|m| m.saturating_add(999) >= ts),
        has_values(&f.ts, f.num_records),
    );
    and(and(id, city_eq), ts_ge) != Some(false)
}

/// A generic reader's per-file stats: values keyed by column name, as
/// parsed from `add.stats` (delta-rs's old `Stats` has this shape).
struct KeyedStats {
    num_records: i64,
    min: HashMap<String, Scalar>,
    max: HashMap<String, Scalar>,
    null_count: HashMap<String, i64>,
}

fn keyed(files: &[FileStats]) -> Vec<KeyedStats> {
    files
        .iter()
        .map(|f| {
            let mut k = KeyedStats {
                num_records: f.num_records,
                min: HashMap::new(),
                max: HashMap::new(),
                null_count: HashMap::new(),
            };
            k.min.insert("id".into(), Scalar::Int64(f.id.min.unwrap()));
            k.max.insert("id".into(), Scalar::Int64(f.id.max.unwrap()));
            k.min
                .insert("city".into(), Scalar::Utf8(f.city.min.clone().unwrap()));
            k.max
                .insert("city".into(), Scalar::Utf8(f.city.max.clone().unwrap()));
            k.min
                .insert("ts".into(), Scalar::Timestamp(f.ts.min.unwrap()));
            k.max
                .insert("ts".into(), Scalar::Timestamp(f.ts.max.unwrap()));
            for (c, n) in [
                ("id", f.id.null_count),
                ("city", f.city.null_count),
                ("ts", f.ts.null_count),
            ] {
                k.null_count.insert(c.into(), n.unwrap());
            }
            k
        })
        .collect()
}

fn order(a: &Scalar, b: &Scalar) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Scalar::Int64(a), Scalar::Int64(b)) | (Scalar::Timestamp(a), Scalar::Timestamp(b)) => {
            Some(a.cmp(b))
        }
        (Scalar::Utf8(a), Scalar::Utf8(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        _ => None,
    }
}

/// Some value <= max' is `>=`/`>` l, with Delta's widening of the max.
fn upper_ok(max: &Scalar, l: &Scalar, strict: bool) -> Option<bool> {
    let widened = match max {
        Scalar::Timestamp(v) => Scalar::Timestamp(v.saturating_add(999)),
        other => other.clone(),
    };
    let o = order(&widened, l)?;
    let plain = if strict { o.is_gt() } else { o.is_ge() };
    let cut = match (max, l) {
        (Scalar::Utf8(m), Scalar::Utf8(l)) => {
            truncated(m).is_some_and(|p| l.as_str() <= p || l.starts_with(p))
        }
        _ => false,
    };
    Some(plain || cut)
}

/// The bound predicate walked per file over keyed stats (the generic,
/// interpretive form of the same rules).
fn keyed_may_match(e: &Expr, f: &KeyedStats) -> Option<bool> {
    let column = |e: &Expr| match e {
        Expr::Column(c) => Some(c.parts().join(".")),
        _ => None,
    };
    match e {
        Expr::And(children) => children
            .iter()
            .map(|c| keyed_may_match(c, f))
            .reduce(and)
            .unwrap_or(Some(true)),
        Expr::Compare { left, op, right } => {
            let (c, Expr::Literal(l)) = (column(left)?, right.as_ref()) else {
                return None;
            };
            let has_values = f.null_count.get(&c).map(|n| *n < f.num_records);
            let (min, max) = (f.min.get(&c), f.max.get(&c));
            let r = match op {
                CmpOp::Eq => and(
                    min.and_then(|m| order(m, l)).map(|o| o.is_le()),
                    max.and_then(|m| upper_ok(m, l, false)),
                ),
                CmpOp::GtEq => max.and_then(|m| upper_ok(m, l, false)),
                CmpOp::Gt => max.and_then(|m| upper_ok(m, l, true)),
                CmpOp::LtEq => min.and_then(|m| order(m, l)).map(|o| o.is_le()),
                CmpOp::Lt => min.and_then(|m| order(m, l)).map(|o| o.is_lt()),
                CmpOp::NotEq => None,
            };
            and(r, has_values)
        }
        Expr::Between {
            expr,
            low,
            high,
            negated: false,
        } => {
            let c = column(expr)?;
            let has_values = f.null_count.get(&c).map(|n| *n < f.num_records);
            let lo = f.max.get(&c).and_then(|m| upper_ok(m, low, false));
            let hi = f
                .min
                .get(&c)
                .and_then(|m| order(m, high))
                .map(|o| o.is_le());
            and(and(lo, hi), has_values)
        }
        _ => None,
    }
}

fn bench(c: &mut Criterion) {
    let files = files();
    let stats = index(&files);
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("city", DataType::Utf8, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
            true,
        ),
    ]);
    let predicate = Predicate::parse(PREDICATE, &schema).unwrap();
    let ts = 1_717_200_000_000_000i64; // 2024-06-01T00:00:00Z

    // Both sides must agree before their speed means anything.
    let vectorized = predicate.prune(&stats).keep;
    let baseline: Vec<bool> = files
        .iter()
        .map(|f| may_match(f, 40_000_000, 41_000_000, "city_0042", ts))
        .collect();
    assert_eq!(
        vectorized.iter().map(Option::unwrap).collect::<Vec<_>>(),
        baseline
    );
    let keyed = keyed(&files);
    let generic: Vec<bool> = keyed
        .iter()
        .map(|f| keyed_may_match(predicate.expr(), f) != Some(false))
        .collect();
    assert_eq!(generic, baseline);
    eprintln!("prune: {} of {FILES} files kept", vectorized.true_count());

    let mut group = c.benchmark_group("prune_100k_files");
    group.throughput(Throughput::Elements(FILES as u64));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("dar_prune_vectorized", |b| {
        b.iter(|| black_box(predicate.prune(black_box(&stats))))
    });
    group.bench_function("struct_per_file_baseline", |b| {
        b.iter(|| {
            black_box(&files)
                .iter()
                .filter(|f| may_match(f, 40_000_000, 41_000_000, "city_0042", ts))
                .count()
        })
    });
    group.bench_function("keyed_stats_per_file_interpreter", |b| {
        b.iter(|| {
            black_box(&keyed)
                .iter()
                .filter(|f| keyed_may_match(predicate.expr(), f) != Some(false))
                .count()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
