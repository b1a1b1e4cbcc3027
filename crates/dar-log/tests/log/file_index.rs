//! The typed file index on real tables: partition values, stats (JSON and
//! `stats_parsed`), resolved paths, DV fields, eager vs lazy.

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Decimal128Type, Int64Type};
use dar_log::FileIndexMode;

use crate::common::{builder, load};

#[tokio::test]
async fn typed_partition_values_and_resolved_paths() {
    let Some(dir) = dar_testdata::table("dat/multi_partitioned") else {
        return;
    };
    let s = load(&dir.join("delta")).await.unwrap();
    let fi = s.file_index().unwrap();
    let names: Vec<&str> = fi
        .partition_columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["letter", "date", "data"]);
    let letter = fi.partition_values[0].as_string::<i32>();
    let date = fi.partition_values[1].as_primitive::<Date32Type>();
    let mut rows: Vec<(Option<&str>, Option<i32>, String)> = (0..fi.len())
        .map(|i| {
            (
                letter.is_valid(i).then(|| letter.value(i)),
                date.is_valid(i).then(|| date.value(i)),
                fi.object_path(i).into_owned(),
            )
        })
        .collect();
    rows.sort();
    assert_eq!(rows.len(), 2);
    // `/%20%f` is stored as `%2F%2520%25f` on disk and written `%252F...` in the log:
    // one percent-decoding of the log path gives the object key.
    assert_eq!(rows[0].0, Some("/%20%f"));
    assert_eq!(rows[0].1, Some(0));
    assert!(
        rows[0]
            .2
            .starts_with("letter=%2F%2520%25f/date=1970-01-01/data=hello/"),
        "{}",
        rows[0].2
    );
    assert_eq!(rows[1].0, Some("b"));
    assert_eq!(rows[1].1, Some(0));
    assert!(
        rows[1].2.starts_with("letter=b/date=1970-01-01/data=😈/"),
        "{}",
        rows[1].2
    );
}

#[tokio::test]
async fn decimal_partitions() {
    let Some(dir) = dar_testdata::table("kernel/basic-decimal-table") else {
        return;
    };
    let s = load(&dir).await.unwrap();
    let fi = s.file_index().unwrap();
    let part = fi.partition_values[0].as_primitive::<Decimal128Type>();
    let mut v: Vec<i128> = part.iter().flatten().collect();
    v.sort();
    // decimal(12,5): -2342342.23423, 0.00004, 234.00000, 2342222.23454
    assert_eq!(v, [-234234223423, 4, 23400000, 234222223454]);
}

#[tokio::test]
async fn stats_from_checkpoint_structs_and_json_agree() {
    let Some(dir) = dar_testdata::table("kernel/parsed-stats") else {
        return;
    };
    let s = load(&dir).await.unwrap();
    let fi = s.file_index().unwrap();
    let n = &fi.stats.num_records;
    assert_eq!(n.null_count(), 0);
    assert_eq!(n.iter().flatten().sum::<i64>(), 600);
    let id = fi.stats.column("id").unwrap().unwrap();
    let min = id.min_values.as_ref().unwrap().as_primitive::<Int64Type>();
    let max = id.max_values.as_ref().unwrap().as_primitive::<Int64Type>();
    let mut ranges: Vec<(i64, i64)> = (0..fi.len())
        .map(|i| (min.value(i), max.value(i)))
        .collect();
    ranges.sort();
    // Six files of 100 consecutive ids each.
    assert_eq!(ranges.first(), Some(&(1, 100)));
    assert_eq!(ranges.last(), Some(&(501, 600)));
    for t in [
        "kernel/v1-single-part-struct-stats-only",
        "kernel/v1-multi-part-struct-stats-only",
        "kernel/v2-parquet-sidecars-struct-stats-only",
        "kernel/v2-json-sidecars-struct-stats-only",
    ] {
        let Some(dir) = dar_testdata::table(t) else {
            return;
        };
        let s = load(&dir).await.unwrap();
        let fi = s.file_index().unwrap();
        assert_eq!(fi.stats.num_records.null_count(), 0, "{t}");
    }
}

#[tokio::test]
async fn dv_table_stats_are_wide() {
    let Some(dir) = dar_testdata::table("kernel/table-with-dv-small") else {
        return;
    };
    let s = builder(&dir)
        .with_file_index(FileIndexMode::Lazy)
        .build()
        .await
        .unwrap();
    let fi = s.file_index().unwrap();
    assert_eq!(fi.stats.num_records.value(0), 10);
    assert!(!fi.stats.tight_bounds.value(0));
    assert_eq!(fi.dv.cardinality.value(0), 2);
    // Lazy and eager give the same index.
    let eager = load(&dir).await.unwrap();
    assert_eq!(
        eager.file_index().unwrap().to_record_batch().unwrap(),
        fi.to_record_batch().unwrap()
    );
}
