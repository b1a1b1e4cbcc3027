//! Per-file statistics (protocol §8.1) into columnar, typed Arrow arrays.
//!
//! [`StatsBuilder`] takes each file's `add.stats` JSON string
//! ([`push_json`](StatsBuilder::push_json), parsed once, in one pass, without
//! a value tree) or a checkpoint's typed `add.stats_parsed` struct column
//! ([`extend_parsed`](StatsBuilder::extend_parsed)), and yields
//! [`FileStats`]: `numRecords`, `tightBounds`, and per stats column
//! (see [`StructType::stats_columns`](crate::schema::StructType::stats_columns))
//! `min`/`max` in the column's own Arrow type plus `nullCount`.
//!
//! Stats are hints, so nothing here is an error: a missing stat is null, and
//! a stat that does not parse as the column's *current* type (e.g. written
//! before a type widening) is null too and is counted in
//! [`ColumnStats::invalid`]. Non-finite float stats (`"NaN"`, `"Infinity"` as
//! strings, or NaN in `stats_parsed`) are null without being counted.
//! [`StatsBuilder::finish`] then applies the one rule of what statistics may
//! be used for (module `trust`): impossible or self-contradicting values
//! (a negative count, `nullCount > numRecords`, `min > max`, every value
//! null yet a bound) become null, and the bounds of a `double` column that
//! was a `float` are rounded outward onto the float grid
//! ([`widened_bounds`](crate::schema::widened_bounds)).
//! Decimals are read from the JSON number text, never through `f64`.
//! Timestamps are read from ISO-8601 with any offset; `timestamp_ntz` stats
//! have no zone, and a bare date is accepted as midnight (stats written
//! before a `date -> timestamp_ntz` widening).
//!
//! ```
//! use dar_log::schema::{ColumnMappingMode, StatsColumnsConfig, StructType};
//! use dar_log::stats::StatsBuilder;
//!
//! let schema = StructType::from_json(
//!     r#"{"type":"struct","fields":[{"name":"d","type":"decimal(5,2)"}]}"#,
//! )?;
//! let columns =
//!     schema.stats_columns(ColumnMappingMode::None, &[], &StatsColumnsConfig::default())?;
//! let mut builder = StatsBuilder::new(columns);
//! builder.push_json(Some(r#"{"numRecords":2,"minValues":{"d":-1.5},"maxValues":{"d":1E+2}}"#));
//! builder.push_json(None);
//! let stats = builder.finish()?;
//! assert_eq!(stats.num_records.value(0), 2);
//! let d = stats.column("d").unwrap();
//! let max = d.max_values.as_ref().unwrap();
//! let max = max.as_any().downcast_ref::<arrow_array::Decimal128Array>().unwrap();
//! assert_eq!(max.value(0), 10000);
//! # Ok::<(), dar_log::error::LogError>(())
//! ```

mod json;
mod parsed;
mod scan;
mod trust;

use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, BooleanBuilder, Int64Builder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, StringArray, StructArray};

use crate::error::{LogError, Result};
use crate::scalar::{ScalarBuilder, parse_integer};
use crate::schema::{PrimitiveType, StatsColumn};

/// Statistics of many files, one row per file, as Arrow arrays.
#[derive(Debug, Clone)]
pub struct FileStats {
    /// `numRecords` (physical rows); null when unknown.
    pub num_records: Int64Array,
    /// `tightBounds`: true when the stats omit it, null when the file has no
    /// stats at all.
    pub tight_bounds: BooleanArray,
    /// One entry per stats column, in the order given to the builder.
    pub columns: Vec<ColumnStats>,
    /// Stats strings that were not valid JSON (their files have no stats).
    pub malformed: usize,
    /// The files (rows) whose `numRecords` was impossible (negative), in
    /// order: they read as files without statistics (`numRecords` and
    /// every column's statistics null).
    pub impossible: Vec<usize>,
}

impl FileStats {
    /// Number of files.
    pub fn len(&self) -> usize {
        self.num_records.len()
    }

    /// True when there are no files.
    pub fn is_empty(&self) -> bool {
        self.num_records.is_empty()
    }

