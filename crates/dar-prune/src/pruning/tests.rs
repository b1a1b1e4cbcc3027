use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, StringArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};

use crate::{BoundsSemantics, ColumnStatistics, FileStatistics, Predicate, StatisticsTable};

fn schema() -> Schema {
    Schema::new(vec![
        Field::new("i", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("f", DataType::Float64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ])
}

fn keep(text: &str, stats: &dyn crate::StatisticsProvider) -> Vec<bool> {
    let p = Predicate::parse(text, &schema()).unwrap();
    p.prune(stats).keep.iter().map(|k| k.unwrap()).collect()
}

fn ints(min: Vec<Option<i64>>, max: Vec<Option<i64>>) -> FileStatistics {
    let n = min.len();
    FileStatistics::builder(n)
        .with_num_records(Arc::new(Int64Array::from(vec![10; n])))
        .with_min("i", Arc::new(Int64Array::from(min)))
        .with_max("i", Arc::new(Int64Array::from(max)))
        .with_null_count("i", Arc::new(Int64Array::from(vec![0; n])))
        .build()
}

#[test]
fn comparison_rules() {
    let s = ints(vec![Some(0), Some(10), None], vec![Some(9), Some(19), None]);
    assert_eq!(keep("i = 5", &s), [true, false, true]);
    assert_eq!(keep("i < 10", &s), [true, false, true]);
    assert_eq!(keep("i <= 10", &s), [true, true, true]);
    assert_eq!(keep("i > 9", &s), [false, true, true]);
    assert_eq!(keep("i >= 9", &s), [true, true, true]);
    assert_eq!(keep("NOT (i >= 10)", &s), [true, false, true]);
    assert_eq!(keep("i IN (3, 30)", &s), [true, false, true]);
    assert_eq!(keep("i BETWEEN 12 AND 14", &s), [false, true, true]);
    assert_eq!(keep("i NOT BETWEEN 0 AND 9", &s), [false, true, true]);
    assert_eq!(keep("i > 100 OR i < 0", &s), [false, false, true]);
    assert_eq!(keep("i = NULL", &s), [false, false, false]);
    assert_eq!(keep("i NOT IN (1, NULL)", &s), [false, false, false]);
    // An unknown conjunct is dropped; an unknown disjunct keeps.
    assert_eq!(keep("i > 50 AND s = 'x'", &s), [false, false, true]);
    assert_eq!(keep("i > 50 OR s = 'x'", &s), [true, true, true]);
    let single = ints(vec![Some(5), Some(5)], vec![Some(5), Some(6)]);
    assert_eq!(keep("i != 5", &single), [false, true]);
    assert_eq!(keep("i NOT IN (5, 6)", &single), [false, true]);
}

#[test]
fn null_counts_and_wide_bounds() {
    let s = FileStatistics::builder(4)
        .with_num_records(Arc::new(Int64Array::from(vec![10, 10, 10, 10])))
        .with_min(
            "i",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(1), Some(1)])),
        )
        .with_max(
            "i",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(1), Some(1)])),
        )
        .with_null_count("i", Arc::new(Int64Array::from(vec![0, 10, 3, 3])))
        .with_tight_bounds(BooleanArray::from(vec![
            Some(true),
            Some(false),
            Some(true),
            Some(false),
        ]))
        .build();
    assert_eq!(keep("i IS NULL", &s), [false, true, true, true]);
    assert_eq!(keep("i IS NOT NULL", &s), [true, false, true, true]);
    // All-null (meaningful even with wide bounds) prunes value predicates.
    assert_eq!(keep("i = 1", &s), [true, false, true, true]);
}

#[test]
fn truncated_string_maxima() {
    let long = "a".repeat(32);
    let s = FileStatistics::builder(3)
        .with_min("s", Arc::new(StringArray::from(vec!["abc", "a", "m"])))
        .with_max(
            "s",
            Arc::new(StringArray::from(vec![
                "abc".to_string(),
                long.clone(),
                "n\u{10FFFD}".into(),
            ])),
        )
        .build();
    // "abc" is exact, the 32-char max and "n" + tie-breaker stand for prefix + ∞.
    assert_eq!(keep(&format!("s = '{long}zzz'"), &s), [false, true, false]);
    // 32 × "a" + ∞ stays below "abc".
    assert_eq!(keep("s > 'abc'", &s), [false, false, true]);
    assert_eq!(keep(&format!("s > '{long}'"), &s), [true, true, true]);
    assert_eq!(keep("s >= 'nzzzz'", &s), [false, false, true]);
    assert_eq!(keep("s > 'o'", &s), [false, false, false]);
    assert_eq!(keep("s LIKE 'n\u{10FFFF}%'", &s), [false, false, true]);
    assert_eq!(keep("s LIKE 'b%'", &s), [false, false, false]);
    assert_eq!(keep("s NOT LIKE 'a%'", &s), [false, false, true]);
    assert_eq!(keep("s NOT LIKE 'ab%'", &s), [false, true, true]);
    let s = FileStatistics::builder(1)
        .with_string_prefix_length(4)
        .with_min("s", Arc::new(StringArray::from(vec!["abcd"])))
        .with_max("s", Arc::new(StringArray::from(vec!["abcd"])))
        .build();
    assert_eq!(keep("s = 'abcdz'", &s), [true]);
    assert_eq!(keep("s != 'abcd'", &s), [true]);
}

