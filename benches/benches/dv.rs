//! dar-dv: decoding a deletion vector with 1M deleted rows, and turning it
//! into row selections for the 1,000 row groups of a 100M-row file, against
//! the way a list-of-row-numbers reader does the same work (a sorted
//! `Vec<u64>` searched with binary search), measured in the same run.
//!
//! `cargo bench -p dar-benches --bench dv`

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "bench setup")]

use std::hint::black_box;
use std::ops::Range;
use std::time::{Duration, Instant};

use arrow_array::BooleanArray;
use criterion::{Criterion, criterion_group, criterion_main};
use dar_dv::{DeletedRows, DvDescriptor, DvFileWriter, decode_file_bytes, fetch_range};
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};

const FILE_ROWS: u64 = 100_000_000;
const ROW_GROUPS: u64 = 1_000;
const GROUP_ROWS: u64 = FILE_ROWS / ROW_GROUPS;
const DELETED: u64 = 1_000_000;

/// 1M distinct rows spread over the file: one pseudo-random row in each
/// block of 100 (deterministic, so every run measures the same set).
fn deleted_rows() -> Vec<u64> {
    let block = FILE_ROWS / DELETED;
    (0..DELETED)
        .map(|i| i * block + (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) % block)
        .collect()
}

fn row_groups() -> impl Iterator<Item = Range<u64>> {
    (0..ROW_GROUPS).map(|g| g * GROUP_ROWS..(g + 1) * GROUP_ROWS)
}

/// Baseline: the deleted rows of one row group found by binary search in a
/// sorted list, then run-length selectors built from that slice.
fn list_selection(list: &[u64], range: Range<u64>) -> RowSelection {
    let lo = list.partition_point(|&r| r < range.start);
    let hi = list.partition_point(|&r| r < range.end);
    let mut selectors = Vec::new();
    let mut cursor = range.start;
    for &row in &list[lo..hi] {
        if row > cursor {
            selectors.push(RowSelector::select((row - cursor) as usize));
        }
        selectors.push(RowSelector::skip(1));
        cursor = row + 1;
    }
    if cursor < range.end {
        selectors.push(RowSelector::select((range.end - cursor) as usize));
    }
    RowSelection::from(selectors)
}

/// Baseline as mask-applying readers do it: a boolean mask per row group
/// from the sorted list, then a selection from that mask.
fn list_mask_selection(list: &[u64], range: Range<u64>) -> RowSelection {
    let lo = list.partition_point(|&r| r < range.start);
    let hi = list.partition_point(|&r| r < range.end);
    let mut keep = vec![true; (range.end - range.start) as usize];
    for &row in &list[lo..hi] {
        keep[(row - range.start) as usize] = false;
    }
    RowSelection::from_filters(&[BooleanArray::from(keep)])
}

/// The machine these run on is shared: besides criterion's per-function
/// statistics, time both sides alternately and keep each one's best round,
/// so the ratios are not skewed by load that came and went between groups.
fn interleaved_summary(
    dv: &DvDescriptor,
    bytes: &[u8],
    start: u64,
    deleted: &DeletedRows,
    rows: &[u64],
) {
    fn best_ms(best: &mut f64, f: impl FnOnce()) {
        let t = Instant::now();
        f();
        *best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    let mut ms = [f64::MAX; 5];
    for _ in 0..15 {
        best_ms(&mut ms[0], || {
            black_box(decode_file_bytes(dv, "bench.bin", start, black_box(bytes)).unwrap());
        });
        best_ms(&mut ms[1], || {
            let decoded = decode_file_bytes(dv, "bench.bin", start, black_box(bytes)).unwrap();
            black_box(decoded.iter().collect::<Vec<u64>>());
        });
        best_ms(&mut ms[2], || {
            black_box(
                row_groups()
                    .map(|g| deleted.selection(g))
                    .collect::<Vec<_>>(),
            );
        });
        best_ms(&mut ms[3], || {
            black_box(
                row_groups()
                    .map(|g| list_selection(rows, g))
                    .collect::<Vec<_>>(),
            );
        });
        best_ms(&mut ms[4], || {
            black_box(
                row_groups()
                    .map(|g| list_mask_selection(rows, g))
                    .collect::<Vec<_>>(),
            );
        });
    }
    eprintln!(
        "dv interleaved best of 15 (ms): decode {:.2} vs decode+Vec {:.2} ({:.1}x); \
         selections {:.1} vs list binary search {:.1} ({:.2}x) vs list mask {:.1} ({:.1}x); \
         decode+selections {:.1} vs list {:.1} ({:.2}x)",
        ms[0],
        ms[1],
        ms[1] / ms[0],
        ms[2],
        ms[3],
        ms[3] / ms[2],
        ms[4],
        ms[4] / ms[2],
        ms[0] + ms[2],
        ms[1] + ms[3],
        (ms[1] + ms[3]) / (ms[0] + ms[2]),
    );
}

fn bench(c: &mut Criterion) {
    let rows = deleted_rows();
    let deleted: DeletedRows = rows.iter().copied().collect();
    let mut writer = DvFileWriter::new();
    let record = writer.add(&deleted).unwrap();
    let file = writer.finish();
    let dv = DvDescriptor::try_new(
        "u",
        "vBn[lx{q8@P<9BNH/isA",
        Some(record.offset as i64),
        i64::from(record.size_in_bytes),
        record.cardinality as i64,
    )
    .unwrap();
    let range = fetch_range(&dv);
    let bytes = &file[range.start as usize..range.end as usize];
    eprintln!(
        "dv: {DELETED} deleted rows of {FILE_ROWS}; serialized {} bytes; in memory ~{} bytes \
         (roaring) vs {} bytes (Vec<u64>)",
        bytes.len(),
        deleted.memory_size(),
        rows.len() * 8
    );

    // Both sides compute the same selections.
    for group in row_groups().step_by(97) {
        assert_eq!(
            deleted.selection(group.clone()),
            list_selection(&rows, group.clone())
        );
        assert_eq!(
            deleted.selection(group.clone()),
            list_mask_selection(&rows, group)
        );
    }

    interleaved_summary(&dv, bytes, range.start, &deleted, &rows);

    let mut decode = c.benchmark_group("dv_decode_1M_rows");
    decode
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    decode.bench_function("dar_dv", |b| {
        b.iter(|| decode_file_bytes(&dv, "bench.bin", range.start, black_box(bytes)).unwrap())
    });
    decode.bench_function("list_baseline_decode_then_vec", |b| {
        b.iter(|| {
            let rows = decode_file_bytes(&dv, "bench.bin", range.start, black_box(bytes)).unwrap();
            rows.iter().collect::<Vec<u64>>()
        })
    });
    decode.finish();

    let mut select = c.benchmark_group("dv_selections_1000_row_groups");
    select
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    select.bench_function("dar_dv", |b| {
        b.iter(|| {
            row_groups()
                .map(|g| deleted.selection(g))
                .collect::<Vec<_>>()
        })
    });
    select.bench_function("list_baseline_binary_search", |b| {
        b.iter(|| {
            row_groups()
                .map(|g| list_selection(black_box(&rows), g))
                .collect::<Vec<_>>()
        })
    });
    select.bench_function("list_baseline_mask", |b| {
        b.iter(|| {
            row_groups()
                .map(|g| list_mask_selection(black_box(&rows), g))
                .collect::<Vec<_>>()
        })
    });
    select.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