    /// The stats of the column with this dot-joined logical path.
    pub fn column(&self, logical_name: &str) -> Option<&ColumnStats> {
        self.columns
            .iter()
            .find(|c| c.column.logical_name() == logical_name)
    }
}

impl FileStats {
    /// The rows at `indices`, in their order. How they are picked is worked
    /// out once for every array (see [`RowPick`]): rows that follow each
    /// other are a slice, not a copy; rows in ascending order (a
    /// checkpoint's live adds) are copied run by run.
    pub fn take(&self, indices: &arrow_array::UInt32Array) -> Result<Self> {
        let pick = RowPick::new(indices, self.len());
        let columns = self
            .columns
            .iter()
            .map(|c| c.map_rows(|a| pick.apply(a)))
            .collect::<Result<Vec<_>>>()?;
        let tight = pick.apply(&self.tight_bounds)?;
        Ok(Self {
            num_records: as_int64(&pick.apply(&self.num_records)?)?,
            tight_bounds: tight
                .as_boolean_opt()
                .cloned()
                .ok_or_else(|| internal_type("tightBounds", "Boolean", tight.data_type()))?,
            columns,
            malformed: self.malformed,
            impossible: taken_rows(&self.impossible, indices),
        })
    }
}

impl ColumnStats {
    /// The same column with `rows` applied to each of its arrays (the
    /// counts of invalid and contradictory values stay those of the whole).
    fn map_rows(&self, rows: impl Fn(&dyn Array) -> Result<ArrayRef>) -> Result<Self> {
        Ok(Self {
            column: self.column.clone(),
            min_values: self.min_values.as_deref().map(&rows).transpose()?,
            max_values: self.max_values.as_deref().map(&rows).transpose()?,
            null_count: as_int64(&rows(&self.null_count)?)?,
            invalid: self.invalid,
            contradictory: self.contradictory,
        })
    }
}

/// How the rows at some indices are picked out of arrays of `len` rows,
/// worked out once for all the arrays of a [`FileStats`]. Each way costs
/// in proportion to the rows picked and the rows between them, never to
/// the arrays' length (a checkpoint's batches each take their rows of
/// the whole file's counts).
enum RowPick<'a> {
    /// One run of rows, at least half of them: a slice (which keeps the
    /// whole array alive, hence the half).
    Slice(std::ops::Range<usize>),
    /// Rows in strictly ascending order with gaps: a filter of the rows
    /// from the first to the last, which copies runs of rows (values and
    /// validity) rather than row by row.
    Filter {
        /// The first to the last row picked.
        span: std::ops::Range<usize>,
        /// Which rows of `span` are picked.
        predicate: arrow_select::filter::FilterPredicate,
    },
    /// Any other order, or a short run: a gather (a copy).
    Take(&'a arrow_array::UInt32Array),
}

impl<'a> RowPick<'a> {
    fn new(indices: &'a arrow_array::UInt32Array, len: usize) -> Self {
        if indices.null_count() > 0 || indices.is_empty() {
            return Self::Take(indices);
        }
        let values = indices.values();
        let ascending = values.windows(2).all(|w| w[0] < w[1]);
        let (first, last) = (values[0] as usize, values[values.len() - 1] as usize);
        if !ascending || last >= len {
            return Self::Take(indices);
        }
        let span = first..last + 1;
        if span.len() == values.len() {
            return if span.len() * 2 >= len {
                Self::Slice(span)
            } else {
                Self::Take(indices)
            };
        }
        let mut mask = arrow_buffer::BooleanBufferBuilder::new(span.len());
        mask.append_n(span.len(), false);
        for &i in values {
            mask.set_bit(i as usize - first, true);
        }
        let mask = BooleanArray::new(mask.finish(), None);
        let predicate = arrow_select::filter::FilterBuilder::new(&mask)
            .optimize()
            .build();
        Self::Filter { span, predicate }
    }

    fn apply(&self, array: &dyn Array) -> Result<ArrayRef> {
        let picked = match self {
            Self::Slice(run) => return Ok(array.slice(run.start, run.len())),
            Self::Filter { span, predicate } => {
                predicate.filter(&array.slice(span.start, span.len()))
            }
            Self::Take(indices) => arrow_select::take::take(array, *indices, None),
        };
        picked.map_err(|e| LogError::arrow("taking file stats rows", e))
    }
}

