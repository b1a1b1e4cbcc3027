//! [`DeletedRows`]: the decoded set, and what a scan asks of it.

use std::ops::Range;

use arrow_array::BooleanArray;
use arrow_buffer::{BooleanBuffer, MutableBuffer};
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use roaring::RoaringTreemap;

use crate::bitmap;
use crate::error::{DvError, DvSource, Result};

/// Row indexes above this cannot be stored: bucket keys are Java ints.
const MAX_STORABLE_ROW: u64 = (1 << 63) - 1;

/// The set of deleted row indexes of one data file (physical positions,
/// counted from 0 across all row groups in file order).
///
/// Answers, for a physical row range `[a, b)` (a row group, a page run), which
/// rows survive: as a [`RowSelection`] built in time proportional to the
/// deleted rows inside the range (not the range's length), as a boolean mask,
/// or as counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletedRows {
    rows: RoaringTreemap,
}

impl DeletedRows {
    /// Wraps a roaring treemap of deleted row indexes.
    pub fn from_treemap(rows: RoaringTreemap) -> Self {
        Self { rows }
    }

    /// The rows of `[0, rows)` to skip in order to read only those that
    /// `newer` deletes and `older` does not (`older`: none when `None`).
    /// For a change data feed over a replaced deletion vector: with the
    /// new DV as `newer`, the rows it newly deletes; with the old one, the
    /// rows it no longer deletes.
    pub fn all_but_difference(newer: &DeletedRows, older: Option<&DeletedRows>, rows: u64) -> Self {
        let mut changed = newer.rows.clone();
        if let Some(o) = older {
            changed -= &o.rows;
        }
        let mut skip = RoaringTreemap::new();
        skip.insert_range(0..rows);
        skip -= changed;
        Self { rows: skip }
    }

    /// The underlying treemap.
    pub fn as_treemap(&self) -> &RoaringTreemap {
        &self.rows
    }

    /// Number of deleted rows.
    pub fn len(&self) -> u64 {
        self.rows.len()
    }

    /// True when no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The largest deleted row index.
    pub fn max(&self) -> Option<u64> {
        self.rows.max()
    }

    /// True when `row` is deleted.
    pub fn contains(&self, row: u64) -> bool {
        self.rows.contains(row)
    }

