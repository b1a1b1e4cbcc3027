//! Live `add` actions as raw Arrow columns, before typing.
//!
//! Commits append into an [`AddColumnsBuilder`] straight from the parser;
//! checkpoints hand over their projected `add` struct columns, filtered.
//! Both end up as an [`AddColumns`] batch: no per-file Rust struct with
//! owned strings ever exists. Typing (partition values, statistics) happens
//! later, once per batch, when the file index is built.

use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, Int32Builder, Int64Builder, MapBuilder, StringBuilder};
use arrow_array::{
    Array, BooleanArray, Int32Array, Int64Array, MapArray, StringArray, StructArray, UInt32Array,
};
use arrow_select::filter::{FilterBuilder, FilterPredicate};

use crate::checkpoint::RetainedStats;
use crate::commit::PartitionEntries;
use crate::error::{LogError, Result};
use crate::paths::{TablePaths, is_plain_relative};

/// Deletion-vector descriptor columns (null rows: no DV).
#[derive(Debug, Clone)]
pub struct DvColumns {
    /// `storageType`.
    pub storage_type: StringArray,
    /// `pathOrInlineDv`.
    pub path_or_inline_dv: StringArray,
    /// `offset`.
    pub offset: Int32Array,
    /// `sizeInBytes`.
    pub size_in_bytes: Int32Array,
    /// `cardinality`.
    pub cardinality: Int64Array,
}

impl DvColumns {
    /// The DV of row `i` as `(storageType, pathOrInlineDv, offset)`, or
    /// `None` when the row has no DV.
    pub fn key_parts(&self, i: usize) -> Option<(&str, &str, Option<i32>)> {
        if self.storage_type.is_null(i) {
            return None;
        }
        let offset = (!self.offset.is_null(i)).then(|| self.offset.value(i));
        Some((
            self.storage_type.value(i),
            self.path_or_inline_dv.value(i),
            offset,
        ))
    }

    /// `n` rows without a DV. The buffers are zeroed allocations the OS
    /// maps lazily: a table without DVs pays no resident memory for them.
    pub fn absent(n: usize) -> Self {
        Self {
            storage_type: StringArray::new_null(n),
            path_or_inline_dv: StringArray::new_null(n),
            offset: Int32Array::new_null(n),
            size_in_bytes: Int32Array::new_null(n),
            cardinality: Int64Array::new_null(n),
        }
    }

    /// Whether no row has a DV.
    pub fn is_absent(&self) -> bool {
        self.storage_type.null_count() == self.storage_type.len()
    }

    /// Bytes the columns hold.
    pub fn memory_size(&self) -> usize {
        self.storage_type.get_array_memory_size()
            + self.path_or_inline_dv.get_array_memory_size()
            + self.offset.get_array_memory_size()
            + self.size_in_bytes.get_array_memory_size()
            + self.cardinality.get_array_memory_size()
    }

    fn filter(&self, mask: &FilterPredicate) -> Result<Self> {
        Ok(Self {
            storage_type: filter_as(&self.storage_type, mask)?,
            path_or_inline_dv: filter_as(&self.path_or_inline_dv, mask)?,
            offset: filter_as(&self.offset, mask)?,
            size_in_bytes: filter_as(&self.size_in_bytes, mask)?,
            cardinality: filter_as(&self.cardinality, mask)?,
        })
    }
}

/// Where the statistics of a batch of adds are.
#[derive(Debug, Clone)]
pub enum AddStats {
    /// In the batch: `add.stats` text per file (null: none) and, from a
    /// checkpoint, `add.stats_parsed`.
    Inline {
        /// `add.stats`.
        json: StringArray,
        /// `add.stats_parsed`.
        parsed: Option<StructArray>,
    },
    /// Kept compressed with a checkpoint file's other stats: each file's
    /// row in that file, and the counts decoded at open.
    Retained {
        /// The stats column chunks of the checkpoint file.
        file: Arc<RetainedStats>,
        /// Each file's row in it.
        rows: UInt32Array,
        /// `numRecords`.
        num_records: Int64Array,
        /// `tightBounds`.
        tight_bounds: BooleanArray,
    },
}

