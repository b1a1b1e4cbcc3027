//! The statistics of a checkpoint file, kept compressed after open and
//! decoded when a query asks for them.
//!
//! Opening a table reads `add.stats` and `add.stats_parsed` only as far as
//! `numRecords` and `tightBounds`; their column chunks (compressed, as the
//! file holds them) stay in a [`RetainedStats`]. A predicate on a column
//! decodes the chunks again with a projection onto what that column needs
//! (the JSON text, or the column's leaves of `stats_parsed`), and never the
//! other columns' typed stats.
//!
//! Where the chunks stay depends on the store. From object storage they
//! stay in memory: reading them again would cost a round trip and their
//! bytes again. From a local file they are let go once the counts are
//! decoded, and read again (one positioned read per chunk, from the page
//! cache as a rule) when a query needs them, from the file only while it
//! is the one first read ([`dar_io::LocalStamp`]): a million-file
//! checkpoint's stats are 45 MB of compressed text that an open followed
//! by a count, or by no query at all, never reads again. When the file is
//! gone or was replaced since (log cleanup under a long-lived, refreshed
//! snapshot), its files read as files without statistics for the columns
//! not parsed yet: kept by every filter, never pruned on bytes that were
//! not checked ([`RetainedStats::decode_again`]).

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use arrow_array::cast::AsArray;
use arrow_array::{Array, StringArray, StructArray};
use bytes::Bytes;
use dar_io::{LocalFiles, LocalStamp, ObjectClass};
use object_store::path::Path;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;

use super::chunks::{self, Chunks};

use crate::error::{LogError, Result};
use crate::schema::StatsColumn;
use crate::stats::{FileStats, StatsBuilder};

/// Whether Parquet leaf `parts` (a column path) holds statistics: retained
/// rather than decoded at open.
pub(super) fn is_stats_leaf(parts: &[String]) -> bool {
    matches!(
        (
            parts.first().map(String::as_str),
            parts.get(1).map(String::as_str)
        ),
        (Some("add"), Some("stats" | "stats_parsed"))
    )
}

/// The stats column chunks of one checkpoint part or sidecar.
#[derive(Debug)]
pub struct RetainedStats {
    path: String,
    metadata: ArrowReaderMetadata,
    /// The chunks, while they are held in memory.
    held: Mutex<Option<Arc<Chunks>>>,
    /// Where they are on local disk, when they can be let go.
    on_disk: Option<OnDisk>,
    /// Parquet leaf indices of `add.stats` / `add.stats_parsed.*`.
    leaves: Vec<usize>,
    /// Decode row ranges on threads of their own.
    parallel: bool,
    /// The statistics the open decoded with the counts, of every row, as
    /// written, when it decoded some columns' too
    /// ([`crate::StatsLoading::Columns`]): until the file index has taken
    /// them.
    decoded: Mutex<Option<FileStats>>,
}

/// Where the stats chunks of a local checkpoint file are.
#[derive(Debug)]
pub(super) struct OnDisk {
    /// Reads of the table's local files.
    pub(super) files: LocalFiles,
    /// The file's object key.
    pub(super) location: Path,
    /// The chunks' byte ranges.
    pub(super) ranges: Vec<Range<u64>>,
    /// The file as it was when first read.
    pub(super) stamp: LocalStamp,
}

impl RetainedStats {
    /// Keeps `ranges` (the column chunks of `leaves`) of the file at
    /// `path` whose footer is `metadata`, as given (the caller copies them
    /// out of a larger buffer they should not pin); `on_disk` when they
    /// can be read again from a local file once [released](Self::release).
    pub(super) fn new(
        path: String,
        metadata: ArrowReaderMetadata,
        leaves: Vec<usize>,
        ranges: Vec<(u64, Bytes)>,
        parallel: bool,
        on_disk: Option<OnDisk>,
    ) -> Self {
        Self {
            path,
            metadata,
            held: Mutex::new(Some(Chunks::new(ranges))),
            on_disk,
            leaves,
            parallel,
            decoded: Mutex::new(None),
        }
    }

    /// The checkpoint file these stats come from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Bytes held in memory (none once released).
    pub fn bytes(&self) -> usize {
        self.held_chunks().map_or(0, |c| c.bytes())
    }

