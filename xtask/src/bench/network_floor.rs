//! The network floor of a case over the emulated link: the bytes any reader
//! must fetch divided by the bandwidth, plus the minimal number of
//! dependent request rounds times the latency.
//!
//! Bytes counted (from the fixture files, read locally):
//! * the log a reader needs: the newest checkpoint and the commits after
//!   it, or every commit, plus `_last_checkpoint`;
//! * each needed file's footer (and its page index when pages are chosen);
//! * the pages holding rows the result needs, in every projected column,
//!   and for a filter the candidate pages of the predicate columns (pages
//!   of `l_shipdate` whose min/max admit the date, and the other predicate
//!   columns' pages over the same rows);
//! * the DV files of the needed files.
//!
//! A change feed ([`changes`]) needs every commit of its range, and the
//! footer and projected column chunks of every file its rows come from
//! (a commit's `cdc` files when it has any, else its adds and removes
//! that change data), plus each deletion vector of those (old and new of a
//! replaced one) by its own range.

use std::path::Path;

use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use parquet::file::page_index::column_index::ColumnIndexMetaData;

use crate::fixtures::TableEntry;
use crate::s3::Link;
use crate::workload::Case;

use crate::workload::W5_DATE;

/// A case's network floor.
#[derive(Debug, Clone, Copy)]
pub struct NetworkFloor {
    /// Bytes any reader must fetch.
    pub bytes: u64,
    /// Dependent request rounds.
    pub rounds: u32,
    /// `bytes / bandwidth + rounds * latency`.
    pub secs: f64,
}

impl NetworkFloor {
    /// `bytes` in `rounds` dependent rounds over `link`.
    fn over(link: Link, bytes: u64, rounds: u32) -> Self {
        let bandwidth = link.bytes_per_sec.map_or(f64::INFINITY, |b| b as f64);
        let secs = bytes as f64 / bandwidth + f64::from(rounds) * link.latency.as_secs_f64();
        NetworkFloor {
            bytes,
            rounds,
            secs,
        }
    }
}

/// The floor of `case` on `table`: [`changes`] for a change feed, else
/// [`compute`].
pub fn of_case(
    root: &Path,
    table: &TableEntry,
    case: &Case,
    link: Link,
) -> Result<NetworkFloor, String> {
    match (case.action, case.changes_from) {
        (crate::workload::Action::Changes, from) => {
            changes(root, table, case, from.unwrap_or(0), link)
        }
        _ => compute(root, table, case, link),
    }
}

