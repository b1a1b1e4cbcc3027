//! [`IndexStats`]: the statistics of the file index. The counts
//! (`numRecords`, `tightBounds`) are known from open; each column's
//! min / max / null count is parsed the first time a query asks for it,
//! then kept, so memory grows with the columns queries reference.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, Int64Array, StringArray, StructArray, UInt32Array};

use crate::add_columns::{AddColumns, AddStats};
use crate::checkpoint::RetainedStats;
use crate::error::{LogError, Result};
use crate::schema::StatsColumn;
use crate::stats::{ColumnStats, FileStats, StatsBuilder};

use super::slots::Slots;

/// When the per-column statistics of a file index are parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum StatsLoading {
    /// A column's the first time a query asks for it (the default): opening
    /// and counting parse no column statistics.
    #[default]
    OnDemand,
    /// Every column's while the index is built.
    AtLoad,
    /// These columns' (logical paths, as a predicate names them) while the
    /// index is built, the others' on demand: for a query known before the
    /// table opens. From a checkpoint's statistics they are decoded in the
    /// one pass that reads its counts, instead of a second pass at the
    /// first plan (see [`crate::checkpoint`]). A path that names no column
    /// with statistics is ignored.
    Columns(Vec<Vec<String>>),
}

impl StatsLoading {
    /// Whether this parses `column`'s statistics while the index is built.
    pub fn selects(&self, column: &StatsColumn) -> bool {
        match self {
            Self::OnDemand => false,
            Self::AtLoad => true,
            Self::Columns(paths) => paths.contains(&column.logical_path),
        }
    }
}

/// Where the statistics of a run of files are.
#[derive(Debug, Clone)]
enum Source {
    /// `add.stats` text (and a checkpoint's `add.stats_parsed`) per file.
    Inline {
        json: StringArray,
        parsed: Option<StructArray>,
    },
    /// Kept with a checkpoint file's stats chunks; each file's row there.
    Retained {
        file: Arc<RetainedStats>,
        rows: UInt32Array,
    },
}

/// The statistics of the active files, one row per file.
#[derive(Debug)]
pub struct IndexStats {
    /// `numRecords` (physical rows); null when unknown.
    pub num_records: Int64Array,
    /// `tightBounds`: true when the stats omit it, null when the file has
    /// no stats at all.
    pub tight_bounds: BooleanArray,
    /// Stats strings that were not valid JSON (their files have no stats).
    pub malformed: usize,
    /// The files whose `numRecords` was impossible (negative), in order:
    /// they read as files without statistics (see
    /// [`FileStats::impossible`]).
    pub impossible: Vec<usize>,
    columns: Vec<StatsColumn>,
    sources: Vec<Source>,
    /// Each column's stats once parsed (no lock held while parsing).
    loaded: Slots,
    parsed: AtomicUsize,
    /// Passes over the files' statistics made by loads.
    passes: AtomicUsize,
    /// Files whose column stats a load could not read again.
    unavailable: AtomicUsize,
    /// Checkpoint files whose stats loads decoded again.
    decoded_again: AtomicUsize,
}

impl Clone for IndexStats {
    fn clone(&self) -> Self {
        Self {
            num_records: self.num_records.clone(),
            tight_bounds: self.tight_bounds.clone(),
            malformed: self.malformed,
            impossible: self.impossible.clone(),
            columns: self.columns.clone(),
            sources: self.sources.clone(),
            loaded: self.loaded.snapshot(),
            parsed: AtomicUsize::new(self.parsed_columns()),
            passes: AtomicUsize::new(self.parse_passes()),
            unavailable: AtomicUsize::new(self.unavailable_files()),
            decoded_again: AtomicUsize::new(self.checkpoint_decodes()),
        }
    }
}