    /// The deleted row indexes, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.rows.iter()
    }

    /// Deleted rows in `[range.start, range.end)`, ascending; the cost is
    /// proportional to those rows, not to the range's length.
    pub fn iter_range(&self, range: Range<u64>) -> impl Iterator<Item = u64> + '_ {
        let mut iter = self.rows.iter();
        iter.advance_to(range.start);
        iter.take_while(move |&row| row < range.end)
    }

    /// Number of deleted rows in `[range.start, range.end)`.
    pub fn deleted_in(&self, range: Range<u64>) -> u64 {
        if range.start >= range.end {
            return 0;
        }
        self.rows.range_cardinality(range)
    }

    /// Number of surviving rows in `[range.start, range.end)`.
    pub fn surviving_in(&self, range: Range<u64>) -> u64 {
        range.end.saturating_sub(range.start) - self.deleted_in(range)
    }

    /// The surviving rows of the physical range `[range.start, range.end)` as a
    /// run-length [`RowSelection`] covering exactly `range.end - range.start`
    /// rows (select runs for survivors, skip runs for deleted rows).
    ///
    /// For a Parquet row group, pass `[first_row, first_row + num_rows)`
    /// where `first_row` sums the `num_rows` of all earlier row groups in the
    /// footer, whether or not those were pruned. Selections of consecutive
    /// ranges concatenate into the selection of their union.
    pub fn selection(&self, range: Range<u64>) -> RowSelection {
        if range.start >= range.end {
            return RowSelection::from(Vec::new());
        }
        // Surviving runs, relative to `range.start`, fed to
        // `from_consecutive_ranges`, which builds the selectors in one pass
        // (`From<Vec<RowSelector>>` would merge them again). Collected with
        // roaring's internal iteration, the fastest way through its
        // containers (measured in benches/benches/dv.rs).
        let len = to_usize(range.end - range.start);
        let mut survivors: Vec<Range<usize>> =
            Vec::with_capacity(to_usize(self.deleted_in(range.clone())) + 1);
        let mut cursor = 0_usize;
        self.for_each_in(range.clone(), |row| {
            let at = to_usize(row - range.start);
            if at > cursor {
                survivors.push(cursor..at);
            }
            cursor = at + 1;
        });
        if cursor < len {
            survivors.push(cursor..len);
        }
        RowSelection::from_consecutive_ranges(survivors.into_iter(), len)
    }

    /// The run-length selectors behind [`DeletedRows::selection`]: no empty
    /// runs, no two adjacent runs of the same kind.
    pub fn selectors(&self, range: Range<u64>) -> Vec<RowSelector> {
        if range.start >= range.end {
            return Vec::new();
        }
        // At most one select and one skip run per deleted row, plus a tail.
        let capacity = to_usize(self.deleted_in(range.clone()).saturating_mul(2) + 1);
        let mut runs = Runs {
            selectors: Vec::with_capacity(capacity),
            cursor: range.start,
            skip_run: 0,
        };
        self.for_each_in(range.clone(), |row| runs.push_deleted(row));
        runs.finish(range.end)
    }

    /// Calls `f` with each deleted row in `range`, ascending. Works bucket by
    /// bucket with roaring's own range iterators (internal iteration), which
    /// is markedly faster than stepping the 64-bit iterator.
    fn for_each_in(&self, range: Range<u64>, mut f: impl FnMut(u64)) {
        if range.start >= range.end {
            return;
        }
        let last = range.end - 1;
        let (start_hi, end_hi) = ((range.start >> 32) as u32, (last >> 32) as u32);
        for (key, bitmap) in self.rows.bitmaps() {
            if key < start_hi {
                continue;
            }
            if key > end_hi {
                break;
            }
            let lo = if key == start_hi {
                range.start as u32
            } else {
                0
            };
            let hi = if key == end_hi { last as u32 } else { u32::MAX };
            let base = u64::from(key) << 32;
            bitmap
                .range(lo..=hi)
                .for_each(|low| f(base | u64::from(low)));
        }
    }

    /// The surviving rows of `[range.start, range.end)` as a mask with one
    /// entry per row: `true` = keep, `false` = deleted. Costs O(range length).
    pub fn mask(&self, range: Range<u64>) -> BooleanArray {
        BooleanArray::new(self.mask_buffer(range), None)
    }

    /// Like [`DeletedRows::mask`], as a bare [`BooleanBuffer`] (for
    /// `RowSelection::from(BooleanBuffer)` or arrow's filter kernels).
    pub fn mask_buffer(&self, range: Range<u64>) -> BooleanBuffer {
        let len = to_usize(range.end.saturating_sub(range.start));
        let mut bits = MutableBuffer::new_null(len);
        // `new_null` zeroes: set every bit, then clear the deleted ones.
        bits.as_slice_mut().fill(0xFF);
        let bytes = bits.as_slice_mut();
        self.for_each_in(range.clone(), |row| {
            let i = to_usize(row - range.start);
            bytes[i / 8] &= !(1 << (i % 8));
        });
        BooleanBuffer::new(bits.into(), 0, len)
    }

    /// Serializes the set as a DV bitmap (portable magic + 64-bit roaring
    /// array): the payload of an inline DV or of a DV file record.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        if let Some(row) = self.max().filter(|&row| row > MAX_STORABLE_ROW) {
            return Err(DvError::RowIndexOutOfRange {
                dv: DvSource::Descriptor {
                    unique_id: String::from("(being encoded)"),
                },
                row,
                row_count: MAX_STORABLE_ROW + 1,
            });
        }
        Ok(bitmap::encode(&self.rows))
    }

    /// Approximate heap size in bytes (the serialized size, which tracks the
    /// in-memory containers closely); used to bound [`crate::DvCache`].
    pub fn memory_size(&self) -> usize {
        self.rows.serialized_size()
    }
}

impl FromIterator<u64> for DeletedRows {
    fn from_iter<I: IntoIterator<Item = u64>>(iter: I) -> Self {
        Self {
            rows: iter.into_iter().collect(),
        }
    }
}

/// Builds run-length selectors from ascending deleted rows.
struct Runs {
    selectors: Vec<RowSelector>,
    /// The first row not yet covered by a selector.
    cursor: u64,
    /// Length of the run of deleted rows ending just before `cursor`.
    skip_run: usize,
}

impl Runs {
    fn push_deleted(&mut self, row: u64) {
        if row == self.cursor && self.skip_run > 0 {
            self.skip_run += 1;
        } else {
            if self.skip_run > 0 {
                self.selectors.push(RowSelector::skip(self.skip_run));
            }
            if row > self.cursor {
                self.selectors
                    .push(RowSelector::select(to_usize(row - self.cursor)));
            }
            self.skip_run = 1;
        }
        self.cursor = row + 1;
    }

    fn finish(mut self, end: u64) -> Vec<RowSelector> {
        if self.skip_run > 0 {
            self.selectors.push(RowSelector::skip(self.skip_run));
        }
        if self.cursor < end {
            self.selectors
                .push(RowSelector::select(to_usize(end - self.cursor)));
        }
        self.selectors
    }
}

/// Row counts inside one range always fit a `usize` on 64-bit targets; on
/// 32-bit ones a range longer than `usize::MAX` rows cannot be scanned anyway.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
