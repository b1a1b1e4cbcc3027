//! One action per logical file (protocol digest §2.10).
//!
//! A commit holds at most one `add` per logical file (path and DV unique
//! id), and a checkpoint's rows are unique. When a log repeats one anyway,
//! the copies are compared field by field as [`AddFacts`]: copies that
//! agree are read once, copies that differ are an error
//! ([`LogError::ConflictingActions`]) naming the version, the log files and
//! the data file, never two rows of one file. This runs only on the rare
//! repeated key: replay finds repeats by hashing, and builds facts for
//! those alone.

use arrow_array::cast::AsArray;
use arrow_array::{Array, MapArray, RecordBatch, StructArray};
use arrow_schema::{Field, Schema};
use serde_json::Value;

use crate::add_columns::{AddColumns, AddStats};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use crate::commit::{Action, AddLine, RemoveLine, parse_actions};
use crate::error::{LogError, Result};
use crate::listing::LogFile;
use crate::paths::TablePaths;

/// The fields of an `add` that a reader reads, in a form that compares by
/// meaning: JSON statistics as values (not text), partition values as
/// sorted entries, typed checkpoint structs as JSON values. The path is
/// left out: two copies are compared only when their keys are equal.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct AddFacts {
    size: Option<i64>,
    modification_time: Option<i64>,
    partition_values: Vec<(String, Option<String>)>,
    stats: Option<Value>,
    stats_parsed: Option<Value>,
    partition_values_parsed: Option<Value>,
    deletion_vector: Option<DvFacts>,
    /// Read from commits only (a checkpoint's adds are all `false`, and
    /// not read).
    data_change: Option<bool>,
}

#[derive(Debug, PartialEq)]
struct DvFacts {
    storage_type: String,
    path_or_inline_dv: String,
    offset: Option<i32>,
    size_in_bytes: Option<i32>,
    cardinality: Option<i64>,
}

/// JSON statistics text as a value; text that is not JSON compares as text.
fn stats_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

impl AddFacts {
    /// The facts of a commit's (or JSON checkpoint's) add line.
    pub(crate) fn from_line(a: &AddLine<'_>) -> std::result::Result<Self, serde_json::Error> {
        let mut partition_values = Vec::new();
        a.partition_values
            .for_each(|k, v| partition_values.push((k.to_string(), v.map(str::to_string))))?;
        partition_values.sort();
        Ok(Self {
            size: Some(a.size),
            modification_time: Some(a.modification_time),
            partition_values,
            stats: a.stats.as_deref().map(stats_value),
            stats_parsed: None,
            partition_values_parsed: None,
            deletion_vector: a.deletion_vector.as_ref().map(|d| DvFacts {
                storage_type: d.storage_type.to_string(),
                path_or_inline_dv: d.path_or_inline_dv.to_string(),
                offset: d.offset,
                size_in_bytes: Some(d.size_in_bytes),
                cardinality: Some(d.cardinality),
            }),
            data_change: Some(a.data_change),
        })
    }

    /// The facts of a commit's remove line (its optional fields as given).
    fn from_remove(r: &RemoveLine<'_>) -> std::result::Result<Self, serde_json::Error> {
        let mut partition_values = Vec::new();
        if let Some(pv) = &r.partition_values {
            pv.for_each(|k, v| partition_values.push((k.to_string(), v.map(str::to_string))))?;
        }
        partition_values.sort();
        Ok(Self {
            size: r.size,
            modification_time: None,
            partition_values,
            stats: r.stats.as_deref().map(stats_value),
            stats_parsed: None,
            partition_values_parsed: None,
            deletion_vector: r.deletion_vector.as_ref().map(|d| DvFacts {
                storage_type: d.storage_type.to_string(),
                path_or_inline_dv: d.path_or_inline_dv.to_string(),
                offset: d.offset,
                size_in_bytes: Some(d.size_in_bytes),
                cardinality: Some(d.cardinality),
            }),
            data_change: Some(r.data_change),
        })
    }

