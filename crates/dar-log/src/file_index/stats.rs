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
    /// `loading` selects are parsed now (taken as the checkpoint decoded
    /// them with its counts where it did, else parsed here).
    pub(crate) fn build(
        columns: Vec<StatsColumn>,
        adds: &[AddColumns],
        loading: &StatsLoading,
    ) -> Result<Self> {
        let selected: Vec<usize> = (0..columns.len())
            .filter(|&i| loading.selects(&columns[i]))
            .collect();
        let chosen: Vec<StatsColumn> = selected.iter().map(|&i| columns[i].clone()).collect();
        let mut counts = StatsBuilder::new(Vec::new());
        let mut sources = Vec::with_capacity(adds.len());
        // Per source: the selected columns' stats decoded at open, when
        // every batch of it has them.
        let mut decoded: Vec<Option<FileStats>> = Vec::with_capacity(adds.len());
        // The row batches of the checkpoint file being gathered, with their
        // stats of the selected columns when decoded at open.
        let mut pending: Vec<(Arc<RetainedStats>, Vec<Gathered>)> = Vec::new();
        let flush = |pending: &mut Vec<(Arc<RetainedStats>, Vec<Gathered>)>,
                     sources: &mut Vec<Source>,
                     decoded: &mut Vec<Option<FileStats>>|
         -> Result<()> {
            for (file, parts) in pending.drain(..) {
                let refs: Vec<&dyn Array> = parts.iter().map(|p| &p.rows as &dyn Array).collect();
                let rows = arrow_select::concat::concat(&refs)
                    .map_err(|e| LogError::arrow("file index stats rows", e))?;
                decoded.push(Gathered::decoded(&chosen, parts)?);
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
                    flush(&mut pending, &mut sources, &mut decoded)?;
                    counts.extend_batch(json, parsed.as_ref())?;
                    sources.push(Source::Inline {
                        json: json.clone(),
                        parsed: parsed.clone(),
                    });
                    decoded.push(None);
                }
                AddStats::Retained {
                    file,
                    rows,
                    num_records,
                    tight_bounds,
                    columns,
                } => {
                    counts.extend_stats(FileStats {
                        num_records: num_records.clone(),
                        tight_bounds: tight_bounds.clone(),
                        columns: Vec::new(),
                        malformed: 0,
                        impossible: Vec::new(),
                    })?;
                    let part = Gathered {
                        rows: rows.clone(),
                        num_records: num_records.clone(),
                        tight_bounds: tight_bounds.clone(),
                        columns: columns.clone(),
                    };
                    // Batches of one checkpoint file become one source,
                    // so a column's stats decode once per file.
                    match pending.last_mut() {
                        Some((f, parts)) if Arc::ptr_eq(f, file) => parts.push(part),
                        _ => {
                            flush(&mut pending, &mut sources, &mut decoded)?;
                            pending.push((Arc::clone(file), vec![part]));
                        }
                    }
                }
            }
        }
        flush(&mut pending, &mut sources, &mut decoded)?;
        let counts = counts.finish()?;
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
        if !selected.is_empty() {
            stats.load_with(&selected, &decoded)?;
        }
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
        self.load_with(wanted, &[])
    }

    /// [`IndexStats::load`], taking each source's stats from `decoded`
    /// (by source) where they are there for exactly the columns parsed.
    fn load_with(
        &self,
        wanted: &[usize],
        decoded: &[Option<FileStats>],
    ) -> Result<Vec<Arc<ColumnStats>>> {
        self.loaded.load(wanted, |missing| {
            let columns: Vec<StatsColumn> =
                missing.iter().map(|&i| self.columns[i].clone()).collect();
            #[cfg(test)]
            tests::PARSE_HOOK.with(|h| {
                if let Some(hook) = h.borrow().as_ref() {
                    hook(&columns);
                }
            });
            let parsed = self.parse(&columns, decoded)?;
            self.parsed.fetch_add(missing.len(), Ordering::Relaxed);
            self.passes.fetch_add(1, Ordering::Relaxed);
            Ok(parsed.columns)
        })
    }

    /// Parses `columns` from every source, the retained checkpoint files
    /// side by side, except where `decoded` holds a source's stats of
    /// exactly these columns.
    fn parse(&self, columns: &[StatsColumn], decoded: &[Option<FileStats>]) -> Result<FileStats> {
        let given = |s: usize| {
            decoded
                .get(s)
                .and_then(Option::as_ref)
                .filter(|d| d.columns.iter().map(|c| &c.column).eq(columns.iter()))
        };
        let retained: Vec<(&Arc<RetainedStats>, &UInt32Array)> = self
            .sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                Source::Retained { file, rows } if given(i).is_none() => Some((file, rows)),
                _ => None,
            })
            .collect();
        self.decoded_again
            .fetch_add(retained.len(), Ordering::Relaxed);
        let mut read = crate::parallel::run_parallel(
            &retained,
            |(file, rows)| match file.decode_again(columns.to_vec())? {
                Some(stats) => stats.take(rows),
                None => {
                    self.unavailable.fetch_add(rows.len(), Ordering::Relaxed);
                    let mut absent = StatsBuilder::new(columns.to_vec());
                    absent.push_absent_many(rows.len());
                    absent.finish_raw()
                }
            },
            |(file, _)| crate::checkpoint::decoding_failed(file.path(), "a thread panicked"),
        )
        .into_iter();
        let mut builder = StatsBuilder::new(columns.to_vec());
        for (i, s) in self.sources.iter().enumerate() {
            match s {
                Source::Inline { json, parsed } => builder.extend_batch(json, parsed.as_ref())?,
                Source::Retained { file, .. } => match given(i) {
                    Some(d) => builder.extend_stats(d.clone())?,
                    // One result per retained source read, in source order.
                    None => match read.next() {
                        Some(stats) => builder.extend_stats(stats?)?,
                        None => {
                            return Err(crate::checkpoint::decoding_failed(
                                file.path(),
                                "no result",
                            ));
                        }
                    },
                },
            }
        }
        builder.finish()
    }
}

/// One batch of a checkpoint file's adds, while [`IndexStats::build`]
/// gathers the file's batches into one source.
struct Gathered {
    rows: UInt32Array,
    num_records: Int64Array,
    tight_bounds: BooleanArray,
    columns: Vec<ColumnStats>,
}

impl Gathered {
    /// The stats of `chosen` over `parts`, as written, when every part
    /// was decoded with exactly those columns at open.
    fn decoded(chosen: &[StatsColumn], parts: Vec<Gathered>) -> Result<Option<FileStats>> {
        let decoded_here = |p: &Gathered| p.columns.iter().map(|c| &c.column).eq(chosen.iter());
        if chosen.is_empty() || !parts.iter().all(decoded_here) {
            return Ok(None);
        }
        let mut builder = StatsBuilder::new(chosen.to_vec());
        for p in parts {
            builder.extend_stats(FileStats {
                num_records: p.num_records,
                tight_bounds: p.tight_bounds,
                columns: p.columns,
                malformed: 0,
                impossible: Vec::new(),
            })?;
        }
        builder.finish_raw().map(Some)
    }
}

#[cfg(test)]
mod tests;