/// The positions in `indices` of the rows listed in `rows` (sorted).
fn taken_rows(rows: &[usize], indices: &arrow_array::UInt32Array) -> Vec<usize> {
    if rows.is_empty() {
        return Vec::new();
    }
    indices
        .iter()
        .enumerate()
        .filter(|(_, i)| i.is_some_and(|i| rows.binary_search(&(i as usize)).is_ok()))
        .map(|(at, _)| at)
        .collect()
}

/// The statistics of one leaf column across files.
#[derive(Debug, Clone)]
pub struct ColumnStats {
    /// The column.
    pub column: StatsColumn,
    /// `minValues`, in the column's Arrow type; `None` for types without
    /// min/max stats (boolean, binary, arrays, maps, variants).
    pub min_values: Option<ArrayRef>,
    /// `maxValues`, like `min_values`.
    pub max_values: Option<ArrayRef>,
    /// `nullCount`.
    pub null_count: Int64Array,
    /// How many stats (min, max or nullCount) were present but did not parse
    /// as the column's current type, and were read as null.
    pub invalid: usize,
    /// How many files' statistics of the column contradicted themselves
    /// (`nullCount` negative or above `numRecords`, `min > max`, every
    /// value null yet a bound) and were read as null.
    pub contradictory: usize,
}

/// One finished run of rows.
struct Chunk {
    num_records: ArrayRef,
    tight_bounds: ArrayRef,
    mins: Vec<Option<ArrayRef>>,
    maxs: Vec<Option<ArrayRef>>,
    null_counts: Vec<ArrayRef>,
}

/// Accumulates per-file stats into typed columns.
pub struct StatsBuilder {
    columns: Vec<StatsColumn>,
    /// The min/max type of each column (`None`: nullCount only).
    kinds: Vec<Option<PrimitiveType>>,
    trie: json::PathTrie,
    num_records: Int64Builder,
    tight_bounds: BooleanBuilder,
    mins: Vec<Option<ScalarBuilder>>,
    maxs: Vec<Option<ScalarBuilder>>,
    null_counts: Vec<Int64Builder>,
    invalid: Vec<usize>,
    /// Per column: contradictions found in statistics appended already
    /// finished ([`StatsBuilder::extend_stats`]).
    contradictory: Vec<usize>,
    malformed: usize,
    /// Rows whose `numRecords` was impossible, in statistics appended
    /// already finished.
    impossible: Vec<usize>,
    chunks: Vec<Chunk>,
    /// Scratch for decoding escaped JSON strings.
    scratch: String,
}

impl std::fmt::Debug for StatsBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsBuilder")
            .field("columns", &self.columns.len())
            .field("rows", &self.len())
            .finish_non_exhaustive()
    }
}

impl StatsBuilder {
    /// A builder for these columns.
    pub fn new(columns: Vec<StatsColumn>) -> Self {
        Self::with_capacity(columns, 0)
    }

    /// A builder with room for `files` files.
    pub fn with_capacity(columns: Vec<StatsColumn>, files: usize) -> Self {
        let kinds: Vec<Option<PrimitiveType>> = columns
            .iter()
            .map(|c| {
                c.has_min_max()
                    .then(|| c.data_type.as_primitive())
                    .flatten()
            })
            .collect();
        let trie = json::PathTrie::new(columns.iter().map(|c| c.physical_path.as_slice()));
        let scalar = |k: &Option<PrimitiveType>| k.map(|k| ScalarBuilder::new(k, files));
        Self {
            trie,
            num_records: Int64Builder::with_capacity(files),
            tight_bounds: BooleanBuilder::with_capacity(files),
            mins: kinds.iter().map(scalar).collect(),
            maxs: kinds.iter().map(scalar).collect(),
            null_counts: columns
                .iter()
                .map(|_| Int64Builder::with_capacity(files))
                .collect(),
            invalid: vec![0; columns.len()],
            contradictory: vec![0; columns.len()],
            malformed: 0,
            impossible: Vec::new(),
            chunks: Vec::new(),
            scratch: String::new(),
            kinds,
            columns,
        }
    }