    /// The facts of row `i` of a batch of adds (statistics a checkpoint
    /// keeps compressed are decoded for that row alone).
    pub(crate) fn from_columns(batch: &AddColumns, i: usize) -> Result<Self> {
        let int = |a: &arrow_array::Int64Array| a.is_valid(i).then(|| a.value(i));
        let (stats, stats_parsed) = match &batch.stats {
            AddStats::Inline { json, parsed } => (
                json.is_valid(i).then(|| stats_value(json.value(i))),
                parsed
                    .as_ref()
                    .map(|p| row_json(p, i))
                    .transpose()?
                    .flatten(),
            ),
            AddStats::Retained { file, rows, .. } => {
                let row = usize::try_from(rows.value(i)).unwrap_or(usize::MAX);
                let (json, parsed) = file.row_stats(row)?;
                (
                    json.as_deref().map(stats_value),
                    parsed.map(|p| row_json(&p, 0)).transpose()?.flatten(),
                )
            }
        };
        let dv = &batch.dv;
        let deletion_vector = dv.key_parts(i).map(|(st, p, offset)| DvFacts {
            storage_type: st.to_string(),
            path_or_inline_dv: p.to_string(),
            offset,
            size_in_bytes: dv
                .size_in_bytes
                .is_valid(i)
                .then(|| dv.size_in_bytes.value(i)),
            cardinality: dv.cardinality.is_valid(i).then(|| dv.cardinality.value(i)),
        });
        Ok(Self {
            size: int(&batch.size),
            modification_time: int(&batch.modification_time),
            partition_values: map_entries(&batch.partition_values, i),
            stats,
            stats_parsed,
            partition_values_parsed: batch
                .partition_values_parsed
                .as_ref()
                .map(|p| row_json(p, i))
                .transpose()?
                .flatten(),
            deletion_vector,
            data_change: None,
        })
    }

    /// How `self` and `other` differ, as words for an error (the first
    /// field that differs); `None` when they are the same action.
    pub(crate) fn difference(&self, other: &Self) -> Option<String> {
        fn show<T: std::fmt::Debug>(v: &Option<T>) -> String {
            match v {
                Some(v) => format!("{v:?}"),
                None => "none".into(),
            }
        }
        if self.size != other.size {
            return Some(format!(
                "size ({} and {})",
                show(&self.size),
                show(&other.size)
            ));
        }
        if self.deletion_vector != other.deletion_vector {
            return Some("deletion vector".into());
        }
        if self.partition_values != other.partition_values
            || self.partition_values_parsed != other.partition_values_parsed
        {
            return Some("partition values".into());
        }
        if self.stats != other.stats || self.stats_parsed != other.stats_parsed {
            return Some("statistics".into());
        }
        if self.modification_time != other.modification_time {
            return Some(format!(
                "modificationTime ({} and {})",
                show(&self.modification_time),
                show(&other.modification_time)
            ));
        }
        if self.data_change != other.data_change {
            return Some("dataChange".into());
        }
        None
    }
}

/// The entries of map row `i`, sorted.
fn map_entries(map: &MapArray, i: usize) -> Vec<(String, Option<String>)> {
    if map.is_null(i) {
        return Vec::new();
    }
    let entries = map.value(i);
    let (Some(keys), Some(values)) = (
        entries.column(0).as_string_opt::<i32>(),
        entries.column(1).as_string_opt::<i32>(),
    ) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Option<String>)> = (0..keys.len())
        .map(|j| {
            (
                keys.value(j).to_string(),
                values.is_valid(j).then(|| values.value(j).to_string()),
            )
        })
        .collect();
    out.sort();
    out
}

/// Row `i` of a struct column as a JSON value (`None` when null).
fn row_json(s: &StructArray, i: usize) -> Result<Option<Value>> {
    if s.is_null(i) {
        return Ok(None);
    }
    let err = |e| LogError::arrow("comparing repeated adds", e);
    let row = s.slice(i, 1);
    let schema = Schema::new(vec![Field::new("v", row.data_type().clone(), true)]);
    let batch = RecordBatch::try_new(std::sync::Arc::new(schema), vec![std::sync::Arc::new(row)])
        .map_err(err)?;
    let mut w = arrow_json::LineDelimitedWriter::new(Vec::new());
    w.write(&batch).map_err(err)?;
    w.finish().map_err(err)?;
    let mut line: Value = serde_json::from_slice(&w.into_inner())
        .map_err(|e| err(arrow_schema::ArrowError::JsonError(e.to_string())))?;
    Ok(line.get_mut("v").map(Value::take))
}

