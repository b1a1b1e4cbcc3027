//! Soundness with statistics that contradict themselves (issue 33, item
//! 7): whatever way a file's statistics of a column are made impossible
//! (every value NULL yet bounds, more NULLs than rows, negative counts, a
//! minimum above the maximum), pruning never drops a matching row.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch};
use dar_prune::{ColumnPath, Predicate, StatisticsProvider, StatisticsTable};
use proptest::prelude::*;

use crate::generate::{COLUMNS, batch, predicate, schema};

/// How one file's statistics of one column are made to lie.
#[derive(Debug, Clone, Copy)]
enum Lie {
    /// `null_count = row_count`, the bounds kept.
    AllNull,
    /// `null_count = row_count + 3`.
    MoreNullsThanRows,
    /// `null_count = -1`.
    NegativeNulls,
    /// `row_count = -1`.
    NegativeRows,
    /// Minimum and maximum swapped.
    Swapped,
}

fn lie() -> impl Strategy<Value = Lie> {
    prop_oneof![
        Just(Lie::AllNull),
        Just(Lie::MoreNullsThanRows),
        Just(Lie::NegativeNulls),
        Just(Lie::NegativeRows),
        Just(Lie::Swapped),
    ]
}

/// `counts` with the value of `file` replaced by `to(old)`.
fn set(counts: &ArrayRef, file: usize, to: impl Fn(i64) -> i64) -> ArrayRef {
    let counts = counts.as_primitive::<Int64Type>();
    let out: Int64Array = counts
        .iter()
        .enumerate()
        .map(|(i, v)| if i == file { v.map(&to) } else { v })
        .collect();
    Arc::new(out)
}

/// Makes the statistics of `column` in `file` lie as `lie` says.
fn corrupt(table: &mut StatisticsTable, column: &str, file: usize, lie: Lie) {
    let path = ColumnPath::from_dotted(column);
    let mut stats = table.column_statistics(&path);
    let rows = stats
        .row_count
        .as_ref()
        .map(|r| r.as_primitive::<Int64Type>().value(file))
        .unwrap_or(0);
    match lie {
        Lie::AllNull => stats.null_count = stats.null_count.map(|n| set(&n, file, |_| rows)),
        Lie::MoreNullsThanRows => {
            stats.null_count = stats.null_count.map(|n| set(&n, file, |_| rows + 3));
        }
        Lie::NegativeNulls => stats.null_count = stats.null_count.map(|n| set(&n, file, |_| -1)),
        Lie::NegativeRows => stats.row_count = stats.row_count.map(|r| set(&r, file, |_| -1)),
        Lie::Swapped => {
            if let (Some(lo), Some(hi)) = (&stats.min, &stats.max) {
                let at: BooleanArray = (0..lo.len()).map(|i| Some(i == file)).collect();
                let swapped_lo = arrow_select::zip::zip(&at, hi, lo).unwrap();
                let swapped_hi = arrow_select::zip::zip(&at, lo, hi).unwrap();
                stats.min = Some(swapped_lo);
                stats.max = Some(swapped_hi);
            }
        }
    }
    table.insert(path, stats);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn contradicting_statistics_never_drop_a_match(
        batch in batch(120),
        expr in predicate(),
        file_rows in 1usize..40,
        lies in prop::collection::vec((0..COLUMNS.len(), any::<prop::sample::Index>(), lie()), 1..6),
    ) {
        let p = Predicate::try_new(expr, &schema()).unwrap();
        let matches = p.evaluate(&batch).unwrap();
        let is_match = |r: usize| matches.is_valid(r) && matches.value(r);
        let files: Vec<RecordBatch> = (0..batch.num_rows())
            .step_by(file_rows)
            .map(|s| batch.slice(s, file_rows.min(batch.num_rows() - s)))
            .collect();
        let loose = vec![false; files.len()];
        let mut stats = crate::delta_stats::from_batches(&files, &schema(), &COLUMNS, &loose);
        for (column, file, lie) in &lies {
            corrupt(&mut stats, COLUMNS[*column], file.index(files.len()), *lie);
        }
        let outcome = p.prune(&stats);
        for (f, keep) in outcome.keep.iter().enumerate() {
            if keep == Some(false) {
                let start = f * file_rows;
                for r in start..start + files[f].num_rows() {
                    prop_assert!(
                        !is_match(r),
                        "file {} pruned but row {} matches {} ({:?})",
                        f, r, p.expr(), lies
                    );
                }
            }
        }
    }
}