impl IndexStats {
    /// The counts of `adds` (in order), and where each column's stats are
    /// for later; `columns` are the table's stats columns, and those
    /// `loading` selects are parsed now (taken from what the checkpoint
    /// decoded with its counts where it did, else parsed here).
    pub(crate) fn build(
        columns: Vec<StatsColumn>,
        adds: &[AddColumns],
        loading: &StatsLoading,
    ) -> Result<Self> {
        let mut counts = StatsBuilder::new(Vec::new());
        let mut sources = Vec::with_capacity(adds.len());
        // The row batches of the checkpoint file being gathered.
        let mut pending: Vec<(Arc<RetainedStats>, Vec<UInt32Array>)> = Vec::new();
        let flush = |pending: &mut Vec<(Arc<RetainedStats>, Vec<UInt32Array>)>,
                     sources: &mut Vec<Source>|
         -> Result<()> {
            for (file, parts) in pending.drain(..) {
                let refs: Vec<&dyn Array> = parts.iter().map(|p| p as &dyn Array).collect();
                let rows = arrow_select::concat::concat(&refs)
                    .map_err(|e| LogError::arrow("file index stats rows", e))?;
                sources.push(Source::Retained {
                    file,
                    rows: rows.as_primitive().clone(),
                });
            }
            Ok(())
        };
        for a in adds {
            match &a.stats {
                AddStats::Inline { json, parsed } => {
                    flush(&mut pending, &mut sources)?;
                    counts.extend_batch(json, parsed.as_ref())?;
                    sources.push(Source::Inline {
                        json: json.clone(),
                        parsed: parsed.clone(),
                    });
                }
                AddStats::Retained {
                    file,
                    rows,
                    num_records,
                    tight_bounds,
                } => {
                    counts.extend_stats(FileStats {
                        num_records: num_records.clone(),
                        tight_bounds: tight_bounds.clone(),
                        columns: Vec::new(),
                        malformed: 0,
                        impossible: Vec::new(),
                    })?;
                    // Batches of one checkpoint file become one source,
                    // so a column's stats decode once per file.
                    match pending.last_mut() {
                        Some((f, parts)) if Arc::ptr_eq(f, file) => parts.push(rows.clone()),
                        _ => {
                            flush(&mut pending, &mut sources)?;
                            pending.push((Arc::clone(file), vec![rows.clone()]));
                        }
                    }
                }
            }
        }
        flush(&mut pending, &mut sources)?;
        let counts = counts.finish()?;
        let selected: Vec<usize> = (0..columns.len())
            .filter(|&i| loading.selects(&columns[i]))
            .collect();
        let stats = Self {
            num_records: counts.num_records,
            tight_bounds: counts.tight_bounds,
            malformed: counts.malformed,
            impossible: counts.impossible,
            loaded: Slots::new(columns.len()),
            parsed: AtomicUsize::new(0),
            passes: AtomicUsize::new(0),
            unavailable: AtomicUsize::new(0),
            decoded_again: AtomicUsize::new(0),
            columns,
            sources,
        };
        let loaded = if selected.is_empty() {
            Ok(Vec::new())
        } else {
            stats.load(&selected)
        };
        // What the open decoded beyond the counts is the index's now (or
        // was for other columns than the index's).
        for s in &stats.sources {
            if let Source::Retained { file, .. } = s {
                file.release_decoded();
            }
        }
        loaded?;
        Ok(stats)
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.num_records.len()
    }

    /// True when there are no files.
    pub fn is_empty(&self) -> bool {
        self.num_records.is_empty()
    }

    /// The columns that have statistics (the table's stats columns).
    pub fn columns(&self) -> &[StatsColumn] {
        &self.columns
    }

    /// The stats of the column with this dot-joined logical name, parsed
    /// now unless already kept; `None` when the column has no stats.
    pub fn column(&self, logical_name: &str) -> Result<Option<Arc<ColumnStats>>> {
        let Some(i) = self
            .columns
            .iter()
            .position(|c| c.logical_name() == logical_name)
        else {
            return Ok(None);
        };
        Ok(self.load(&[i])?.pop())
    }

    /// The stats of those of `logical_paths` that have statistics, parsed
    /// together (one pass over the stats) unless already kept.
    ///
    /// Linear in the paths and columns (a hash set of the paths), so a
    /// plan asking for every column of a wide table costs no more per
    /// column than a narrow one.
    pub fn for_paths(&self, logical_paths: &[Vec<String>]) -> Result<Vec<Arc<ColumnStats>>> {
        let paths: HashSet<&[String]> = logical_paths.iter().map(Vec::as_slice).collect();
        let wanted: Vec<usize> = (0..self.columns.len())
            .filter(|&i| paths.contains(self.columns[i].logical_path.as_slice()))
            .collect();
        self.load(&wanted)
    }

    /// The stats of every column.
    pub fn all(&self) -> Result<Vec<Arc<ColumnStats>>> {
        self.load(&(0..self.columns.len()).collect::<Vec<_>>())
    }

    /// How many columns' statistics were parsed so far (each once).
    pub fn parsed_columns(&self) -> usize {
        self.parsed.load(Ordering::Relaxed)
    }

    /// How many passes over the files' statistics loads made so far (each
    /// parses, in one pass, every column it was asked for that was not
    /// kept yet): a plan asking for many columns makes one, not one per
    /// column.
    pub fn parse_passes(&self) -> usize {
        self.passes.load(Ordering::Relaxed)
    }