    /// Lets the chunks go when they can be read again from a local file;
    /// else keeps them.
    pub(super) fn release(&self) {
        if self.on_disk.is_some() {
            *self.held.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    fn held_chunks(&self) -> Option<Arc<Chunks>> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The chunks: those held, else read again from the local file (an
    /// error naming it when it changed since).
    fn chunks(&self) -> Result<Arc<Chunks>> {
        if let Some(c) = self.held_chunks() {
            return Ok(c);
        }
        let Some(d) = &self.on_disk else {
            return Err(super::decoding_failed(
                &self.path,
                "its statistics are gone",
            ));
        };
        let bytes = d
            .files
            .read_now(&d.location, &d.ranges, ObjectClass::Checkpoint, &d.stamp)
            .map_err(|e| local_err(&self.path, e))?;
        Ok(Chunks::new(
            d.ranges.iter().map(|r| r.start).zip(bytes).collect(),
        ))
    }

    /// Keeps `stats` (every row's, decoded with the counts) for the file
    /// index to take.
    pub(super) fn keep_decoded(&self, stats: FileStats) {
        *self.decoded.lock().unwrap_or_else(PoisonError::into_inner) = Some(stats);
    }

    /// The statistics of exactly `columns` that the open decoded, of every
    /// row, as written; `None` when it did not decode those.
    pub(crate) fn decoded(&self, columns: &[StatsColumn]) -> Option<FileStats> {
        let decoded = self.decoded.lock().unwrap_or_else(PoisonError::into_inner);
        decoded
            .as_ref()
            .filter(|d| d.columns.iter().map(|c| &c.column).eq(columns.iter()))
            .cloned()
    }

    /// Lets go of what the open decoded beyond the counts.
    pub(crate) fn release_decoded(&self) {
        *self.decoded.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Rows of the file (one per action, adds or not).
    pub fn rows(&self) -> usize {
        usize::try_from(self.metadata.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    /// The statistics of `columns` for every row of the file (rows that are
    /// not adds read as files without stats). Only the leaves these columns
    /// need are decoded: the JSON text, `numRecords` and `tightBounds`, and
    /// the columns' own leaves of `stats_parsed`. They are as written:
    /// append them to a [`StatsBuilder`] ([`StatsBuilder::extend_stats`])
    /// whose [`finish`](StatsBuilder::finish) applies the rule of what
    /// statistics may be used for, once per file.
    pub fn decode(&self, columns: Vec<StatsColumn>) -> Result<FileStats> {
        self.decode_from(&self.chunks()?, columns)
    }

    /// [`RetainedStats::decode`] for a query after the open: `None` when
    /// the chunks were let go and the local file is gone or no longer the
    /// one first read (its files then have no statistics for `columns`).
    pub(crate) fn decode_again(&self, columns: Vec<StatsColumn>) -> Result<Option<FileStats>> {
        match self.chunks() {
            Ok(held) => self.decode_from(&held, columns).map(Some),
            // Only a read of the chunks again fails here.
            Err(_) => Ok(None),
        }
    }

    fn decode_from(&self, held: &Arc<Chunks>, columns: Vec<StatsColumn>) -> Result<FileStats> {
        let descr = self.metadata.metadata().file_metadata().schema_descr();
        let wanted: Vec<usize> = self
            .leaves
            .iter()
            .copied()
            .filter(|&l| {
                let parts = descr.column(l).path().parts().to_vec();
                wanted_leaf(&parts, &columns)
            })
            .collect();
        let rows = self.rows();
        if wanted.is_empty() {
            let mut builder = StatsBuilder::new(columns);
            builder.push_absent_many(rows);
            return builder.finish_raw();
        }
        let mask = ProjectionMask::leaves(descr, wanted);
        let pieces = chunks::pieces(rows, self.parallel);
        let decoded = crate::parallel::run_parallel(
            &pieces,
            |r| self.decode_rows(held, &columns, &mask, r.clone()),
            |_| super::decoding_failed(&self.path, "a thread panicked"),
        );
        let mut builder = StatsBuilder::new(columns);
        for piece in decoded {
            builder.extend_stats(piece?)?;
        }
        builder.finish_raw()
    }

    /// [`RetainedStats::decode`] of the rows `range` of the file.
    fn decode_rows(
        &self,
        held: &Arc<Chunks>,
        columns: &[StatsColumn],
        mask: &ProjectionMask,
        range: std::ops::Range<usize>,
    ) -> Result<FileStats> {
        let pq_err = |source| LogError::CheckpointParquet {
            path: self.path.clone(),
            source,
        };
        // Sized for the piece: its arrays grow by no copy (a million files'
        // stats, grown by doubling, were copied about twice over).
        let mut builder = StatsBuilder::with_capacity(columns.to_vec(), range.len());
        let reader = chunks::reader(held, &self.metadata, mask, range.clone()).map_err(pq_err)?;
        for batch in reader {
            let batch = batch.map_err(|e| pq_err(e.into()))?;
            let Some(add) = batch.column_by_name("add").and_then(|c| c.as_struct_opt()) else {
                builder.push_absent_many(batch.num_rows());
                continue;
            };
            let json = match add.column_by_name("stats") {
                Some(c) => c
                    .as_string_opt::<i32>()
                    .cloned()
                    .ok_or_else(|| self.schema_err("add.stats", c.data_type()))?,
                None => StringArray::new_null(add.len()),
            };
            let json = with_struct_nulls(&json, add)?;
            let parsed = match add.column_by_name("stats_parsed") {
                Some(c) => Some(
                    c.as_struct_opt()
                        .cloned()
                        .ok_or_else(|| self.schema_err("add.stats_parsed", c.data_type()))?,
                ),
                None => None,
            };
            builder.extend_batch(&json, parsed.as_ref())?;
        }
        let stats = builder.finish_raw()?;
        if stats.len() != range.len() {
            return Err(pq_err(parquet::errors::ParquetError::General(format!(
                "decoded {} stats rows of {}",
                stats.len(),
                range.len()
            ))));
        }
        Ok(stats)
    }

    /// The statistics of row `row` of the file as written: its `add.stats`
    /// text and its `add.stats_parsed` struct (a one-row array), each
    /// `None` when absent. For comparing the copies of a repeated add.
    pub(crate) fn row_stats(&self, row: usize) -> Result<(Option<String>, Option<StructArray>)> {
        let pq_err = |source| LogError::CheckpointParquet {
            path: self.path.clone(),
            source,
        };
        if row >= self.rows() {
            return Ok((None, None));
        }
        let descr = self.metadata.metadata().file_metadata().schema_descr();
        let mask = ProjectionMask::leaves(descr, self.leaves.iter().copied());
        let reader =
            chunks::reader(&self.chunks()?, &self.metadata, &mask, row..row + 1).map_err(pq_err)?;
        for batch in reader {
            let batch = batch.map_err(|e| pq_err(e.into()))?;
            let Some(add) = batch.column_by_name("add").and_then(|c| c.as_struct_opt()) else {
                continue;
            };
            if add.is_empty() || add.is_null(0) {
                return Ok((None, None));
            }
            let json = add
                .column_by_name("stats")
                .and_then(|c| c.as_string_opt::<i32>())
                .and_then(|s| s.is_valid(0).then(|| s.value(0).to_string()));
            let parsed = add
                .column_by_name("stats_parsed")
                .and_then(|c| c.as_struct_opt())
                .filter(|s| s.is_valid(0))
                .cloned();
            return Ok((json, parsed));
        }
        Ok((None, None))
    }

    fn schema_err(&self, column: &str, found: &arrow_schema::DataType) -> LogError {
        LogError::CheckpointSchema {
            path: self.path.clone(),
            column: column.to_string(),
            detail: format!("expected text or a struct, found {found}"),
        }
    }
}

/// The error of a failed read of the checkpoint file `path` from local disk.
pub(super) fn local_err(path: &str, e: dar_io::Error) -> LogError {
    LogError::store(path, e.into_object_store())
}

/// `json` with the rows where the `add` struct is null nulled too.
fn with_struct_nulls(json: &StringArray, add: &StructArray) -> Result<StringArray> {
    if add.null_count() == 0 {
        return Ok(json.clone());
    }
    let nulls = arrow_buffer::NullBuffer::union(json.nulls(), add.nulls());
    StringArray::try_new(json.offsets().clone(), json.values().clone(), nulls)
        .map_err(|e| LogError::arrow("checkpoint stats", e))
}

/// Whether stats leaf `parts` is needed for `columns`: the JSON text,
/// `numRecords`, `tightBounds`, and the `stats_parsed` leaves of these
/// columns (by physical path).
fn wanted_leaf(parts: &[String], columns: &[StatsColumn]) -> bool {
    match parts.get(1).map(String::as_str) {
        Some("stats") => true,
        Some("stats_parsed") => match parts.get(2).map(String::as_str) {
            Some("numRecords" | "tightBounds") => true,
            Some("minValues" | "maxValues" | "nullCount") => {
                let rest = &parts[3..];
                columns.iter().any(|c| c.physical_path.as_slice() == rest)
            }
            _ => false,
        },
        _ => false,
    }
}