impl AddStats {
    fn filter(&self, mask: &FilterPredicate) -> Result<Self> {
        Ok(match self {
            Self::Inline { json, parsed } => Self::Inline {
                json: filter_as(json, mask)?,
                parsed: parsed.as_ref().map(|s| filter_as(s, mask)).transpose()?,
            },
            Self::Retained {
                file,
                rows,
                num_records,
                tight_bounds,
            } => Self::Retained {
                file: Arc::clone(file),
                rows: filter_as(rows, mask)?,
                num_records: filter_as(num_records, mask)?,
                tight_bounds: filter_as(tight_bounds, mask)?,
            },
        })
    }
}

/// A batch of live adds from one source (the commits, or one checkpoint file).
#[derive(Debug, Clone)]
pub struct AddColumns {
    /// `path` as written (URI-encoded, relative or absolute).
    pub path: StringArray,
    /// `partitionValues`: map from physical column name to the serialized value.
    pub partition_values: MapArray,
    /// `size`.
    pub size: Int64Array,
    /// `modificationTime` (ms).
    pub modification_time: Int64Array,
    /// The statistics, or where they are kept.
    pub stats: AddStats,
    /// `partitionValues_parsed` (checkpoints only).
    pub partition_values_parsed: Option<StructArray>,
    /// The deletion-vector descriptor.
    pub dv: DvColumns,
    /// True when replay found every path a plain relative name (see
    /// [`crate::paths`]): the file index then joins them to the root as
    /// they stand, without checking each again. False when unknown.
    pub plain_paths: bool,
}

/// The rows of `a` that `keep` selects. A column with no value at all
/// (the DV columns of a table without DVs, as a rule) is not walked: its
/// kept rows are as many nulls.
fn filter_as<A: Array + Clone + 'static>(a: &A, keep: &FilterPredicate) -> Result<A> {
    let out = if a.null_count() == a.len() {
        arrow_array::new_null_array(a.data_type(), keep.count())
    } else {
        keep.filter(a)
            .map_err(|e| LogError::arrow("filtering adds", e))?
    };
    out.as_any().downcast_ref::<A>().cloned().ok_or_else(|| {
        LogError::arrow(
            "filtering adds",
            arrow_schema::ArrowError::CastError("type changed".into()),
        )
    })
}

impl AddColumns {
    /// Number of files.
    pub fn len(&self) -> usize {
        self.path.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.path.is_empty()
    }

    /// Keep the rows where `mask` is true (null is false).
    pub fn filter(&self, mask: &BooleanArray) -> Result<Self> {
        // One predicate for every column: its runs of kept rows are found
        // once.
        let mask = &FilterBuilder::new(mask).optimize().build();
        Ok(Self {
            path: filter_as(&self.path, mask)?,
            partition_values: filter_as(&self.partition_values, mask)?,
            size: filter_as(&self.size, mask)?,
            modification_time: filter_as(&self.modification_time, mask)?,
            stats: self.stats.filter(mask)?,
            partition_values_parsed: self
                .partition_values_parsed
                .as_ref()
                .map(|s| filter_as(s, mask))
                .transpose()?,
            dv: self.dv.filter(mask)?,
            plain_paths: self.plain_paths,
        })
    }

    /// Drop the rows whose logical-file key (resolved by `paths`) is in
    /// `removed`.
    pub fn without(&self, removed: &SeenKeys, paths: &TablePaths) -> Result<Self> {
        match self.live_mask(removed, paths)? {
            None => Ok(self.clone()),
            Some(mask) => self.filter(&mask),
        }
    }