    /// Rows added so far.
    pub fn len(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| c.num_records.len())
            .sum::<usize>()
            + self.num_records.len()
    }

    /// True when no rows were added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends one file's `add.stats` string (`None`: the file has no stats).
    pub fn push_json(&mut self, stats: Option<&str>) {
        let Some(text) = stats else {
            self.push_absent();
            return;
        };
        let n = self.columns.len();
        // One validating byte scan; serde decides what it leaves.
        let raw = match scan::scan(&self.trie, n, text) {
            Some(scan::Scan::Stats(raw)) => raw,
            Some(scan::Scan::Malformed) => {
                self.malformed += 1;
                self.push_absent();
                return;
            }
            None => match json::parse(&self.trie, n, text) {
                Ok(raw) => raw,
                Err(_) => {
                    self.malformed += 1;
                    self.push_absent();
                    return;
                }
            },
        };
        self.push_counts(raw.num_records, raw.tight_bounds);
        for col in 0..n {
            let mut bad = 0;
            if let Some(kind) = self.kinds[col] {
                for (builders, raw) in [
                    (&mut self.mins, raw.slots[col]),
                    (&mut self.maxs, raw.slots[n + col]),
                ] {
                    let Some(builder) = builders[col].as_mut() else {
                        continue;
                    };
                    if !append_stat(builder, kind, raw, &mut self.scratch) {
                        bad += 1;
                    }
                }
            }
            let null_count = raw.slots[2 * n + col];
            let parsed = null_count.and_then(parse_integer::<i64>);
            if null_count.is_some() && parsed.is_none() && null_count != Some("null") {
                bad += 1;
            }
            self.null_counts[col].append_option(parsed);
            self.invalid[col] += bad;
        }
    }

    /// Appends a file's `numRecords` and `tightBounds` from their raw JSON
    /// text (absent `tightBounds`: true).
    fn push_counts(&mut self, num_records: Option<&str>, tight_bounds: Option<&str>) {
        self.num_records
            .append_option(num_records.and_then(parse_integer::<i64>));
        let tight = tight_bounds.map_or(Some(true), |r| match r {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        });
        self.tight_bounds.append_option(tight);
    }

    fn push_absent(&mut self) {
        self.num_records.append_null();
        self.tight_bounds.append_null();
        for col in 0..self.columns.len() {
            for builders in [&mut self.mins, &mut self.maxs] {
                if let Some(b) = builders[col].as_mut() {
                    b.append_null();
                }
            }
            self.null_counts[col].append_null();
        }
    }

    /// Appends `n` files that have no stats at all (what `n` calls of
    /// `push_json(None)` would append), as one run of all-null arrays.
    /// Their buffers are zero-filled allocations the OS maps lazily, so a
    /// large log without stats costs neither time nor resident memory here.
    /// (Added by the log-replay side for stats-less logs.)
    pub fn push_absent_many(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        self.flush();
        // The builders are empty after `flush`: finishing one again only
        // yields its (empty) array, whose type the null run copies.
        let null_like = |b: &mut Option<ScalarBuilder>| -> Option<ArrayRef> {
            b.as_mut()
                .map(|b| arrow_array::new_null_array(b.finish().data_type(), n))
        };
        let chunk = Chunk {
            num_records: Arc::new(Int64Array::new_null(n)),
            tight_bounds: Arc::new(BooleanArray::new_null(n)),
            mins: self.mins.iter_mut().map(null_like).collect(),
            maxs: self.maxs.iter_mut().map(null_like).collect(),
            null_counts: self
                .null_counts
                .iter()
                .map(|_| Arc::new(Int64Array::new_null(n)) as ArrayRef)
                .collect(),
        };
        self.chunks.push(chunk);
    }

    /// Appends a batch of files with `json` (`add.stats` text per file)
    /// and, from a checkpoint, `parsed` (`add.stats_parsed`): the typed
    /// struct when every file that has stats has them there, else the
    /// text; a batch without any stats is one all-null run.
    pub fn extend_batch(&mut self, json: &StringArray, parsed: Option<&StructArray>) -> Result<()> {
        if let Some(parsed) = parsed {
            let json_only = (0..json.len()).any(|i| parsed.is_null(i) && json.is_valid(i));
            if !json_only {
                return self.extend_parsed(parsed);
            }
        }
        if json.null_count() == json.len() {
            self.push_absent_many(json.len());
            return Ok(());
        }
        for i in 0..json.len() {
            self.push_json(json.is_valid(i).then(|| json.value(i)));
        }
        Ok(())
    }

    /// Appends stats already typed for this builder's columns (the same
    /// columns, in the same order), as one run. Statistics finished with
    /// [`StatsBuilder::finish`] stay as they are (its rule changes nothing
    /// twice); raw ones are judged when this builder finishes.
    pub fn extend_stats(&mut self, stats: FileStats) -> Result<()> {
        if stats.columns.len() != self.columns.len() {
            return Err(LogError::arrow(
                "appending typed stats",
                arrow_schema::ArrowError::InvalidArgumentError(format!(
                    "{} stats columns given to a builder of {}",
                    stats.columns.len(),
                    self.columns.len()
                )),
            ));
        }
        self.flush();
        self.malformed += stats.malformed;
        let offset = self.len();
        self.impossible
            .extend(stats.impossible.iter().map(|r| r + offset));
        let mut chunk = Chunk {
            num_records: Arc::new(stats.num_records),
            tight_bounds: Arc::new(stats.tight_bounds),
            mins: Vec::with_capacity(self.columns.len()),
            maxs: Vec::with_capacity(self.columns.len()),
            null_counts: Vec::with_capacity(self.columns.len()),
        };
        for (i, c) in stats.columns.into_iter().enumerate() {
            self.invalid[i] += c.invalid;
            self.contradictory[i] += c.contradictory;
            chunk.mins.push(c.min_values);
            chunk.maxs.push(c.max_values);
            chunk.null_counts.push(Arc::new(c.null_count));
        }
        self.chunks.push(chunk);
        Ok(())
    }

    /// Moves the rows built from JSON so far into a finished chunk.
    fn flush(&mut self) {
        if self.num_records.is_empty() {
            return;
        }
        let finish_all = |builders: &mut Vec<Option<ScalarBuilder>>| {
            builders
                .iter_mut()
                .map(|b| b.as_mut().map(ScalarBuilder::finish))
                .collect()
        };
        let chunk = Chunk {
            num_records: Arc::new(self.num_records.finish()),
            tight_bounds: Arc::new(self.tight_bounds.finish()),
            mins: finish_all(&mut self.mins),
            maxs: finish_all(&mut self.maxs),
            null_counts: self
                .null_counts
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef)
                .collect(),
        };
        self.chunks.push(chunk);
    }

    /// The stats of every file added, in order, with impossible and
    /// self-contradicting values read as unknown and widened bounds
    /// rounded outward (the rule of module `trust`, documented there and
    /// on [`FileStats::impossible`] and [`ColumnStats::contradictory`]).
    pub fn finish(self) -> Result<FileStats> {
        let mut stats = self.finish_raw()?;
        trust::apply(&mut stats)?;
        Ok(stats)
    }

    /// The stats of every file added, as written: without the rule
    /// [`StatsBuilder::finish`] applies. For parts that a builder finishes
    /// later ([`StatsBuilder::extend_stats`]), so the rule judges (and
    /// counts) each file once.
    pub(crate) fn finish_raw(mut self) -> Result<FileStats> {
        self.flush();
        let chunks = std::mem::take(&mut self.chunks);
        let concat = |parts: Vec<&ArrayRef>, what: &str| -> Result<ArrayRef> {
            match parts.as_slice() {
                [one] => Ok(Arc::clone(one)),
                _ => {
                    let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
                    arrow_select::concat::concat(&refs)
                        .map_err(|source| LogError::arrow(format!("concatenating {what}"), source))
                }
            }
        };
        let empty = chunks.is_empty();
        let num_records = if empty {
            Arc::new(Int64Array::from(Vec::<i64>::new())) as ArrayRef
        } else {
            concat(
                chunks.iter().map(|c| &c.num_records).collect(),
                "numRecords",
            )?
        };
        let tight_bounds = if empty {
            Arc::new(BooleanArray::from(Vec::<bool>::new())) as ArrayRef
        } else {
            concat(
                chunks.iter().map(|c| &c.tight_bounds).collect(),
                "tightBounds",
            )?
        };
        let num_records = as_int64(&num_records)?;
        let mut columns = Vec::with_capacity(self.columns.len());
        for (col, column) in self.columns.into_iter().enumerate() {
            let name = column.logical_name();
            let min_max = |pick: fn(&Chunk) -> &Vec<Option<ArrayRef>>,
                           builder: &mut Option<ScalarBuilder>|
             -> Result<Option<ArrayRef>> {
                let Some(builder) = builder else {
                    return Ok(None);
                };
                if empty {
                    return Ok(Some(builder.finish()));
                }
                let parts: Vec<&ArrayRef> = chunks
                    .iter()
                    .filter_map(|c| pick(c)[col].as_ref())
                    .collect();
                concat(parts, &name).map(Some)
            };
            let min_values = min_max(|c| &c.mins, &mut self.mins[col])?;
            let max_values = min_max(|c| &c.maxs, &mut self.maxs[col])?;
            let null_count = if empty {
                Arc::new(self.null_counts[col].finish()) as ArrayRef
            } else {
                concat(chunks.iter().map(|c| &c.null_counts[col]).collect(), &name)?
            };
            columns.push(ColumnStats {
                column,
                min_values,
                max_values,
                null_count: as_int64(&null_count)?,
                invalid: self.invalid[col],
                contradictory: self.contradictory[col],
            });
        }
        Ok(FileStats {
            num_records,
            tight_bounds: tight_bounds
                .as_any()
                .downcast_ref::<BooleanArray>()
                .cloned()
                .ok_or_else(|| internal_type("tightBounds", "Boolean", tight_bounds.data_type()))?,
            columns,
            malformed: self.malformed,
            impossible: self.impossible,
        })
    }
}

