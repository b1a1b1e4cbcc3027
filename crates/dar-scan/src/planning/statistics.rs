//! What the log says about the rows a plan (or a part of it) returns,
//! without reading a data file: the Delta statistics rules in one place,
//! for engines that plan with statistics (dar-datafusion converts them,
//! nothing more).
//!
//! | statistic | source | exact when |
//! |---|---|---|
//! | rows | `numRecords - DV cardinality` | no DV, no predicate, every count known |
//! | bytes | file sizes (compressed) | never |
//! | partition min/max | partition values | no DV, no predicate |
//! | min/max | `minValues`/`maxValues` | integer, decimal, date, boolean columns; no DV, no predicate, tight bounds |
//! | null count | `nullCount` summed (absent without tight bounds) | no DV, no predicate |
//!
//! Otherwise a statistic is an inexact bound, or unknown when a file lacks
//! it. Bounds Delta may truncate are weakened: a string maximum (cut at a
//! prefix) is unknown, a timestamp maximum (written in milliseconds) is
//! raised by 999 µs, floats (NaN, and the float grid of a widened column)
//! are never exact.
//!
//! Impossible or self-contradicting statistics are never exact: dar-log
//! decides which (its `stats` module applies one rule for every reader of
//! the log's statistics: a negative `numRecords` or `nullCount`,
//! `nullCount > numRecords`, every value null yet a bound under tight
//! bounds, `min > max`) and reads them as unknown. A file with such
//! statistics has no count and no bounds here, so the plan's row count,
//! null count and bounds of that column are unknown, never exact.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};
use dar_log::FileIndex;
use dar_log::stats::ColumnStats;
use dar_prune::Scalar;

use crate::execution::state::ScanState;
use crate::planning::task::ScanTask;

/// How far a statistic can be trusted.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Estimate<T> {
    /// The value itself.
    Exact(T),
    /// An estimate; for a minimum or maximum, a bound the true value lies
    /// within.
    Inexact(T),
    /// Not known.
    Unknown,
}

impl<T> Estimate<T> {
    fn of(value: Option<T>, exact: bool) -> Self {
        match value {
            Some(v) if exact => Self::Exact(v),
            Some(v) => Self::Inexact(v),
            None => Self::Unknown,
        }
    }

    /// The same value, never exact.
    pub fn to_inexact(self) -> Self {
        match self {
            Self::Exact(v) | Self::Inexact(v) => Self::Inexact(v),
            Self::Unknown => Self::Unknown,
        }
    }

    /// The value, exact or not.
    pub fn value(&self) -> Option<&T> {
        match self {
            Self::Exact(v) | Self::Inexact(v) => Some(v),
            Self::Unknown => None,
        }
    }
}

/// Statistics of one output column.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ColumnStatistics {
    /// Null values.
    pub null_count: Estimate<u64>,
    /// Smallest value.
    pub min: Estimate<Scalar>,
    /// Largest value.
    pub max: Estimate<Scalar>,
}

impl ColumnStatistics {
    /// Nothing known.
    pub fn unknown() -> Self {
        Self {
            null_count: Estimate::Unknown,
            min: Estimate::Unknown,
            max: Estimate::Unknown,
        }
    }
}

/// Statistics of the rows a plan returns.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanStatistics {
    /// Rows returned.
    pub num_rows: Estimate<u64>,
    /// Bytes of the files read (compressed, so never exact).
    pub total_bytes: Estimate<u64>,
    /// One per output column, in output order.
    pub columns: Vec<ColumnStatistics>,
}

impl PlanStatistics {
    /// Nothing known, for `columns` output columns.
    pub fn unknown(columns: usize) -> Self {
        Self {
            num_rows: Estimate::Unknown,
            total_bytes: Estimate::Unknown,
            columns: vec![ColumnStatistics::unknown(); columns],
        }
    }
}

