//! Which files of one commit change rows, and how (the rules of the
//! module doc of [`crate::changes`]).

use std::collections::{HashMap, HashSet};

use super::ChangeSource;
use crate::add_columns::FileKey;
use crate::commit::{Action, DvLine, PartitionEntries};
use crate::error::{LogError, Result};
use crate::paths::TablePaths;

/// One change file as the commit states it.
#[derive(Clone, Copy)]
pub(super) struct ChangeRow<'a> {
    pub(super) line: usize,
    pub(super) path: &'a str,
    pub(super) partition_values: PartitionEntries<'a>,
    pub(super) size: Option<i64>,
    pub(super) stats: Option<&'a str>,
    pub(super) dv: Option<&'a DvLine<'a>>,
    pub(super) paired: Option<&'a DvLine<'a>>,
    pub(super) source: ChangeSource,
}

/// The change files of one commit's file `actions` (`add`, `remove`,
/// `cdc`, with their line numbers), of the commit file `path` at
/// `version`: its `cdc` files when it has any, else its adds and removes
/// with a replaced DV's two sides paired. `partitioned`: whether the
/// table has partition columns (a remove must then carry its values).
pub(super) fn select<'a>(
    paths: &TablePaths,
    path: &str,
    version: u64,
    partitioned: bool,
    actions: &'a [(usize, Action<'a>)],
) -> Result<Vec<ChangeRow<'a>>> {
    let has_cdc = actions.iter().any(|(_, a)| matches!(a, Action::Cdc(_)));
    if has_cdc {
        return Ok(cdc_rows(actions));
    }
    let key = |p: &str| paths.file_key(p, None);
    let mut added = HashSet::new();
    for (_, a) in actions {
        if let Action::Add(a) = a
            && a.data_change
        {
            added.insert(key(&a.path)?);
        }
    }
    let mut rows = Vec::new();
    // Removes of a path that the commit also adds: the old DV of a
    // replaced DV.
    let mut replaced: HashMap<FileKey, Option<&DvLine<'a>>> = HashMap::new();
    for (line, a) in actions {
        let Action::Remove(r) = a else { continue };
        if !r.data_change {
            continue;
        }
        let k = key(&r.path)?;
        if added.contains(&k) {
            replaced.insert(k, r.deletion_vector.as_ref());
            continue;
        }
        let partition_values = match r.partition_values {
            Some(pv) => pv,
            None if partitioned => {
                return Err(LogError::InvalidAction {
                    path: path.to_string(),
                    detail: format!(
                        "line {line}: the remove of '{}' at version {version} has no partitionValues, which a change data feed of a partitioned table needs",
                        r.path
                    ),
                });
            }
            None => PartitionEntries(None),
        };
        rows.push(ChangeRow {
            line: *line,
            path: &r.path,
            partition_values,
            size: r.size,
            stats: r.stats.as_deref(),
            dv: r.deletion_vector.as_ref(),
            paired: None,
            source: ChangeSource::Delete,
        });
    }
    for (line, a) in actions {
        let Action::Add(a) = a else { continue };
        if !a.data_change {
            continue;
        }
        let base = ChangeRow {
            line: *line,
            path: &a.path,
            partition_values: a.partition_values,
            size: Some(a.size),
            stats: a.stats.as_deref(),
            dv: a.deletion_vector.as_ref(),
            paired: None,
            source: ChangeSource::Insert,
        };
        match replaced.get(&key(&a.path)?) {
            None => rows.push(base),
            Some(old) => replaced_dv(&mut rows, base, *old),
        }
    }
    Ok(rows)
}

/// The `cdc` files of a commit that has any: their rows, nothing of its
/// adds and removes.
fn cdc_rows<'a>(actions: &'a [(usize, Action<'a>)]) -> Vec<ChangeRow<'a>> {
    actions
        .iter()
        .filter_map(|(line, a)| match a {
            Action::Cdc(c) => Some(ChangeRow {
                line: *line,
                path: &c.path,
                partition_values: c.partition_values,
                size: Some(c.size),
                stats: None,
                dv: None,
                paired: None,
                source: ChangeSource::Cdc,
            }),
            _ => None,
        })
        .collect()
}

/// The rows of a file whose DV the commit replaces (`added`, its add with
/// the new DV; `old`, the removed one): the rows the new DV deletes and the
/// old did not, as deletes, and the rows the old deleted and the new does
/// not, as inserts. Nothing when the two DVs are the same.
fn replaced_dv<'a>(
    rows: &mut Vec<ChangeRow<'a>>,
    added: ChangeRow<'a>,
    old: Option<&'a DvLine<'a>>,
) {
    let new = added.dv;
    let same = match (old, new) {
        (Some(o), Some(n)) => o.unique_id() == n.unique_id(),
        (None, None) => true,
        _ => false,
    };
    if same {
        return;
    }
    if let Some(n) = new {
        rows.push(ChangeRow {
            dv: old,
            paired: Some(n),
            source: ChangeSource::Delete,
            ..added
        });
    }
    if let Some(o) = old {
        rows.push(ChangeRow {
            dv: new,
            paired: Some(o),
            source: ChangeSource::Insert,
            ..added
        });
    }
}
