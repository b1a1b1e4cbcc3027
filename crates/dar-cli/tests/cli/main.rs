//! Runs the built `dar` binary over the committed sample table and the
//! shared Delta test tables, and checks its output against `dar-scan` and
//! `dar-log` called as libraries.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod allocator;
mod cache;
mod changes;
mod claims;
#[cfg(feature = "distributed")]
mod distributed;
mod duplicates;
mod errors;
mod files;
mod info;
mod output;
mod progress;
mod s3;
mod scan;
mod semantics;
#[cfg(feature = "serve")]
mod serve;
#[cfg(feature = "sql")]
mod sql;
mod stores;
mod trusted_stats;

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use assert_cmd::Command;
pub use dar_testdata::copy_dir;

/// The `dar` binary of this build.
pub fn dar() -> Command {
    let mut c = Command::cargo_bin("dar").unwrap();
    // Errors must not depend on the caller's environment.
    c.env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE");
    c
}

/// The committed sample table (`examples/data/sample`).
pub fn sample() -> PathBuf {
    dar_testdata::workspace_root().join("examples/data/sample")
}

/// `path` as the string the CLI takes.
pub fn arg(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// A copy of the sample table in a temp dir, for corrupting.
pub fn sample_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&sample(), dir.path());
    dir
}

/// Rows of `table` read by `dar-scan` as a library.
pub async fn library_rows(
    table: &str,
    columns: Option<&[&str]>,
    filter: Option<&str>,
) -> dar_scan::Result<Vec<RecordBatch>> {
    let t = dar_scan::Table::open(table).await?;
    let mut b = t.scan();
    if let Some(c) = columns {
        b = b.with_columns(c.iter().copied());
    }
    if let Some(f) = filter {
        b = b.with_predicate_sql(f);
    }
    b.build()?.collect().await
}

/// Asserts that two batch lists hold the same rows in the same order, with
/// the same column names and types.
pub fn assert_same_rows(context: &str, got: &[RecordBatch], want: &[RecordBatch]) {
    let rows = |b: &[RecordBatch]| b.iter().map(RecordBatch::num_rows).sum::<usize>();
    assert_eq!(rows(got), rows(want), "{context}: row count");
    if want.is_empty() {
        return;
    }
    let want_schema = want[0].schema();
    let got_schema = if got.is_empty() {
        return;
    } else {
        got[0].schema()
    };
    // Names and types; exported files carry no field metadata, so nested
    // types are compared without it, and values through their display text.
    assert_eq!(got_schema.fields().len(), want_schema.fields().len());
    for (g, w) in got_schema.fields().iter().zip(want_schema.fields()) {
        assert_eq!(g.name(), w.name(), "{context}");
        assert!(
            g.data_type().equals_datatype(w.data_type()),
            "{context}: {} is {} not {}",
            g.name(),
            g.data_type(),
            w.data_type()
        );
    }
    let text = |b: &[RecordBatch]| {
        arrow_cast::pretty::pretty_format_batches(b)
            .unwrap()
            .to_string()
    };
    assert_eq!(text(got), text(want), "{context}: rows");
}

/// Writes a table `t` under `dir` of `files` files of `rows` rows each:
/// `id`, `grp` (5 values); returns its path.
pub fn write_table(dir: &Path, files: usize, rows: usize) -> String {
    use std::sync::Arc;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("grp", DataType::Utf8, false),
        ]));
        let mut table = dar_testkit::TableWriter::builder(
            store,
            object_store::path::Path::from("t"),
            schema.clone(),
        )
        .create()
        .await
        .unwrap();
        for f in 0..files {
            let ids = Int64Array::from_iter_values((f * rows) as i64..((f + 1) * rows) as i64);
            let groups = StringArray::from_iter_values((0..rows).map(|i| format!("g{}", i % 5)));
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(groups)])
                .unwrap();
            table.append(&batch).await.unwrap();
        }
    });
    arg(&dir.join("t"))
}

/// Writes a table `t` under `dir` of one Int64 column `id`: `files` files
/// of `rows` ids each, counting from `offset`, with the writer's Parquet
/// `options` (default when `None`); returns its path.
pub fn write_id_table(
    dir: &Path,
    files: i64,
    rows: i64,
    offset: i64,
    options: Option<dar_testkit::ParquetOptions>,
) -> String {
    write_ids(dir, files, rows, offset, options, false)
}

/// [`write_id_table`] with ids from 0 and default options, checkpointed
/// at its last version.
pub fn write_checkpointed_id_table(dir: &Path, files: i64, rows: i64) -> String {
    write_ids(dir, files, rows, 0, None, true)
}

fn write_ids(
    dir: &Path,
    files: i64,
    rows: i64,
    offset: i64,
    options: Option<dar_testkit::ParquetOptions>,
    checkpoint: bool,
) -> String {
    use std::sync::Arc;

    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let store = Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let builder = dar_testkit::TableWriter::builder(
            store,
            object_store::path::Path::from("t"),
            schema.clone(),
        );
        let builder = match options {
            Some(o) => builder.with_parquet_options(o),
            None => builder,
        };
        let mut table = builder.create().await.unwrap();
        for f in 0..files {
            let ids = Int64Array::from_iter_values(offset + f * rows..offset + (f + 1) * rows);
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)]).unwrap();
            table.append(&batch).await.unwrap();
        }
        if checkpoint {
            table.checkpoint().await.unwrap();
        }
    });
    arg(&dir.join("t"))
}
