//! Stage 7 for files whose row groups hold very many column chunks.
//!
//! parquet's async reader keeps the chunks it fetched in a list that it
//! scans from the start for every chunk it decodes (and copies for every
//! page reader), so its work grows with the square of the columns read: a
//! one-row file of 100,000 columns took minutes. Past [`WIDE_CHUNKS`]
//! chunks per row group the file is read here instead, one row group at a
//! time: its chunks are fetched through the file's own reader (the range
//! planner, metering and caches stay in the path), held sorted by offset,
//! and decoded by parquet's synchronous reader, which finds a chunk by
//! binary search. The difference: predicate columns are not fetched before
//! the others (every chunk of the row group is fetched at once), which
//! costs nothing on files this wide, where the footer dominates.

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch};
use bytes::{Buf, Bytes};
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowFilter, RowSelection,
};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use crate::schema::batch_plan::FilterPlan;

/// Column chunks per row group from which a file is decoded here.
pub(crate) const WIDE_CHUNKS: usize = 2048;

/// The leaf columns of `mask` (and of the `filters`), as indexes.
pub(crate) fn leaves<'a>(
    metadata: &ArrowReaderMetadata,
    mask: &ProjectionMask,
    filters: impl Iterator<Item = &'a ProjectionMask> + Clone,
) -> Vec<usize> {
    let n = metadata
        .metadata()
        .file_metadata()
        .schema_descr()
        .num_columns();
    (0..n)
        .filter(|&i| mask.leaf_included(i) || filters.clone().any(|f| f.leaf_included(i)))
        .collect()
}

/// parquet's row filter of `filters`: one predicate per step, in order,
/// or, with `one_round`, one predicate over all their columns. Each step
/// fetches its columns' pages after the step before it has run: on
/// object storage a round trip each, where the pages later steps skip
/// are worth less than the round trips they cost.
pub(crate) fn row_filter(
    filters: &[(ProjectionMask, Arc<FilterPlan>)],
    one_round: bool,
) -> RowFilter {
    if one_round && filters.len() > 1 {
        return RowFilter::new(vec![one_step(filters)]);
    }
    RowFilter::new(
        filters
            .iter()
            .map(|(mask, filter)| {
                let filter = Arc::clone(filter);
                Box::new(ArrowPredicateFn::new(
                    mask.clone(),
                    move |batch: RecordBatch| filter.evaluate(&batch),
                )) as Box<dyn parquet::arrow::arrow_reader::ArrowPredicate>
            })
            .collect(),
    )
}

/// The steps of `filters` as one predicate: the union of their columns
/// decoded at once, each step evaluated on its own columns (in the order
/// of the union: ascending roots), the rows that pass all of them kept,
/// counted once in the metrics.
fn one_step(
    filters: &[(ProjectionMask, Arc<FilterPlan>)],
) -> Box<dyn parquet::arrow::arrow_reader::ArrowPredicate> {
    let mut mask = filters[0].0.clone();
    for (m, _) in &filters[1..] {
        mask.union(m);
    }
    let mut roots: Vec<usize> = filters
        .iter()
        .flat_map(|(_, f)| f.mask_roots.iter().copied())
        .collect();
    roots.sort_unstable();
    roots.dedup();
    let steps: Vec<(Vec<usize>, Arc<FilterPlan>)> = filters
        .iter()
        .map(|(_, f)| {
            let columns = f
                .mask_roots
                .iter()
                .map(|r| roots.binary_search(r).unwrap_or_default())
                .collect();
            (columns, Arc::clone(f))
        })
        .collect();
    Box::new(ArrowPredicateFn::new(mask, move |batch: RecordBatch| {
        let step = |(columns, filter): &(Vec<usize>, Arc<FilterPlan>)| {
            filter.evaluate_uncounted(&batch.project(columns)?)
        };
        let mut passed = step(&steps[0])?;
        for s in &steps[1..] {
            // Neither has nulls (`definitely_true`).
            passed = BooleanArray::new(passed.values() & step(s)?.values(), None);
        }
        steps[0].1.count(batch.num_rows(), passed.true_count());
        Ok(passed)
    }))
}

/// What the synchronous reader of each row group is built with.
pub(crate) struct WideRead<R> {
    /// The file's reader (fetches through the planner).
    pub reader: R,
    /// The footer and Arrow schema.
    pub metadata: ArrowReaderMetadata,
    /// The leaf columns to fetch.
    pub leaves: Vec<usize>,
    /// The decoded columns.
    pub mask: ProjectionMask,
    /// The steps of the row filter, in order, with their columns.
    pub filters: Vec<(ProjectionMask, Arc<FilterPlan>)>,
    /// Row groups to read, in order.
    pub row_groups: Vec<usize>,
    /// Rows of those row groups to read, concatenated.
    pub selection: Option<RowSelection>,
    /// Rows to output at most (after the filter).
    pub limit: Option<usize>,
    /// Rows per batch.
    pub batch_size: usize,
    /// The filter's steps as one ([`row_filter`]).
    pub one_round: bool,
}