    /// Which rows [`AddColumns::without`] keeps; `None` when all.
    pub fn live_mask(
        &self,
        removed: &SeenKeys,
        paths: &TablePaths,
    ) -> Result<Option<BooleanArray>> {
        if removed.is_empty() {
            return Ok(None);
        }
        let mask = (0..self.len())
            .map(|i| {
                let path = self.path.value(i);
                // Most files have a plain relative path and no DV: look the
                // path up as it stands, without building a key per row.
                let seen = match self.dv.key_parts(i) {
                    None if self.plain_paths || is_plain_relative(path) => {
                        removed.contains_key(path)
                    }
                    dv => removed.contains_key(&paths.file_key(path, dv)?),
                };
                Ok(Some(!seen))
            })
            .collect::<Result<BooleanArray>>()?;
        // Nothing removed here: the arrays are shared instead of copied.
        Ok((mask.true_count() != self.len()).then_some(mask))
    }

    /// The serialized partition value of `column` (physical name) per row;
    /// a missing key reads as null.
    pub fn partition_strings(&self, column: &str) -> StringArray {
        let keys = self.partition_values.keys();
        let values = self.partition_values.values();
        let (Some(keys), Some(values)) = (
            keys.as_any().downcast_ref::<StringArray>(),
            values.as_any().downcast_ref::<StringArray>(),
        ) else {
            return StringArray::new_null(self.len());
        };
        let offsets = self.partition_values.value_offsets();
        (0..self.len())
            .map(|row| {
                if self.partition_values.is_null(row) {
                    return None;
                }
                let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                (start..end)
                    .find(|&j| keys.value(j) == column)
                    .and_then(|j| (!values.is_null(j)).then(|| values.value(j)))
            })
            .collect()
    }
}

/// The logical-file keys replay has seen, each with where it first saw
/// it. aHash with a random per-process key: several times faster than
/// SipHash on short paths, still resistant to crafted collisions from a
/// hostile log.
pub type SeenKeys = std::collections::HashMap<FileKey, SeenAt, ahash::RandomState>;

/// Where replay first saw a logical-file key: the log file (its place in
/// replay order) and, for an add, the line; a commit holds at most one add
/// per key, so a second add of a key in one file is compared with the
/// first (see [`crate::replay`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenAt {
    file: u32,
    line: u32,
}

impl SeenAt {
    const REMOVE: u32 = u32::MAX;

    /// An add on `line` of log file number `file`.
    pub(crate) fn add(file: u32, line: usize) -> Self {
        Self {
            file,
            line: u32::try_from(line).unwrap_or(Self::REMOVE - 1),
        }
    }

    /// A remove in log file number `file`.
    pub(crate) fn remove(file: u32) -> Self {
        Self {
            file,
            line: Self::REMOVE,
        }
    }

    /// The line of the add this records, when it is an add of log file `file`.
    pub(crate) fn add_line_in(self, file: u32) -> Option<usize> {
        (self.file == file && self.line != Self::REMOVE).then_some(self.line as usize)
    }
}

/// The logical-file key `(path, dvUniqueId)` packed in one string:
/// the path, then (when there is a DV) a NUL byte and the DV unique id.
/// Paths never contain NUL, so the packing is unambiguous.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileKey(Box<str>);

impl FileKey {
    /// Build the key of `path` with an optional DV unique id.
    pub fn new(path: &str, dv_unique_id: Option<&str>) -> Self {
        match dv_unique_id {
            None => Self(path.into()),
            Some(id) => {
                let mut s = String::with_capacity(path.len() + 1 + id.len());
                s.push_str(path);
                s.push('\0');
                s.push_str(id);
                Self(s.into())
            }
        }
    }
}

impl FileKey {
    /// A key already packed (see [`crate::TablePaths::file_key`]).
    pub(crate) fn from_packed(packed: String) -> Self {
        Self(packed.into_boxed_str())
    }

