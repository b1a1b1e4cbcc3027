//! File pruning: the predicate over the snapshot's columnar file index.
//!
//! `dar-log`'s [`FileIndex`] already holds one typed Arrow array per
//! statistic across all files; they go unchanged into `dar-prune`'s
//! [`FileStatistics`] provider (partition values as exact bounds, stats
//! with Delta's truncation semantics and `tightBounds`), and one vectorized
//! pass decides which files may hold matching rows. Kept files become
//! [`ScanTask`]s.

use arrow_array::Array;
use dar_log::FileIndex;
use dar_prune::{ColumnPath, FileStatistics, Predicate, Scalar};

use crate::planning::task::ScanTask;

/// Table property: characters kept of string stats.
const STRING_PREFIX_KEY: &str = "delta.dataSkippingStringPrefixLength";

/// The file index as a `dar-prune` statistics provider, with the column
/// statistics of `columns` (those a predicate references: the others are
/// never parsed).
pub(crate) fn file_statistics(
    index: &FileIndex,
    columns: &[std::sync::Arc<dar_log::stats::ColumnStats>],
    properties: &std::collections::HashMap<String, String>,
    extra: &ExtraColumns<'_>,
) -> FileStatistics {
    let mut b = FileStatistics::builder(index.len())
        .with_num_records(std::sync::Arc::new(index.stats.num_records.clone()))
        .with_tight_bounds(index.stats.tight_bounds.clone());
    if let Some(n) = properties
        .get(STRING_PREFIX_KEY)
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        b = b.with_string_prefix_length(n);
    }
    for c in columns {
        let path = ColumnPath::new(c.column.logical_path.iter().cloned());
        if let Some(min) = &c.min_values {
            b = b.with_min(path.clone(), min.clone());
        }
        if let Some(max) = &c.max_values {
            b = b.with_max(path.clone(), max.clone());
        }
        b = b.with_null_count(path, std::sync::Arc::new(c.null_count.clone()));
    }
    for (col, values) in index.partition_columns.iter().zip(&index.partition_values) {
        b = b.with_partition_values(ColumnPath::new([col.name.clone()]), values.clone());
    }
    for (name, values) in extra.constants {
        b = b.with_partition_values(ColumnPath::new([name.to_string()]), values.clone());
    }
    for (name, values) in extra.known {
        // A value known for some files (null: unknown) is their min and
        // max, with no nulls; the unknown ones keep every bound open.
        let zeros: arrow_array::Int64Array = values
            .logical_nulls()
            .map_or_else(
                || vec![Some(0); values.len()],
                |n| n.iter().map(|valid| valid.then_some(0)).collect(),
            )
            .into_iter()
            .collect();
        let path = ColumnPath::new([name.to_string()]);
        b = b
            .with_min(path.clone(), values.clone())
            .with_max(path.clone(), values.clone())
            .with_null_count(path, std::sync::Arc::new(zeros));
    }
    b.build()
}

/// Which files of `index` may match `predicate` (all when `None`), and
/// how many were pruned. Parses the statistics of the predicate's columns
/// unless the index keeps them already; a failure to decode them (a
/// corrupt checkpoint) is an error naming the file.
pub(crate) fn prune(
    index: &FileIndex,
    properties: &std::collections::HashMap<String, String>,
    predicate: Option<&Predicate>,
) -> dar_log::Result<(Vec<usize>, usize)> {
    prune_with(index, properties, predicate, &ExtraColumns::default())
}

/// Columns beyond the file index that file pruning knows per file, each
/// one array of `index.len()` values.
#[derive(Debug, Default)]
pub(crate) struct ExtraColumns<'a> {
    /// Known exactly for every file, as partition values are (a change
    /// feed's commit version and timestamp).
    pub constants: &'a [(&'a str, arrow_array::ArrayRef)],
    /// Known for the files where the value is not null, and not null
    /// there (the `_change_type` of a change feed's adds and removes;
    /// unknown for `cdc` files, whose rows carry theirs).
    pub known: &'a [(&'a str, arrow_array::ArrayRef)],
}

/// [`prune`] with more columns known per file (see [`ExtraColumns`]).
pub(crate) fn prune_with(
    index: &FileIndex,
    properties: &std::collections::HashMap<String, String>,
    predicate: Option<&Predicate>,
    extra: &ExtraColumns<'_>,
) -> dar_log::Result<(Vec<usize>, usize)> {
    let Some(p) = predicate else {
        return Ok(((0..index.len()).collect(), 0));
    };
    let paths: Vec<Vec<String>> = p
        .columns()
        .iter()
        .map(|(c, _)| c.parts().to_vec())
        .collect();
    let columns = index.stats.for_paths(&paths)?;
    let outcome = p.prune(&file_statistics(index, &columns, properties, extra));
    let keep: Vec<usize> = (0..index.len())
        .filter(|i| outcome.keep.is_valid(*i) && outcome.keep.value(*i))
        .collect();
    let pruned = index.len() - keep.len();
    Ok((keep, pruned))
}

/// The task of file `i` of `index`; fails on a deletion-vector
/// descriptor that breaks the protocol.
pub(crate) fn task(index: &FileIndex, i: usize) -> dar_log::Result<ScanTask> {
    let partition_values = index
        .partition_columns
        .iter()
        .zip(&index.partition_values)
        .map(|(c, a)| {
            let v = Scalar::from_array(a.as_ref(), i).unwrap_or(Scalar::Null);
            (c.name.clone(), v)
        })
        .collect();
    let nr = &index.stats.num_records;
    let size = &index.size;
    Ok(ScanTask {
        object_path: index.object_path(i).into_owned(),
        store_origin: index.store_origin(i).map(str::to_string),
        log_path: index.path.value(i).to_string(),
        size: size
            .is_valid(i)
            .then(|| u64::try_from(size.value(i)).ok())
            .flatten(),
        modification_time: index
            .modification_time
            .is_valid(i)
            .then(|| index.modification_time.value(i)),
        num_records: nr
            .is_valid(i)
            .then(|| u64::try_from(nr.value(i)).ok())
            .flatten(),
        partition_values,
        deletion_vector: index.deletion_vector(i)?,
        paired_dv: None,
        access: None,
    })
}
