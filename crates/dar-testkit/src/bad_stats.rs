//! [`write_bad_stats_table`]: tables whose statistics a reader must not
//! believe as written (impossible or self-contradicting), each with one
//! sane file beside the bad one and the true answers a reader must give
//! ([`TrueAnswers`]): the rows, and `count(x)`, `min(x)`, `max(x)`.
//!
//! ```text
//! table: one nullable `long` column x, no partitions, two files
//!   part-0.parquet  x = [1, 2, NULL]      stats as written by a writer
//!   part-1.parquet  x = (per case)        stats that lie (per case)
//! ```

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use serde_json::{Value, json};

use crate::error::{Result, TestkitError};
use crate::hand::HandTable;

/// The file of a [`write_bad_stats_table`] table whose statistics lie.
pub const BAD_STATS_FILE: &str = "part-1.parquet";

/// How the bad file's statistics lie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadStats {
    /// `nullCount = numRecords` (every value null) with bounds, while the
    /// file holds values.
    AllNullButValues,
    /// `nullCount = numRecords` with bounds that are false: the file holds
    /// only nulls.
    AllNullWithFalseBounds,
    /// `nullCount` above `numRecords` (by more than the other file's rows,
    /// so summed counts of the table are impossible too).
    NullCountAboveRows,
    /// A negative `nullCount`.
    NegativeNullCount,
    /// `minValues` above `maxValues`.
    MinAboveMax,
    /// A negative `numRecords`, with bounds that are false.
    NegativeNumRecords,
}

impl BadStats {
    /// Every case.
    pub const ALL: [BadStats; 6] = [
        BadStats::AllNullButValues,
        BadStats::AllNullWithFalseBounds,
        BadStats::NullCountAboveRows,
        BadStats::NegativeNullCount,
        BadStats::MinAboveMax,
        BadStats::NegativeNumRecords,
    ];

    /// The bad file's values of `x` and its stats JSON.
    fn file(self) -> (Vec<Option<i64>>, Value) {
        let stats = |records: i64, min: i64, max: i64, nulls: i64| {
            json!({
                "numRecords": records,
                "minValues": {"x": min},
                "maxValues": {"x": max},
                "nullCount": {"x": nulls},
            })
        };
        match self {
            Self::AllNullButValues => (vec![Some(7), Some(8), Some(9)], stats(3, 7, 9, 3)),
            Self::AllNullWithFalseBounds => (vec![None, None], stats(2, -50, 50, 2)),
            Self::NullCountAboveRows => (vec![Some(4)], stats(1, 4, 4, 5)),
            Self::NegativeNullCount => (vec![Some(3), None], stats(2, 3, 3, -1)),
            Self::MinAboveMax => (vec![Some(5)], stats(1, 9, 1, 0)),
            Self::NegativeNumRecords => (vec![Some(1), Some(2)], stats(-2, 50, 60, 0)),
        }
    }
}

/// What a reader must answer for a [`write_bad_stats_table`] table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrueAnswers {
    /// Every value of `x`, file by file (`count(*)` is its length).
    pub values: Vec<Option<i64>>,
}

impl TrueAnswers {
    /// `count(*)`.
    pub fn rows(&self) -> u64 {
        self.values.len() as u64
    }

    /// `count(x)`.
    pub fn non_null(&self) -> u64 {
        self.values.iter().flatten().count() as u64
    }

    /// `min(x)`.
    pub fn min(&self) -> Option<i64> {
        self.values.iter().flatten().min().copied()
    }

    /// `max(x)`.
    pub fn max(&self) -> Option<i64> {
        self.values.iter().flatten().max().copied()
    }

    /// Rows where `x = v`.
    pub fn equal_to(&self, v: i64) -> u64 {
        self.values.iter().filter(|x| **x == Some(v)).count() as u64
    }
}

/// Writes the table of `case` at `dir` (a new or empty directory) and
/// returns what a reader must answer.
pub fn write_bad_stats_table(dir: &Path, case: BadStats) -> Result<TrueAnswers> {
    let mut table = HandTable::new(dir)?;
    let sane: Vec<Option<i64>> = vec![Some(1), Some(2), None];
    let sane_stats = json!({
        "numRecords": 3,
        "minValues": {"x": 1},
        "maxValues": {"x": 2},
        "nullCount": {"x": 1},
    });
    let (bad, bad_stats) = case.file();
    let mut actions = vec![
        HandTable::protocol(),
        HandTable::metadata(
            json!([HandTable::field("x", json!("long"), json!({}))]),
            &[],
            json!({}),
        ),
    ];
    for (name, values, stats) in [
        ("part-0.parquet", &sane, sane_stats),
        (BAD_STATS_FILE, &bad, bad_stats),
    ] {
        let column: ArrayRef = Arc::new(Int64Array::from(values.clone()));
        let batch = RecordBatch::try_from_iter([("x", column)])
            .map_err(TestkitError::arrow("bad stats file"))?;
        let size = table.write_parquet(name, &batch)?;
        actions.push(HandTable::add(name, size, json!({}), Some(stats)));
    }
    table.commit(&actions)?;
    Ok(TrueAnswers {
        values: sane.into_iter().chain(bad).collect(),
    })
}