/// State between batches: the row group being decoded and what is left.
struct Progress<R> {
    read: WideRead<R>,
    left: VecDeque<usize>,
    current: Option<ParquetRecordBatchReader>,
}

/// The batches of the file, row group after row group.
pub(crate) fn stream<R>(read: WideRead<R>) -> BoxStream<'static, Result<RecordBatch, ParquetError>>
where
    R: AsyncFileReader + Send + 'static,
{
    let left = read.row_groups.iter().copied().collect();
    let progress = Progress {
        read,
        left,
        current: None,
    };
    stream::try_unfold(progress, |mut p| async move {
        loop {
            if p.read.limit == Some(0) {
                return Ok(None);
            }
            if let Some(reader) = &mut p.current {
                match reader.next() {
                    Some(batch) => {
                        let batch = batch?;
                        if let Some(limit) = &mut p.read.limit {
                            *limit = limit.saturating_sub(batch.num_rows());
                        }
                        return Ok(Some((batch, p)));
                    }
                    None => p.current = None,
                }
            }
            let Some(rg) = p.left.pop_front() else {
                return Ok(None);
            };
            p.current = Some(row_group(&mut p.read, rg).await?);
        }
    })
    .boxed()
}

/// Fetches the chunks of row group `rg` and builds its reader.
async fn row_group<R: AsyncFileReader>(
    read: &mut WideRead<R>,
    rg: usize,
) -> Result<ParquetRecordBatchReader, ParquetError> {
    let group = read.metadata.metadata().row_group(rg);
    let rows = usize::try_from(group.num_rows()).unwrap_or(0);
    let mut ranges: Vec<std::ops::Range<u64>> = read
        .leaves
        .iter()
        .map(|&i| {
            let (start, len) = group.column(i).byte_range();
            start..start.saturating_add(len)
        })
        .collect();
    ranges.sort_by_key(|r| r.start);
    ranges.dedup();
    let data = read.reader.get_byte_ranges(ranges.clone()).await?;
    let chunks = Chunks {
        starts: ranges.iter().map(|r| r.start).collect(),
        data,
        len: ranges.last().map_or(0, |r| r.end),
    };
    let mut builder =
        ParquetRecordBatchReaderBuilder::new_with_metadata(chunks, read.metadata.clone())
            .with_batch_size(read.batch_size)
            .with_projection(read.mask.clone())
            .with_row_groups(vec![rg]);
    if let Some(selection) = &mut read.selection {
        builder = builder.with_row_selection(selection.split_off(rows));
    }
    if let Some(limit) = read.limit {
        builder = builder.with_limit(limit);
    }
    if !read.filters.is_empty() {
        builder = builder.with_row_filter(row_filter(&read.filters, read.one_round));
    }
    builder.build()
}

/// The fetched chunks of one row group, sorted by offset.
struct Chunks {
    starts: Vec<u64>,
    data: Vec<Bytes>,
    /// The end of the last chunk (the reader asks no further).
    len: u64,
}

impl Chunks {
    /// The chunk holding `start..start + length` and the offset in it.
    fn find(&self, start: u64, length: usize) -> Result<(&Bytes, usize), ParquetError> {
        let missing = || {
            ParquetError::General(format!(
                "bytes {start}..{} lie outside the column chunks the footer names",
                start.saturating_add(length as u64)
            ))
        };
        let i = self
            .starts
            .partition_point(|&s| s <= start)
            .checked_sub(1)
            .ok_or_else(missing)?;
        let data = &self.data[i];
        let offset = usize::try_from(start - self.starts[i]).map_err(|_| missing())?;
        if offset
            .checked_add(length)
            .is_none_or(|end| end > data.len())
        {
            return Err(missing());
        }
        Ok((data, offset))
    }
}

impl Length for Chunks {
    fn len(&self) -> u64 {
        self.len
    }
}

impl ChunkReader for Chunks {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> Result<Self::T, ParquetError> {
        let (data, offset) = self.find(start, 0)?;
        Ok(data.slice(offset..).reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        let (data, offset) = self.find(start, length)?;
        Ok(data.slice(offset..offset + length))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_found_by_offset_and_bounds_are_checked() {
        let chunks = Chunks {
            starts: vec![4, 100],
            data: vec![Bytes::from_static(b"abcdef"), Bytes::from_static(b"xyz")],
            len: 103,
        };
        assert_eq!(chunks.get_bytes(5, 3).unwrap(), Bytes::from_static(b"bcd"));
        assert_eq!(
            chunks.get_bytes(100, 3).unwrap(),
            Bytes::from_static(b"xyz")
        );
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut chunks.get_read(102).unwrap(), &mut rest).unwrap();
        assert_eq!(rest, b"z");
        for (start, len) in [(0, 1), (8, 4), (50, 1), (101, 3), (u64::MAX, 1)] {
            let err = chunks.get_bytes(start, len).unwrap_err().to_string();
            assert!(err.contains("outside the column chunks"), "{start}: {err}");
        }
    }
}