/// The statistics of reading `tasks`, whose rows in `index` are `rows`
/// (`None`: not known, so no column statistics).
pub(crate) fn statistics(
    state: &ScanState,
    index: Option<&FileIndex>,
    tasks: &[ScanTask],
    rows: Option<&[usize]>,
) -> PlanStatistics {
    let has_dv = tasks.iter().any(|t| t.deletion_vector.is_some());
    let exact = !has_dv && state.spec.predicate.is_none();
    let live_rows: Option<u64> = tasks.iter().map(ScanTask::live_rows).sum();
    let bytes: Option<u64> = tasks.iter().map(|t| t.size).sum();
    let loaded = match (index, rows) {
        (Some(index), Some(rows)) => data_stats(state, index, rows),
        _ => None,
    };
    let by_name: HashMap<&str, &ColumnStats> = loaded
        .iter()
        .flat_map(|l| &l.columns)
        .filter_map(|c| match c.column.logical_path.as_slice() {
            [name] => Some((name.as_str(), c.as_ref())),
            _ => None,
        })
        .collect();
    let columns = state
        .output
        .iter()
        .map(|c| {
            let field = &state.fields[c.root];
            match &loaded {
                _ if !c.children.is_empty() => ColumnStatistics::unknown(),
                _ if state.is_partition[c.root] => {
                    partition_column(field.name(), tasks, exact && live_rows.is_some())
                }
                Some(l) => match by_name.get(field.name().as_str()) {
                    Some(stats) => data_column(stats, field.data_type(), l, exact),
                    None => ColumnStatistics::unknown(),
                },
                None => ColumnStatistics::unknown(),
            }
        })
        .collect();
    let stats = PlanStatistics {
        num_rows: Estimate::of(live_rows, exact),
        total_bytes: Estimate::of(bytes, false),
        columns,
    };
    match state.spec.limit {
        Some(limit) => apply_limit(stats, limit as u64),
        None => stats,
    }
}

fn apply_limit(mut stats: PlanStatistics, limit: u64) -> PlanStatistics {
    stats.num_rows = match stats.num_rows {
        Estimate::Exact(n) => Estimate::Exact(n.min(limit)),
        Estimate::Inexact(n) => Estimate::Inexact(n.min(limit)),
        Estimate::Unknown => Estimate::Inexact(limit),
    };
    for c in &mut stats.columns {
        let taken = std::mem::replace(c, ColumnStatistics::unknown());
        *c = ColumnStatistics {
            null_count: taken.null_count.to_inexact(),
            min: taken.min.to_inexact(),
            max: taken.max.to_inexact(),
        };
    }
    stats
}

/// The smaller (`min`) or larger of `acc` and `v`; `None` (stop) when they
/// do not compare.
fn fold(acc: Option<Scalar>, v: Scalar, min: bool) -> Option<Option<Scalar>> {
    Some(Some(match acc {
        None => v,
        Some(a) => {
            let ord = compare(&v, &a)?;
            if (min && ord.is_lt()) || (!min && ord.is_gt()) {
                v
            } else {
                a
            }
        }
    }))
}

/// The order of two non-null scalars of the same type (`None` across
/// types, or for NaN).
fn compare(a: &Scalar, b: &Scalar) -> Option<Ordering> {
    use Scalar as S;
    match (a, b) {
        (S::Boolean(x), S::Boolean(y)) => Some(x.cmp(y)),
        (S::Int8(x), S::Int8(y)) => Some(x.cmp(y)),
        (S::Int16(x), S::Int16(y)) => Some(x.cmp(y)),
        (S::Int32(x), S::Int32(y)) => Some(x.cmp(y)),
        (S::Int64(x), S::Int64(y)) => Some(x.cmp(y)),
        (S::Float32(x), S::Float32(y)) => x.partial_cmp(y),
        (S::Float64(x), S::Float64(y)) => x.partial_cmp(y),
        (
            S::Decimal128 {
                value: x, scale: s, ..
            },
            S::Decimal128 {
                value: y, scale: t, ..
            },
        ) if s == t => Some(x.cmp(y)),
        (S::Utf8(x), S::Utf8(y)) => Some(x.cmp(y)),
        (S::Binary(x), S::Binary(y)) => Some(x.cmp(y)),
        (S::Date32(x), S::Date32(y)) => Some(x.cmp(y)),
        (S::Timestamp(x), S::Timestamp(y)) | (S::TimestampNtz(x), S::TimestampNtz(y)) => {
            Some(x.cmp(y))
        }
        _ => None,
    }
}

fn partition_column(name: &str, tasks: &[ScanTask], exact: bool) -> ColumnStatistics {
    let mut nulls: u64 = 0;
    let (mut min, mut max) = (None::<Scalar>, None::<Scalar>);
    for t in tasks {
        match t.partition_value(name) {
            Some(Scalar::Null) | None => nulls += t.live_rows().unwrap_or(0),
            Some(s) => {
                let (Some(lo), Some(hi)) =
                    (fold(min, s.clone(), true), fold(max, s.clone(), false))
                else {
                    return ColumnStatistics::unknown();
                };
                (min, max) = (lo, hi);
            }
        }
    }
    ColumnStatistics {
        null_count: Estimate::of(Some(nulls), exact),
        min: Estimate::of(min, exact),
        max: Estimate::of(max, exact),
    }
}