/// Computes the floor of `case` on `table` (fixture root `root`) over `link`.
pub fn compute(
    root: &Path,
    table: &TableEntry,
    case: &Case,
    link: Link,
) -> Result<NetworkFloor, String> {
    let dir = root.join(&table.dir);
    let mut bytes = log_bytes(&dir)?;
    let mut rounds = 2; // list the log, read it
    let files: Vec<_> = match case.limit {
        Some(_) => table.files.iter().take(1).collect(),
        None => table.files.iter().collect(),
    };
    if files.iter().any(|f| !f.deleted.is_empty()) {
        bytes += dv_bytes(&dir)?;
    }
    rounds += 2; // footer (DV in the same round), then pages
    for f in &files {
        let path = dir.join(&f.path);
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(
            file.try_clone().map_err(|e| e.to_string())?,
            ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        let meta = builder.metadata().clone();
        let schema = builder.schema().clone();
        let cols: Vec<usize> = case
            .columns
            .iter()
            .map(|c| schema.index_of(c).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        bytes += footer_bytes(&path, &meta, case.filter.is_some())?;
        // The rows the result needs, as sorted row indexes (None = all).
        let needed: Option<Vec<u64>> = if case.filter.is_some() {
            let pred: Vec<usize> = ["l_shipdate", "l_shipmode", "l_linenumber"]
                .iter()
                .map(|c| schema.index_of(c).map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?;
            let mask = ProjectionMask::roots(builder.parquet_schema(), pred.clone());
            let mut rows = Vec::new();
            let mut at = 0u64;
            for b in builder
                .with_projection(mask)
                .build()
                .map_err(|e| e.to_string())?
            {
                let b = b.map_err(|e| e.to_string())?;
                let hits = crate::workload::w5_matches(&b).map_err(|e| e.to_string())?;
                for i in 0..b.num_rows() {
                    let row = at + i as u64;
                    if hits.value(i) && f.deleted.binary_search(&row).is_err() {
                        rows.push(row);
                    }
                }
                at += b.num_rows() as u64;
            }
            // Candidate predicate pages: l_shipdate pages whose stats admit
            // the date, and the other predicate columns over those rows.
            let candidates = candidate_rows(&meta, pred[0])?;
            for &c in &pred {
                bytes += pages_bytes(&meta, c, |first, last| {
                    candidates.iter().any(|&(a, b)| a <= last && first <= b)
                })?;
            }
            Some(rows)
        } else if case.limit.is_some() {
            Some(vec![0])
        } else {
            None
        };
        if case.filter.is_some() {
            // One more round: predicate pages before the projected pages.
            rounds = rounds.max(5);
        }
        for &c in &cols {
            bytes += match &needed {
                None => column_chunk_bytes(&meta, c),
                Some(rows) => pages_bytes(&meta, c, |first, last| {
                    let i = rows.partition_point(|&r| r < first);
                    rows.get(i).is_some_and(|&r| r <= last)
                })?,
            };
        }
    }
    Ok(NetworkFloor::over(link, bytes, rounds))
}

/// The floor of the change feed `case` (from version `from`) on `table`
/// over `link`: four dependent rounds (list the log, read the commits,
/// the footers and DVs, the column chunks), the bytes as in the module
/// doc.
pub fn changes(
    root: &Path,
    table: &TableEntry,
    case: &Case,
    from: u64,
    link: Link,
) -> Result<NetworkFloor, String> {
    let dir = root.join(&table.dir);
    let log = dir.join("_delta_log");
    let mut commits: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(&log)
        .map_err(|e| format!("{}: {e}", log.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_suffix(".json")?.parse::<u64>().ok()?;
            (version >= from).then(|| (version, e.path()))
        })
        .collect();
    commits.sort();
    let mut bytes = 0u64;
    let mut files = std::collections::BTreeSet::new();
    let mut dvs = std::collections::BTreeSet::new();
    for (_, path) in &commits {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        bytes += text.len() as u64;
        let actions: Vec<serde_json::Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let has_cdc = actions.iter().any(|a| a.get("cdc").is_some());
        for a in &actions {
            let file = if has_cdc {
                a.get("cdc")
            } else {
                a.get("add").or_else(|| a.get("remove")).filter(|f| {
                    f.get("dataChange").and_then(serde_json::Value::as_bool) == Some(true)
                })
            };
            let Some(file) = file else { continue };
            let Some(p) = file.get("path").and_then(serde_json::Value::as_str) else {
                return Err(format!("{}: a file action without a path", path.display()));
            };
            files.insert(p.to_string());
            if let Some(dv) = file
                .get("deletionVector")
                .filter(|d| d.get("storageType").and_then(serde_json::Value::as_str) != Some("i"))
            {
                let field = |k: &str| dv.get(k).map(ToString::to_string).unwrap_or_default();
                let size = dv
                    .get("sizeInBytes")
                    .and_then(serde_json::Value::as_u64)
                    .ok_or_else(|| format!("{}: a DV without sizeInBytes", path.display()))?;
                // The size prefix and the checksum around the bitmap.
                dvs.insert((field("pathOrInlineDv"), field("offset"), size + 8));
            }
        }
    }
    bytes += dvs.iter().map(|(_, _, size)| size).sum::<u64>();
    for f in &files {
        let path = dir.join(f);
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let meta = builder.metadata().clone();
        let schema = builder.schema().clone();
        bytes += footer_bytes(&path, &meta, false)?;
        for c in &case.columns {
            // The change columns a file lacks are not read from it.
            if let Ok(i) = schema.index_of(c) {
                bytes += column_chunk_bytes(&meta, i);
            }
        }
    }
    let rounds = 4;
    Ok(NetworkFloor::over(link, bytes, rounds))
}

fn log_bytes(table: &Path) -> Result<u64, String> {
    let log = table.join("_delta_log");
    let mut entries: Vec<(String, u64)> = std::fs::read_dir(&log)
        .map_err(|e| format!("{}: {e}", log.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            Some((
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().ok()?.len(),
            ))
        })
        .collect();
    entries.sort();
    let checkpoint = entries
        .iter()
        .filter(|(n, _)| n.contains(".checkpoint."))
        .filter_map(|(n, _)| n.get(..20)?.parse::<u64>().ok())
        .max();
    Ok(entries
        .iter()
        .filter(|(n, _)| {
            let version = n.get(..20).and_then(|v| v.parse::<u64>().ok());
            match (checkpoint, version) {
                (_, None) => n == "_last_checkpoint",
                (Some(c), Some(v)) => {
                    (v == c && n.contains(".checkpoint.")) || (v > c && n.ends_with(".json"))
                }
                (None, Some(_)) => n.ends_with(".json"),
            }
        })
        .map(|(_, s)| s)
        .sum())
}

fn dv_bytes(table: &Path) -> Result<u64, String> {
    Ok(std::fs::read_dir(table)
        .map_err(|e| format!("{}: {e}", table.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("deletion_vector_")
        })
        .filter_map(|e| e.metadata().ok().map(|m| m.len()))
        .sum())
}

/// The footer (metadata + 8 bytes), plus the page indexes when `paged`.
fn footer_bytes(path: &Path, meta: &ParquetMetaData, paged: bool) -> Result<u64, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    let mut tail = [0u8; 8];
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(path).map_err(|e| e.to_string())?;
        f.seek(SeekFrom::Start(size - 8))
            .map_err(|e| e.to_string())?;
        f.read_exact(&mut tail).map_err(|e| e.to_string())?;
    }
    let mut bytes = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]])) + 8;
    if paged {
        for rg in meta.row_groups() {
            for c in rg.columns() {
                bytes += c.column_index_length().unwrap_or(0) as u64
                    + c.offset_index_length().unwrap_or(0) as u64;
            }
        }
    }
    Ok(bytes)
}