#[test]
fn timestamp_maxima_are_widened_by_a_millisecond() {
    let s = FileStatistics::builder(1)
        .with_min(
            "ts",
            Arc::new(TimestampMillisecondArray::from(vec![1_000]).with_timezone("UTC")),
        )
        .with_max(
            "ts",
            Arc::new(TimestampMillisecondArray::from(vec![2_000]).with_timezone("UTC")),
        )
        .build();
    assert_eq!(
        keep("ts >= TIMESTAMP '1970-01-01T00:00:02.000999Z'", &s),
        [true]
    );
    assert_eq!(
        keep("ts = TIMESTAMP '1970-01-01T00:00:02.0005Z'", &s),
        [true]
    );
    assert_eq!(
        keep("ts > TIMESTAMP '1970-01-01T00:00:02.000999Z'", &s),
        [false]
    );
    assert_eq!(keep("ts < TIMESTAMP '1970-01-01T00:00:01Z'", &s), [false]);
}

#[test]
fn nan_and_zero_in_sql_order() {
    let t = |sem: BoundsSemantics, min: f64, max: f64| {
        StatisticsTable::new(1).with_column(
            "f",
            ColumnStatistics::unknown()
                .with_min(Arc::new(Float64Array::from(vec![min])))
                .with_max(Arc::new(Float64Array::from(vec![max])))
                .with_semantics(sem),
        )
    };
    let exact = t(BoundsSemantics::exact(), 1.0, 2.0);
    assert_eq!(keep("f > 3", &exact), [false]);
    let parquet = t(BoundsSemantics::parquet(), 1.0, 2.0);
    assert_eq!(
        keep("f > 3", &parquet),
        [true],
        "NaN may hide above the max"
    );
    assert_eq!(
        keep("f != 1", &parquet),
        [true],
        "NaN may hide, and is not 1"
    );
    // NaN, of either sign, is above every number: never below the min.
    assert_eq!(keep("f < 0", &parquet), [false]);
    assert_eq!(keep("f <= 0.5 OR f BETWEEN 3 AND 4", &parquet), [false]);
    assert_eq!(keep("f = 3", &parquet), [false]);
    assert_eq!(keep("f = CAST('NaN' AS DOUBLE)", &exact), [true]);
    assert_eq!(
        keep("f > 1", &t(BoundsSemantics::exact(), 0.0, f64::NAN)),
        [true]
    );
    // The zeros are one value: writers store either for either bound.
    for (min, max) in [(-0.0, -0.0), (-0.0, 0.0), (0.0, -0.0), (0.0, 0.0)] {
        for sem in [BoundsSemantics::exact(), BoundsSemantics::parquet()] {
            let zeros = t(sem, min, max);
            for (text, want) in [
                ("f = 0", true),
                ("f = -0.0", true),
                ("f IN (0.0, 7)", true),
                ("f >= 0", true),
                ("f <= -0.0", true),
                ("f BETWEEN 0 AND 0", true),
                ("f < 0", false),
                // Only a NaN the bounds leave out could be above zero.
                ("f > -0.0", sem.nan_outside_bounds),
                ("f = 1", false),
            ] {
                assert_eq!(keep(text, &zeros), [want], "{text} over [{min}, {max}]");
            }
        }
    }
    assert_eq!(
        keep("f > 0", &t(BoundsSemantics::exact(), -1.0, -0.0)),
        [false]
    );
    assert_eq!(
        keep("f != 0", &t(BoundsSemantics::exact(), -0.0, 0.0)),
        [false]
    );
}