/// How far a column's Delta min/max can be trusted.
enum BoundKind {
    /// Exact when the file set allows.
    Exact,
    /// A bound, never exact (floats: NaN is not in the stats).
    Inexact,
    /// Min a bound; max not a bound (truncated strings and binaries).
    MinOnly,
    /// Min a bound; max written in milliseconds (add 999 µs).
    MillisMax,
}

fn bound_kind(t: &DataType) -> Option<BoundKind> {
    Some(match t {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Date32
        | DataType::Decimal128(_, _) => BoundKind::Exact,
        DataType::Float32 | DataType::Float64 => BoundKind::Inexact,
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => BoundKind::MinOnly,
        DataType::Timestamp(TimeUnit::Microsecond, _) => BoundKind::MillisMax,
        _ => return None,
    })
}

/// The log's statistics of a plan's top-level data columns, and what
/// holds for all of them.
struct DataStats<'a> {
    /// The output's top-level data columns that have statistics.
    columns: Vec<Arc<ColumnStats>>,
    /// The plan's files (rows of the file index).
    rows: &'a [usize],
    /// Whether every file's bounds are tight.
    tight: bool,
}

/// The statistics of every top-level data column of the output, loaded
/// together: one pass over the files' statistics whatever the width (a
/// column at a time parsed every file's statistics once per column, so a
/// wide table's first plan cost columns² work), matched by path through a
/// hash set, never by a search per column. `None` when they cannot be
/// decoded (statistics are estimates: unknown then).
fn data_stats<'a>(
    state: &ScanState,
    index: &FileIndex,
    rows: &'a [usize],
) -> Option<DataStats<'a>> {
    let paths: Vec<Vec<String>> = state
        .output
        .iter()
        .filter(|c| c.children.is_empty() && !state.is_partition[c.root])
        .map(|c| vec![state.fields[c.root].name().clone()])
        .collect();
    let columns = index.stats.for_paths(&paths).ok()?;
    let tight = rows.iter().all(|&i| {
        let t = &index.stats.tight_bounds;
        t.is_valid(i) && t.value(i)
    });
    Some(DataStats {
        columns,
        rows,
        tight,
    })
}

fn data_column(
    stats: &ColumnStats,
    data_type: &DataType,
    files: &DataStats<'_>,
    exact: bool,
) -> ColumnStatistics {
    let (rows, tight) = (files.rows, files.tight);
    let nulls: Option<u64> = rows
        .iter()
        .map(|&i| {
            let n = &stats.null_count;
            n.is_valid(i)
                .then(|| u64::try_from(n.value(i)).ok())
                .flatten()
        })
        .sum();
    // Under `tightBounds = false` a null count "means nothing" unless it is
    // 0 or all rows (protocol §8.2): no bound at all then.
    let nulls = nulls.filter(|_| tight);
    let mut out = ColumnStatistics {
        null_count: Estimate::of(nulls, exact),
        ..ColumnStatistics::unknown()
    };
    let Some(kind) = bound_kind(data_type) else {
        return out;
    };
    let value = |array: Option<&arrow_array::ArrayRef>, i: usize| {
        array.and_then(|a| Scalar::from_array(a.as_ref(), i).filter(|s| !s.is_null()))
    };
    let exact_bounds = exact && tight && matches!(kind, BoundKind::Exact);
    let bound = |array: Option<&arrow_array::ArrayRef>, min: bool| -> Option<Scalar> {
        rows.iter()
            .map(|&i| value(array, i))
            .try_fold(None, |acc, v| fold(acc, v?, min))
            .flatten()
    };
    out.min = Estimate::of(bound(stats.min_values.as_ref(), true), exact_bounds);
    out.max = match kind {
        BoundKind::MinOnly => Estimate::Unknown,
        BoundKind::MillisMax => match bound(stats.max_values.as_ref(), false) {
            Some(Scalar::Timestamp(t)) => {
                Estimate::Inexact(Scalar::Timestamp(t.saturating_add(999)))
            }
            Some(Scalar::TimestampNtz(t)) => {
                Estimate::Inexact(Scalar::TimestampNtz(t.saturating_add(999)))
            }
            _ => Estimate::Unknown,
        },
        _ => Estimate::of(bound(stats.max_values.as_ref(), false), exact_bounds),
    };
    out
}