fn column_chunk_bytes(meta: &ParquetMetaData, col: usize) -> u64 {
    meta.row_groups()
        .iter()
        .map(|rg| rg.column(col).compressed_size() as u64)
        .sum()
}

/// Compressed bytes of the pages of column `col` whose row span
/// `(first, last)` satisfies `wanted` (file row indexes).
fn pages_bytes(
    meta: &ParquetMetaData,
    col: usize,
    wanted: impl Fn(u64, u64) -> bool,
) -> Result<u64, String> {
    let offsets = meta.offset_index().ok_or("no offset index in a W5 file")?;
    let mut start = 0u64;
    let mut bytes = 0u64;
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let pages = offsets[g][col].page_locations();
        for (i, p) in pages.iter().enumerate() {
            let first = start + p.first_row_index as u64;
            let next = pages.get(i + 1).map_or(start + rg.num_rows() as u64, |n| {
                start + n.first_row_index as u64
            });
            if wanted(first, next.saturating_sub(1)) {
                bytes += p.compressed_page_size as u64;
            }
        }
        start += rg.num_rows() as u64;
    }
    Ok(bytes)
}

/// Row spans of the pages of `col` (a Date32 column) whose min/max admit
/// the W5 date.
fn candidate_rows(meta: &ParquetMetaData, col: usize) -> Result<Vec<(u64, u64)>, String> {
    let offsets = meta.offset_index().ok_or("no offset index in a W5 file")?;
    let indexes = meta.column_index().ok_or("no column index in a W5 file")?;
    let mut out = Vec::new();
    let mut start = 0u64;
    for (g, rg) in meta.row_groups().iter().enumerate() {
        let pages = offsets[g][col].page_locations();
        let admits: Vec<bool> = match &indexes[g][col] {
            ColumnIndexMetaData::INT32(idx) => (0..pages.len())
                .map(|i| match (idx.min_value(i), idx.max_value(i)) {
                    (Some(min), Some(max)) => *min <= W5_DATE && W5_DATE <= *max,
                    _ => true,
                })
                .collect(),
            _ => vec![true; pages.len()],
        };
        for (i, p) in pages.iter().enumerate() {
            let first = start + p.first_row_index as u64;
            let next = pages.get(i + 1).map_or(start + rg.num_rows() as u64, |n| {
                start + n.first_row_index as u64
            });
            if admits[i] {
                out.push((first, next.saturating_sub(1)));
            }
        }
        start += rg.num_rows() as u64;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;
    use crate::workload::Action;

    /// Writes a one-row Parquet file of `columns` at `dir/name`; its
    /// footer and column chunk bytes.
    fn parquet(dir: &Path, name: &str, columns: &[&str]) -> u64 {
        let fields: Vec<Field> = columns
            .iter()
            .map(|c| match *c {
                "_change_type" => Field::new(*c, DataType::Utf8, true),
                _ => Field::new(*c, DataType::Int64, true),
            })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let arrays = columns
            .iter()
            .map(|c| match *c {
                "_change_type" => Arc::new(StringArray::from(vec!["insert"])) as _,
                _ => Arc::new(Int64Array::from(vec![7])) as _,
            })
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays).unwrap();
        let path = dir.join(name);
        let mut w = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            schema,
            None,
        )
        .unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let meta = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .metadata()
            .clone();
        footer_bytes(&path, &meta, false).unwrap()
            + (0..columns.len())
                .map(|i| column_chunk_bytes(&meta, i))
                .sum::<u64>()
    }

    #[test]
    fn a_change_feed_floor_counts_the_commits_and_the_files_its_rows_come_from() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t/_delta_log");
        std::fs::create_dir_all(&log).unwrap();
        let t = dir.path().join("t");
        let a = parquet(&t, "a.parquet", &["id"]);
        let b = parquet(&t, "b.parquet", &["id"]);
        let c = parquet(&t, "c.parquet", &["id", "_change_type"]);
        parquet(&t, "unread.parquet", &["id"]);
        let dv = r#"{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":34,"cardinality":1}"#;
        let inline = r#"{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L","sizeInBytes":40,"cardinality":6}"#;
        let commits = [
            // Before the range: not read.
            r#"{"add":{"path":"unread.parquet","dataChange":true}}"#.to_string(),
            // An insert, and an add that changes no data (compaction).
            r#"{"add":{"path":"a.parquet","dataChange":true}}
{"add":{"path":"unread.parquet","dataChange":false}}"#
                .to_string(),
            // cdc files stand for the commit: its add is not read.
            r#"{"cdc":{"path":"c.parquet","dataChange":false}}
{"add":{"path":"unread.parquet","dataChange":true}}"#
                .to_string(),
            // A DV replaced on b: the file once, the old DV (inline: no
            // read) and the new one by its range, repeated: once.
            format!(
                r#"{{"add":{{"path":"b.parquet","dataChange":true,"deletionVector":{dv}}}}}
{{"remove":{{"path":"b.parquet","dataChange":true,"deletionVector":{inline}}}}}
{{"remove":{{"path":"b.parquet","dataChange":true,"deletionVector":{dv}}}}}"#
            ),
        ];
        let mut commit_bytes = 0;
        for (v, text) in commits.iter().enumerate() {
            std::fs::write(log.join(format!("{v:020}.json")), text).unwrap();
            if v >= 1 {
                commit_bytes += text.len() as u64;
            }
        }
        let table = TableEntry {
            dir: "t".into(),
            description: String::new(),
            rows: 0,
            checksum: Default::default(),
            queries: Default::default(),
            files: Vec::new(),
            verified_by: Vec::new(),
        };
        let case = Case {
            id: "W7".into(),
            table: "t".into(),
            action: Action::Changes,
            columns: vec!["id".into(), "_change_type".into(), "_commit_version".into()],
            filter: None,
            limit: None,
            on_s3: true,
            changes_from: Some(1),
        };
        let link = Link {
            latency: Duration::from_millis(100),
            bytes_per_sec: Some(1_000_000),
        };
        let floor = of_case(dir.path(), &table, &case, link).unwrap();
        assert_eq!(floor.bytes, commit_bytes + a + b + c + 34 + 8);
        assert_eq!(floor.rounds, 4);
        let secs = floor.bytes as f64 / 1e6 + 0.4;
        assert!((floor.secs - secs).abs() < 1e-9, "{} {secs}", floor.secs);
    }
}