fn as_int64(array: &ArrayRef) -> Result<Int64Array> {
    array
        .as_any()
        .downcast_ref::<Int64Array>()
        .cloned()
        .ok_or_else(|| internal_type("stats column", "Int64", array.data_type()))
}

fn internal_type(column: &str, expected: &str, found: &arrow_schema::DataType) -> LogError {
    LogError::UnexpectedArrowType {
        column: column.to_owned(),
        expected: expected.to_owned(),
        found: found.to_string(),
    }
}

/// Appends one min or max from its raw JSON text; `false` when present but
/// unparseable (a null is appended instead).
fn append_stat(
    builder: &mut ScalarBuilder,
    kind: PrimitiveType,
    raw: Option<&str>,
    scratch: &mut String,
) -> bool {
    use PrimitiveType as P;
    let Some(text) = raw else {
        builder.append_null();
        return true;
    };
    let is_number_kind = matches!(
        kind,
        P::Byte | P::Short | P::Integer | P::Long | P::Float | P::Double | P::Decimal(_)
    );
    let ok = match text.as_bytes().first() {
        Some(b'"') => {
            if matches!(kind, P::Float | P::Double) {
                // "NaN", "Infinity", ...: no usable bound, not an error.
                builder.append_null();
                return true;
            }
            !is_number_kind && json_string(text, scratch).is_some_and(|s| builder.append_text(s))
        }
        Some(b'n') if text == "null" => {
            builder.append_null();
            return true;
        }
        Some(b'-' | b'0'..=b'9') => is_number_kind && builder.append_text(text),
        _ => false,
    };
    if !ok {
        builder.append_null();
    }
    ok
}

/// The contents of a JSON string literal: borrowed when it has no escapes;
/// `None` when its escapes do not decode (a lone surrogate).
fn json_string<'a>(literal: &'a str, scratch: &'a mut String) -> Option<&'a str> {
    let inner = literal.get(1..literal.len().saturating_sub(1))?;
    if !inner.contains('\\') {
        return Some(inner);
    }
    *scratch = serde_json::from_str::<String>(literal).ok()?;
    Some(scratch.as_str())
}

#[cfg(test)]
mod tests;