/// The facts of the add on line `line` of a commit (`bytes` of `file`).
fn add_on_line(file: &str, bytes: &[u8], line: usize) -> Result<Option<AddFacts>> {
    let Some(text) = bytes.split(|b| *b == b'\n').nth(line.saturating_sub(1)) else {
        return Ok(None);
    };
    let mut facts = None;
    parse_actions(file, text, |_, action| {
        if let Action::Add(a) = action {
            facts = Some(
                AddFacts::from_line(&a).map_err(|source| LogError::MalformedJson {
                    path: file.to_string(),
                    line,
                    source,
                })?,
            );
        }
        Ok(())
    })?;
    Ok(facts)
}

/// A commit (or compaction) file that adds one logical file twice, on
/// `first_line` and on `line` (`second`): `Ok` when the two adds are the
/// same action (the second is then not read), else the error.
pub(crate) fn repeated_commit_add(
    file: &LogFile,
    bytes: &[u8],
    first_line: usize,
    line: usize,
    second: &AddLine<'_>,
) -> Result<()> {
    let name = file.location.to_string();
    let facts = |a: &AddLine<'_>| {
        AddFacts::from_line(a).map_err(|source| LogError::MalformedJson {
            path: name.clone(),
            line,
            source,
        })
    };
    let second_facts = facts(second)?;
    let Some(first) = add_on_line(&name, bytes, first_line)? else {
        return Ok(());
    };
    match first.difference(&second_facts) {
        None => Ok(()),
        Some(what) => Err(LogError::ConflictingActions {
            version: file.version,
            files: vec![name],
            path: second.path.to_string(),
            detail: format!(
                "added twice (lines {first_line} and {line}) with different {what}; a commit holds at most one add per file"
            ),
        }),
    }
}

/// The file actions of one commit (`file`, at `version`) for a change
/// feed, each add and each remove of a logical file once: a repeat of the
/// same action is dropped, a repeat with other values is an error naming
/// the commit, both lines and the path. Other actions pass as they are.
pub(crate) fn without_repeats<'a>(
    file: &str,
    version: u64,
    paths: &TablePaths,
    actions: Vec<(usize, Action<'a>)>,
) -> Result<Vec<(usize, Action<'a>)>> {
    let facts = |line: usize, a: &Action<'_>| {
        match a {
            Action::Add(a) => AddFacts::from_line(a),
            Action::Remove(r) => AddFacts::from_remove(r),
            _ => Ok(AddFacts::default()),
        }
        .map_err(|source| LogError::MalformedJson {
            path: file.to_string(),
            line,
            source,
        })
    };
    let mut firsts = HashMap::new();
    let mut out: Vec<(usize, Action<'a>)> = Vec::with_capacity(actions.len());
    for (line, action) in actions {
        let (is_add, path, dv) = match &action {
            Action::Add(a) => (true, &a.path, a.deletion_vector.as_ref()),
            Action::Remove(r) => (false, &r.path, r.deletion_vector.as_ref()),
            _ => {
                out.push((line, action));
                continue;
            }
        };
        let key = paths.file_key(path, dv.map(|d| d.key_parts()))?;
        match firsts.entry((is_add, key)) {
            Entry::Vacant(e) => {
                e.insert(out.len());
                out.push((line, action));
            }
            Entry::Occupied(e) => {
                let (first_line, first) = &out[*e.get()];
                let kind = if is_add { "added" } else { "removed" };
                if let Some(what) = facts(*first_line, first)?.difference(&facts(line, &action)?) {
                    return Err(LogError::ConflictingActions {
                        version,
                        files: vec![file.to_string()],
                        path: path.to_string(),
                        detail: format!(
                            "{kind} twice (lines {first_line} and {line}) with different {what}; a commit holds at most one add and one remove per file"
                        ),
                    });
                }
            }
        }
    }
    Ok(out)
}
