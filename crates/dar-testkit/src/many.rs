//! A table of many small files with one deleted row each: the shape of the
//! W4 benchmark (full scan with DVs) and of distributed-scan tests.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use object_store::ObjectStore;
use object_store::path::Path;

use crate::dv::DvStorage;
use crate::error::{Result, TestkitError};
use crate::writer::TableWriter;

/// Writes a table at `root` of `files` files of `rows` rows each, in three
/// commits: one append (the files, one per value of the partition column
/// `part`), one DV delete of physical row 1 in every file (one shared DV
/// file), and a checkpoint. Columns: `id` (`0..files*rows`, file `k` holds
/// `k*rows..(k+1)*rows` in order), `grp` (`g0`..`g4`, by `id % 5`), `part`
/// (`k`). `rows` must be at least 2.
pub async fn write_many_files(
    store: Arc<dyn ObjectStore>,
    root: Path,
    files: usize,
    rows: usize,
) -> Result<TableWriter> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("grp", DataType::Utf8, true),
        Field::new("part", DataType::Int64, true),
    ]));
    let mut table = TableWriter::builder(store, root, Arc::clone(&schema))
        .with_partition_columns(["part"])
        .with_deletion_vectors(true)
        .create()
        .await?;
    let n = files * rows;
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..n as i64)),
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("g{}", i % 5)),
            )),
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| (i / rows) as i64),
            )),
        ],
    )
    .map_err(|source| TestkitError::Arrow {
        context: "building the many-files batch".into(),
        source,
    })?;
    let commit = table.append(&batch).await?;
    let deleted = [1u64];
    let deletes: Vec<(&str, &[u64])> = commit
        .added
        .iter()
        .map(|f| (f.path.as_str(), &deleted[..]))
        .collect();
    table.delete_rows_in(&deletes, DvStorage::File).await?;
    table.checkpoint().await?;
    Ok(table)
}

#[cfg(test)]
mod tests {
    use object_store::memory::InMemory;

    use super::*;

    #[tokio::test]
    async fn one_file_per_part_and_one_deleted_row_each() {
        let table = write_many_files(Arc::new(InMemory::new()), Path::from("t"), 4, 3)
            .await
            .unwrap();
        assert_eq!(table.files().count(), 4);
        assert!(table.files().all(|f| f.deletion_vector.is_some()));
        assert_eq!(table.live_rows(), 8);
        assert_eq!(table.version(), 2);
    }
}