    /// The packed key: the path, then a NUL and the DV unique id when
    /// there is a DV.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A key without a DV is its path: lets a set be probed with a `&str`.
/// Consistent with the derived `Hash`/`Eq`, which hash and compare the str.
impl std::borrow::Borrow<str> for FileKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// Appends adds one at a time (from commit JSON) into raw columns.
#[derive(Debug)]
pub struct AddColumnsBuilder {
    path: StringBuilder,
    partition_values: MapBuilder<StringBuilder, StringBuilder>,
    size: Int64Builder,
    modification_time: Int64Builder,
    stats: StringBuilder,
    dv_storage_type: StringBuilder,
    dv_path: StringBuilder,
    dv_offset: Int32Builder,
    dv_size: Int32Builder,
    dv_cardinality: Int64Builder,
    /// Every path appended so far is a plain relative name.
    plain_paths: bool,
}

impl Default for AddColumnsBuilder {
    fn default() -> Self {
        Self::with_capacity(0, 0)
    }
}

/// One add as borrowed from the parser.
#[derive(Debug)]
pub struct AddRow<'a> {
    /// `path`.
    pub path: &'a str,
    /// `partitionValues` (raw JSON, decoded into the map builder).
    pub partition_values: PartitionEntries<'a>,
    /// `size` (`None` where the log gives none, as a `remove` may not:
    /// a null, never a placeholder).
    pub size: Option<i64>,
    /// `modificationTime` (`None` for actions without one: `remove`, `cdc`).
    pub modification_time: Option<i64>,
    /// `stats`.
    pub stats: Option<&'a str>,
    /// DV fields: storage type, path or inline, offset, size, cardinality.
    pub dv: Option<(&'a str, &'a str, Option<i32>, i32, i64)>,
    /// Whether `path` is known to be a plain relative name.
    pub plain_path: bool,
}

impl AddColumnsBuilder {
    /// A builder sized for about `rows` adds whose paths total `path_bytes`
    /// (growing a builder copies everything built so far).
    pub fn with_capacity(rows: usize, path_bytes: usize) -> Self {
        Self {
            path: StringBuilder::with_capacity(rows, path_bytes),
            partition_values: MapBuilder::with_capacity(
                None,
                StringBuilder::with_capacity(rows, rows * 16),
                StringBuilder::with_capacity(rows, rows * 16),
                rows,
            ),
            size: Int64Builder::with_capacity(rows),
            modification_time: Int64Builder::with_capacity(rows),
            stats: StringBuilder::new(),
            dv_storage_type: StringBuilder::new(),
            dv_path: StringBuilder::new(),
            dv_offset: Int32Builder::new(),
            dv_size: Int32Builder::new(),
            dv_cardinality: Int64Builder::new(),
            plain_paths: true,
        }
    }

    /// Append one add. A malformed `partitionValues` is the parser's error
    /// (the caller names the log file and line); nothing is appended then.
    pub fn append(&mut self, row: AddRow<'_>) -> std::result::Result<(), serde_json::Error> {
        let mut pv = |k: &str, v: Option<&str>| {
            self.partition_values.keys().append_value(k);
            self.partition_values.values().append_option(v);
        };
        row.partition_values.for_each(&mut pv)?;
        self.partition_values
            .append(true)
            .map_err(|e| <serde_json::Error as serde::de::Error>::custom(e.to_string()))?;
        self.path.append_value(row.path);
        self.plain_paths &= row.plain_path;
        self.size.append_option(row.size);
        self.modification_time.append_option(row.modification_time);
        self.stats.append_option(row.stats);
        match row.dv {
            Some((st, p, off, sz, card)) => {
                self.dv_storage_type.append_value(st);
                self.dv_path.append_value(p);
                self.dv_offset.append_option(off);
                self.dv_size.append_value(sz);
                self.dv_cardinality.append_value(card);
            }
            None => {
                self.dv_storage_type.append_null();
                self.dv_path.append_null();
                self.dv_offset.append_null();
                self.dv_size.append_null();
                self.dv_cardinality.append_null();
            }
        }
        Ok(())
    }

