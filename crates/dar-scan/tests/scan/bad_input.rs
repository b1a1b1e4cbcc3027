//! Broken copies of small shared tables: every failure is an error naming
//! the data file, never partial or wrong rows.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray};
use dar_scan::{ScanError, Table};
use futures::TryStreamExt;

use super::common::*;

pub(crate) fn copy_table(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let src = table_path(name)?;
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join("t");
    std::fs::create_dir_all(dst.join("_delta_log")).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
    for e in std::fs::read_dir(src.join("_delta_log")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join("_delta_log").join(e.file_name())).unwrap();
    }
    Some((dir, dst))
}

/// The first file directly in `dir` whose extension is `ext`.
pub(crate) fn file_with_extension(dir: &Path, ext: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == ext))
        .unwrap()
}

pub(crate) fn data_file(dir: &Path) -> PathBuf {
    file_with_extension(dir, "parquet")
}

/// The error's message names the file `f`.
fn assert_names_file(err: &ScanError, f: &Path) {
    let name = f.file_name().unwrap().to_str().unwrap();
    assert!(err.to_string().contains(name), "{err}");
}

async fn scan_err(dir: &Path) -> ScanError {
    let t = Table::open(dir.to_str().unwrap()).await.unwrap();
    let plan = t.scan().build().unwrap();
    plan.execute().try_collect::<Vec<_>>().await.unwrap_err()
}

#[tokio::test]
async fn missing_data_file() {
    let Some((_tmp, dir)) = copy_table("kernel/table-without-dv-small") else {
        return;
    };
    let f = data_file(&dir);
    std::fs::remove_file(&f).unwrap();
    let err = scan_err(&dir).await;
    assert!(matches!(err, ScanError::Io { .. }), "{err}");
    assert_names_file(&err, &f);
}

#[tokio::test]
async fn truncated_data_file() {
    let Some((_tmp, dir)) = copy_table("kernel/table-without-dv-small") else {
        return;
    };
    let f = data_file(&dir);
    let bytes = std::fs::read(&f).unwrap();
    for keep in [bytes.len() - 1, bytes.len() / 2, 10] {
        std::fs::write(&f, &bytes[..keep]).unwrap();
        let err = scan_err(&dir).await;
        assert_names_file(&err, &f);
    }
    // Same length, footer garbled: a decode error naming the file.
    let mut garbled = bytes.clone();
    let n = garbled.len();
    garbled[n - 12..n - 8].copy_from_slice(&[0xff; 4]);
    std::fs::write(&f, &garbled).unwrap();
    let err = scan_err(&dir).await;
    assert_names_file(&err, &f);
}

#[tokio::test]
async fn deletion_vector_with_a_wrong_checksum() {
    let Some((_tmp, dir)) = copy_table("kernel/table-with-dv-small") else {
        return;
    };
    let dv = file_with_extension(&dir, "bin");
    let mut bytes = std::fs::read(&dv).unwrap();
    let n = bytes.len();
    bytes[n - 1] ^= 0x55; // last byte of the CRC
    std::fs::write(&dv, &bytes).unwrap();
    let err = scan_err(&dir).await;
    assert!(matches!(err, ScanError::DeletionVector { .. }), "{err}");
    assert_names_file(&err, &data_file(&dir));
    // The DV file gone: also an error, never the undeleted rows.
    std::fs::remove_file(&dv).unwrap();
    let err = scan_err(&dir).await;
    assert!(matches!(err, ScanError::DeletionVector { .. }), "{err}");
}

#[tokio::test]
async fn schema_mismatch_that_cannot_be_reconciled() {
    let name = "kernel/table-without-dv-small";
    let Some((_tmp, dir)) = copy_table(name) else {
        return;
    };
    let f = data_file(&dir);
    // Replace the file with one whose `value` column is a string; the log
    // gets the new size so only the schema is wrong.
    let values: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
    let batch =
        RecordBatch::try_from_iter([("value", Arc::new(StringArray::from(values)) as _)]).unwrap();
    replace_data_file(&dir, name, &batch);
    let err = scan_err(&dir).await;
    match &err {
        ScanError::SchemaMismatch { path, column, .. } => {
            assert!(path.ends_with(f.file_name().unwrap().to_str().unwrap()));
            assert_eq!(column, "value");
        }
        other => panic!("expected a schema mismatch, got {other}"),
    }
}

#[tokio::test]
async fn dv_file_row_count_mismatch() {
    // The log's numRecords disagrees with the file under a DV: the DV's row
    // indexes cannot be trusted, so the scan fails.
    let Some((_tmp, dir)) = copy_table("kernel/table-with-dv-small") else {
        return;
    };
    let log = dir.join("_delta_log/00000000000000000001.json");
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("\\\"numRecords\\\":10", "\\\"numRecords\\\":11");
    std::fs::write(&log, text).unwrap();
    let err = scan_err(&dir).await;
    assert!(
        matches!(
            err,
            ScanError::RowCountMismatch {
                expected: 11,
                actual: 10,
                ..
            }
        ),
        "{err}"
    );
}

/// Rewrites the single data file of a copied table with `batch` and fixes
/// the size recorded in the log.
pub(crate) fn replace_data_file(dir: &Path, original: &str, batch: &RecordBatch) {
    let f = data_file(dir);
    let mut buf = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    std::fs::write(&f, &buf).unwrap();
    let log = dir.join("_delta_log/00000000000000000000.json");
    let text = std::fs::read_to_string(&log).unwrap();
    let old_size = std::fs::metadata(table_path(original).unwrap().join(f.file_name().unwrap()))
        .unwrap()
        .len();
    let text = text.replace(
        &format!("\"size\":{old_size}"),
        &format!("\"size\":{}", buf.len()),
    );
    std::fs::write(&log, text).unwrap();
}

#[tokio::test]
async fn column_found_case_insensitively_is_not_pruned_as_absent() {
    // Spark resolves names case-insensitively: a file column `VALUE` is the
    // table's `value`. Statistics lookups go by exact name, so the file
    // must not be pruned as if the column were all NULL.
    let name = "kernel/table-without-dv-small";
    let Some((_tmp, dir)) = copy_table(name) else {
        return;
    };
    let t = Table::open(dir.to_str().unwrap()).await.unwrap();
    let value_type = t
        .schema()
        .field_with_name("value")
        .unwrap()
        .data_type()
        .clone();
    let values = arrow_cast::cast(
        &arrow_array::Int64Array::from_iter_values(0..10),
        &value_type,
    )
    .unwrap();
    let batch = RecordBatch::try_from_iter([("VALUE", values)]).unwrap();
    replace_data_file(&dir, name, &batch);
    let t = Table::open(dir.to_str().unwrap()).await.unwrap();
    let plan = t.scan().with_predicate_sql("value = 3").build().unwrap();
    assert_eq!(rows(&collect(&plan).await), vec!["value=3"]);
    assert_eq!(num_rows(&collect(&t.scan().build().unwrap()).await), 10);
}