    /// Files (counted once per load) whose column statistics could not be
    /// read again: a local checkpoint file gone or replaced since the open
    /// (see [`crate::checkpoint::RetainedStats`]). They read as files
    /// without statistics for the columns of those loads, so every filter
    /// keeps them.
    pub fn unavailable_files(&self) -> usize {
        self.unavailable.load(Ordering::Relaxed)
    }

    /// How many times loads decoded a checkpoint file's statistics again
    /// after the open had decoded its counts (once per file and load):
    /// none for the columns the open decoded with them
    /// ([`StatsLoading::Columns`]).
    pub fn checkpoint_decodes(&self) -> usize {
        self.decoded_again.load(Ordering::Relaxed)
    }

    /// Bytes held: the counts, the kept column stats, and the sources
    /// (stats text, retained chunks) they are parsed from.
    pub fn memory_size(&self) -> usize {
        let loaded: usize = self
            .loaded
            .parsed()
            .map(|c| {
                c.min_values
                    .as_ref()
                    .map_or(0, |a| a.get_array_memory_size())
                    + c.max_values
                        .as_ref()
                        .map_or(0, |a| a.get_array_memory_size())
                    + c.null_count.get_array_memory_size()
            })
            .sum();
        let mut files: Vec<*const RetainedStats> = Vec::new();
        let sources: usize = self
            .sources
            .iter()
            .map(|s| match s {
                Source::Inline { json, parsed } => {
                    json.get_array_memory_size()
                        + parsed.as_ref().map_or(0, |p| p.get_array_memory_size())
                }
                Source::Retained { file, rows } => {
                    let shared = Arc::as_ptr(file);
                    let own = if files.contains(&shared) {
                        0
                    } else {
                        files.push(shared);
                        file.bytes()
                    };
                    own + rows.get_array_memory_size()
                }
            })
            .sum();
        self.num_records.get_array_memory_size()
            + self.tight_bounds.get_array_memory_size()
            + loaded
            + sources
    }

    /// The stats of columns `wanted` (positions in `columns`), parsing
    /// those not yet kept in one pass over each source. Concurrent loads
    /// of other columns parse side by side; of the same column, one parses
    /// and the others wait for it (see [`Slots`]).
    fn load(&self, wanted: &[usize]) -> Result<Vec<Arc<ColumnStats>>> {
        self.loaded.load(wanted, |missing| {
            let columns: Vec<StatsColumn> =
                missing.iter().map(|&i| self.columns[i].clone()).collect();
            #[cfg(test)]
            tests::PARSE_HOOK.with(|h| {
                if let Some(hook) = h.borrow().as_ref() {
                    hook(&columns);
                }
            });
            let parsed = self.parse(&columns)?;
            self.parsed.fetch_add(missing.len(), Ordering::Relaxed);
            self.passes.fetch_add(1, Ordering::Relaxed);
            Ok(parsed.columns)
        })
    }

    /// Parses `columns` from every source, the retained checkpoint files
    /// side by side: from what the open decoded with the counts where it
    /// decoded exactly these columns, else from the file's chunks again.
    fn parse(&self, columns: &[StatsColumn]) -> Result<FileStats> {
        let retained: Vec<(&Arc<RetainedStats>, &UInt32Array)> = self
            .sources
            .iter()
            .filter_map(|s| match s {
                Source::Retained { file, rows } => Some((file, rows)),
                Source::Inline { .. } => None,
            })
            .collect();
        let mut decoded = crate::parallel::run_parallel(
            &retained,
            |(file, rows)| {
                if let Some(at_open) = file.decoded(columns) {
                    return at_open.take(rows);
                }
                self.decoded_again.fetch_add(1, Ordering::Relaxed);
                match file.decode_again(columns.to_vec())? {
                    Some(stats) => stats.take(rows),
                    None => {
                        self.unavailable.fetch_add(rows.len(), Ordering::Relaxed);
                        let mut absent = StatsBuilder::new(columns.to_vec());
                        absent.push_absent_many(rows.len());
                        absent.finish_raw()
                    }
                }
            },
            |(file, _)| crate::checkpoint::decoding_failed(file.path(), "a thread panicked"),
        )
        .into_iter();
        let mut builder = StatsBuilder::new(columns.to_vec());
        for s in &self.sources {
            match s {
                Source::Inline { json, parsed } => builder.extend_batch(json, parsed.as_ref())?,
                // One result per retained source, in source order.
                Source::Retained { file, .. } => match decoded.next() {
                    Some(stats) => builder.extend_stats(stats?)?,
                    None => {
                        return Err(crate::checkpoint::decoding_failed(file.path(), "no result"));
                    }
                },
            }
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests;