    /// Number of rows appended so far.
    pub fn len(&self) -> usize {
        self.path.len()
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Finish into columns.
    pub fn finish(mut self) -> AddColumns {
        AddColumns {
            path: self.path.finish(),
            partition_values: self.partition_values.finish(),
            size: self.size.finish(),
            modification_time: self.modification_time.finish(),
            stats: AddStats::Inline {
                json: self.stats.finish(),
                parsed: None,
            },
            partition_values_parsed: None,
            dv: DvColumns {
                storage_type: self.dv_storage_type.finish(),
                path_or_inline_dv: self.dv_path.finish(),
                offset: self.dv_offset.finish(),
                size_in_bytes: self.dv_size.finish(),
                cardinality: self.dv_cardinality.finish(),
            },
            plain_paths: self.plain_paths,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `f0`..: with a DV on the rows `dv_rows` select (none: no DV
    /// column has a value), stats text on the even rows.
    fn adds(n: usize, dv_rows: impl Fn(usize) -> bool) -> AddColumns {
        let mut b = AddColumnsBuilder::default();
        for i in 0..n {
            let stats = format!(r#"{{"numRecords":{i}}}"#);
            b.append(AddRow {
                path: &format!("f{i}"),
                partition_values: PartitionEntries(None),
                size: Some(i as i64),
                modification_time: Some(10 * i as i64),
                stats: (i % 2 == 0).then_some(stats.as_str()),
                dv: dv_rows(i).then_some(("u", "ab", Some(1), 40, i as i64)),
                plain_path: true,
            })
            .unwrap();
        }
        b.finish()
    }

    /// `filter` keeps the rows the mask holds true (null counts as
    /// false) in every column, the DV columns of a table without DVs
    /// included (they stay without values), and those of a table with
    /// some DVs row by row.
    #[test]
    fn filter_keeps_the_masked_rows_of_every_column() {
        let mask = BooleanArray::from(vec![
            Some(true),
            Some(false),
            None,
            Some(true),
            Some(true),
            Some(false),
        ]);
        let kept = [0usize, 3, 4];
        for with_dvs in [false, true] {
            let all = adds(6, |i| with_dvs && i % 3 == 0);
            let f = all.filter(&mask).unwrap();
            assert_eq!(f.len(), 3);
            let paths: Vec<_> = f.path.iter().map(Option::unwrap).collect();
            assert_eq!(paths, ["f0", "f3", "f4"]);
            assert_eq!(f.size.values().to_vec(), [0, 3, 4]);
            assert_eq!(f.modification_time.values().to_vec(), [0, 30, 40]);
            assert_eq!(f.partition_values.len(), 3);
            assert!(f.plain_paths);
            let AddStats::Inline { json, .. } = &f.stats else {
                panic!("stats from text are inline");
            };
            let json: Vec<_> = json.iter().collect();
            assert_eq!(
                json,
                [
                    Some(r#"{"numRecords":0}"#),
                    None,
                    Some(r#"{"numRecords":4}"#)
                ]
            );
            assert_eq!(f.dv.is_absent(), !with_dvs, "with DVs: {with_dvs}");
            for (at, &row) in kept.iter().enumerate() {
                let want = (with_dvs && row % 3 == 0).then_some(("u", "ab", Some(1)));
                assert_eq!(f.dv.key_parts(at), want, "row {row}, with DVs: {with_dvs}");
                assert_eq!(f.dv.cardinality.is_valid(at), want.is_some());
                if want.is_some() {
                    assert_eq!(f.dv.cardinality.value(at), row as i64);
                    assert_eq!(f.dv.size_in_bytes.value(at), 40);
                }
            }
            assert_eq!(f.dv.path_or_inline_dv.len(), 3);
        }
    }
}