#[test]
fn widened_and_malformed_statistics() {
    // int stats for a long column are widened.
    let s = StatisticsTable::new(2).with_column(
        "i",
        ColumnStatistics::unknown()
            .with_min(Arc::new(Int32Array::from(vec![0, 10])) as ArrayRef)
            .with_max(Arc::new(Int32Array::from(vec![9, 19])) as ArrayRef),
    );
    let p = Predicate::parse("i > 12", &schema()).unwrap();
    let out = p.prune(&s);
    assert_eq!(out.keep, BooleanArray::from(vec![false, true]));
    assert_eq!(out.metrics.unusable_statistics, 0);
    assert_eq!(out.metrics.pruned, 1);
    // Strings for a long column, and an array of the wrong length: kept, counted.
    let s = StatisticsTable::new(2).with_column(
        "i",
        ColumnStatistics::unknown()
            .with_min(Arc::new(StringArray::from(vec!["0", "10"])) as ArrayRef)
            .with_max(Arc::new(Int64Array::from(vec![9])) as ArrayRef)
            .with_null_count(Arc::new(UInt64Array::from(vec![0, 0])) as ArrayRef),
    );
    let out = p.prune(&s);
    assert_eq!(out.keep, BooleanArray::from(vec![true, true]));
    assert_eq!(out.metrics.unusable_statistics, 2);
    // Nanosecond stats for a microsecond column would round: unusable.
    let s = StatisticsTable::new(1).with_column(
        "ts",
        ColumnStatistics::unknown().with_max(Arc::new(
            arrow_array::TimestampNanosecondArray::from(vec![0]).with_timezone("UTC"),
        ) as ArrayRef),
    );
    let out = Predicate::parse("ts > TIMESTAMP '2000-01-01T00:00:00Z'", &schema())
        .unwrap()
        .prune(&s);
    assert_eq!((out.metrics.kept, out.metrics.unusable_statistics), (1, 1));
    let s = StatisticsTable::new(1).with_column(
        "ts",
        ColumnStatistics::unknown().with_max(Arc::new(
            TimestampMicrosecondArray::from(vec![0]).with_timezone("UTC"),
        ) as ArrayRef),
    );
    let out = Predicate::parse("ts > TIMESTAMP '2000-01-01T00:00:00Z'", &schema())
        .unwrap()
        .prune(&s);
    assert_eq!((out.metrics.kept, out.metrics.unusable_statistics), (0, 0));
}

#[test]
fn partition_values_are_exact() {
    let s = FileStatistics::builder(3)
        .with_partition_values(
            "s",
            Arc::new(StringArray::from(vec![Some("eu"), None, Some("us")])),
        )
        .build();
    assert_eq!(keep("s = 'eu'", &s), [true, false, false]);
    assert_eq!(keep("s IS NULL", &s), [false, true, false]);
    assert_eq!(
        keep("s IS NOT NULL AND s != 'us'", &s),
        [true, false, false]
    );
    assert_eq!(keep("s LIKE 'u%'", &s), [false, false, true]);
}

/// Regression (issue 10, item 7): a container whose stats contradict
/// themselves (`min > max`, `null_count > row_count`) is never pruned on
/// them, whatever the predicate; sane containers still prune.
#[test]
fn self_contradicting_stats_are_unknown() {
    let s = FileStatistics::builder(3)
        .with_num_records(Arc::new(Int64Array::from(vec![10, 10, 10])))
        .with_min("i", Arc::new(Int64Array::from(vec![100, 0, 0])))
        .with_max("i", Arc::new(Int64Array::from(vec![1, 9, 9])))
        .with_null_count("i", Arc::new(Int64Array::from(vec![0, 11, 0])))
        .build();
    // File 0: min > max; file 1: more nulls than rows; file 2: sane.
    assert_eq!(keep("i = 5", &s), [true, true, true]);
    assert_eq!(keep("i = 50", &s), [true, true, false]);
    assert_eq!(keep("i IS NULL", &s), [true, true, false]);
    assert_eq!(keep("i IS NOT NULL", &s), [true, true, true]);
}

/// Every value NULL by the counts, yet a bound: under tight bounds one of
/// the two is wrong and nothing says which, so the container is never
/// pruned on either; under wide bounds the protocol allows it (every live
/// row NULL) and it prunes. A negative null or row count makes the
/// container's statistics of the column unknown, its bounds included.
#[test]
fn all_null_with_bounds_and_negative_counts_are_unknown() {
    let s = FileStatistics::builder(4)
        .with_num_records(Arc::new(Int64Array::from(vec![10, 10, 10, -1])))
        .with_tight_bounds(BooleanArray::from(vec![true, false, true, true]))
        .with_min("i", Arc::new(Int64Array::from(vec![5, 5, 5, 5])))
        .with_max("i", Arc::new(Int64Array::from(vec![5, 5, 5, 5])))
        .with_null_count("i", Arc::new(Int64Array::from(vec![10, 10, -3, 0])))
        .build();
    // File 0: tight, all NULL yet bounds; file 1: the same, wide; file 2:
    // a negative null count; file 3: a negative row count.
    assert_eq!(keep("i = 5", &s), [true, false, true, true]);
    assert_eq!(keep("i = 7", &s), [true, false, true, true]);
    assert_eq!(keep("i IS NOT NULL", &s), [true, false, true, true]);
    assert_eq!(keep("i IS NULL", &s), [true, true, true, true]);
    // Row groups and pages are judged by the same rule: a Parquet-style
    // container (no tightness flag) claiming every value NULL with bounds.
    let table = StatisticsTable::new(2).with_column(
        "i",
        ColumnStatistics::unknown()
            .with_min(Arc::new(Int64Array::from(vec![5, 5])))
            .with_max(Arc::new(Int64Array::from(vec![5, 5])))
            .with_null_count(Arc::new(UInt64Array::from(vec![3, 0])))
            .with_row_count(Arc::new(UInt64Array::from(vec![3, 3])))
            .with_semantics(BoundsSemantics::parquet()),
    );
    assert_eq!(keep("i = 5", &table), [true, true]);
    assert_eq!(keep("i = 7", &table), [true, false]);
}
