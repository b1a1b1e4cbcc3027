//! Regressions of the hardening issue (issue 10) on corrupted copies of
//! small shared tables: declared nullability, DV cardinality, stats that
//! contradict the data, and data files outside the table or its store.

use std::path::Path;

use arrow_array::{Int64Array, RecordBatch};
use dar_scan::{ScanError, Table, TableOptions};
use futures::TryStreamExt;

use super::bad_input::{copy_table, data_file, replace_data_file};
use super::common::*;

const NO_DV: &str = "kernel/table-without-dv-small";
const WITH_DV: &str = "kernel/table-with-dv-small";

/// Rewrites `from` to `to` in every commit of the copied table.
fn edit_log(dir: &Path, from: &str, to: &str) {
    let mut hit = false;
    for e in std::fs::read_dir(dir.join("_delta_log")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&p).unwrap();
            hit |= text.contains(from);
            std::fs::write(&p, text.replace(from, to)).unwrap();
        }
    }
    assert!(hit, "{from} not found in the log");
}

async fn scan(dir: &Path, options: TableOptions) -> Result<Vec<RecordBatch>, ScanError> {
    let t = Table::open_with(dir.to_str().unwrap(), options).await?;
    t.scan().build()?.execute().try_collect().await
}

/// Item 5: a column the schema declares not null that a file lacks, or
/// holds nulls in, is an error naming file and column.
#[tokio::test]
async fn non_nullable_columns_never_come_back_null() {
    let Some((_tmp, dir)) = copy_table(NO_DV) else {
        return;
    };
    edit_log(&dir, r#"\"nullable\":true"#, r#"\"nullable\":false"#);
    let f = data_file(&dir);
    let name = f.file_name().unwrap().to_str().unwrap().to_string();
    // The original data has no nulls: it reads.
    assert_eq!(
        num_rows(&scan(&dir, TableOptions::new()).await.unwrap()),
        10
    );

    let values: Int64Array = (0..10).map(|i| (i != 3).then_some(i)).collect();
    let batch = RecordBatch::try_from_iter([("value", std::sync::Arc::new(values) as _)]).unwrap();
    replace_data_file(&dir, NO_DV, &batch);
    let err = scan(&dir, TableOptions::new()).await.unwrap_err();
    assert!(
        matches!(err, ScanError::NullInNonNullable { nulls: 1, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains(&name) && err.to_string().contains("'value'"),
        "{err}"
    );

    let Some((_tmp, dir)) = copy_table(NO_DV) else {
        return;
    };
    edit_log(&dir, r#"\"nullable\":true"#, r#"\"nullable\":false"#);
    let other = Int64Array::from_iter_values(0..10);
    let batch = RecordBatch::try_from_iter([("other", std::sync::Arc::new(other) as _)]).unwrap();
    replace_data_file(&dir, NO_DV, &batch);
    let err = scan(&dir, TableOptions::new()).await.unwrap_err();
    assert!(matches!(err, ScanError::MissingNonNullable { .. }), "{err}");
    assert!(
        err.to_string().contains(&name) && err.to_string().contains("'value'"),
        "{err}"
    );
}

/// Item 6: a DV whose descriptor says cardinality 0 is still applied (and
/// its disagreement with the bitmap is an error), never skipped.
#[tokio::test]
async fn dv_with_cardinality_zero_is_not_skipped() {
    let Some((_tmp, dir)) = copy_table(WITH_DV) else {
        return;
    };
    edit_log(&dir, r#""cardinality":2"#, r#""cardinality":0"#);
    let err = scan(&dir, TableOptions::new()).await.unwrap_err();
    assert!(matches!(err, ScanError::DeletionVector { .. }), "{err}");
    assert!(err.to_string().contains("cardinality"), "{err}");
    // Its DV file missing: also an error, not the deleted rows.
    let dv = super::bad_input::file_with_extension(&dir, "bin");
    std::fs::remove_file(dv).unwrap();
    let err = scan(&dir, TableOptions::new()).await.unwrap_err();
    assert!(matches!(err, ScanError::DeletionVector { .. }), "{err}");
}

/// Item 7: without a predicate, a file is read whatever its stats say
/// (`numRecords: 0`); an impossible stats record (`min > max`) cannot prune.
#[tokio::test]
async fn stats_that_contradict_the_data_do_not_drop_rows() {
    let Some((_tmp, dir)) = copy_table(NO_DV) else {
        return;
    };
    edit_log(&dir, r#"\"numRecords\":10"#, r#"\"numRecords\":0"#);
    assert_eq!(
        num_rows(&scan(&dir, TableOptions::new()).await.unwrap()),
        10
    );

    edit_log(
        &dir,
        r#"\"minValues\":{\"value\":0}"#,
        r#"\"minValues\":{\"value\":100}"#,
    );
    let t = Table::open(dir.to_str().unwrap()).await.unwrap();
    let plan = t.scan().with_predicate_sql("value = 5").build().unwrap();
    let rows: Vec<RecordBatch> = plan.execute().try_collect().await.unwrap();
    assert_eq!(num_rows(&rows), 1);
}

/// Item 3: a data file on another store is an error naming it, never a
/// read of the table's own store; absolute paths on the table's store are
/// read, unless the table is opened with paths confined to its root.
#[tokio::test]
async fn data_files_outside_the_table() {
    let Some((tmp, dir)) = copy_table(NO_DV) else {
        return;
    };
    let f = data_file(&dir);
    let name = f.file_name().unwrap().to_str().unwrap().to_string();
    let add = format!(r#""path":"{name}""#);

    // Another store: refused by name.
    edit_log(&dir, &add, &format!(r#""path":"s3://other-bucket/{name}""#));
    let err = scan(&dir, TableOptions::new()).await.unwrap_err();
    assert!(matches!(err, ScanError::OtherStore { .. }), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("s3://other-bucket/{name}")),
        "{err}"
    );
    assert!(err.to_string().contains("s3://other-bucket"), "{err}");

    // Elsewhere on the same (local) store, by absolute path: read.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::rename(&f, elsewhere.join(&name)).unwrap();
    let abs = elsewhere.join(&name);
    edit_log(
        &dir,
        &format!(r#""path":"s3://other-bucket/{name}""#),
        &format!(r#""path":"{}""#, abs.to_str().unwrap()),
    );
    assert_eq!(
        num_rows(&scan(&dir, TableOptions::new()).await.unwrap()),
        10
    );
    // ... and refused when paths are confined to the table root.
    let confined = TableOptions::new().with_paths_confined_to_root(true);
    let err = scan(&dir, confined).await.unwrap_err();
    assert!(matches!(err, ScanError::OutsideRoot { .. }), "{err}");
    assert!(err.to_string().contains(abs.to_str().unwrap()), "{err}");
}

/// Item 12: a data file that cannot be read is named once, as the absolute
/// path a person would type (object keys lack the leading `/`).
#[tokio::test]
async fn unreadable_data_file_is_named_once_with_its_full_path() {
    let Some((_tmp, dir)) = copy_table(NO_DV) else {
        return;
    };
    let f = data_file(&dir);
    let name = f.file_name().unwrap().to_str().unwrap().to_string();
    for damage in ["truncate", "remove"] {
        if damage == "truncate" {
            let bytes = std::fs::read(&f).unwrap();
            std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
        } else {
            std::fs::remove_file(&f).unwrap();
        }
        let err = scan(&dir, TableOptions::new())
            .await
            .unwrap_err()
            .to_string();
        assert_eq!(err.matches(&name).count(), 1, "{damage}: {err}");
        assert!(
            err.contains(&format!("'{}'", f.to_str().unwrap())),
            "{damage}: {err}"
        );
    }
}

/// A DV deleting more rows than its file's `numRecords`: the log
/// contradicts itself, so no count comes from it (a count scan read 0
/// rows "exactly"); reading the file reports what is wrong.
#[tokio::test]
async fn a_dv_deleting_more_rows_than_the_file_has_is_never_a_count() {
    let Some((_tmp, dir)) = copy_table(WITH_DV) else {
        return;
    };
    // Commit 1 re-adds the file with its DV (cardinality 2).
    let commit = dir.join("_delta_log").join("00000000000000000001.json");
    let text = std::fs::read_to_string(&commit).unwrap();
    std::fs::write(
        &commit,
        text.replace(r#"numRecords\":10"#, r#"numRecords\":1"#),
    )
    .unwrap();
    let t = Table::open(dir.to_str().unwrap()).await.unwrap();
    let count = t.scan().with_columns(Vec::<String>::new()).build().unwrap();
    assert!(matches!(
        count.statistics().num_rows,
        dar_scan::Estimate::Unknown
    ));
    let err = count.collect().await.unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::RowCountMismatch { .. } | ScanError::DeletionVector { .. }
        ),
        "{err}"
    );
}
