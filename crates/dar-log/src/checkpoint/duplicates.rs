//! A checkpoint's rows are unique (protocol digest §2.10): no logical file
//! (path and DV unique id) is added twice, across its parts and sidecars
//! or within one, and none is both added and removed.
//!
//! Checking costs one hash per live row, computed where each row range
//! is decoded (no per-row allocation for plain relative paths), then one
//! sort of the hashes, split by hash over the cores:
//!
//! ```text
//! decode piece:  add rows    -> key hash per row      (KeyHashes)
//!                remove rows -> their keys and hashes (RemoveKeys)
//! all parts:     hashes seen twice among the adds, or shared by an add
//!                and a remove -> suspects (nearly always none: done)
//! suspects:      their real keys; two adds of one key -> AddFacts equal:
//!                the later copy is dropped, else ConflictingActions;
//!                an add and a remove of one key -> ConflictingActions
//! ```
//!
//! Only the adds still live after newer commits are checked: an add a
//! newer commit removed or re-added is not read at all.

use std::collections::{BTreeMap, HashSet};

use arrow_array::{Array, BooleanArray, StringArray};

use crate::add_columns::{AddColumns, DvColumns};
use crate::duplicates::AddFacts;
use crate::error::{LogError, Result};
use crate::paths::{TablePaths, is_plain_relative};

/// Hashes logical-file keys. One per checkpoint read: every part and
/// sidecar hashes with the same random key.
#[derive(Debug, Clone, Default)]
pub(super) struct KeyHasher(ahash::RandomState);

impl KeyHasher {
    /// The key hash of each row of `path` / `dv`; `plain` when every path
    /// is known to be a plain relative name.
    pub(super) fn hashes(
        &self,
        paths: &TablePaths,
        path: &StringArray,
        dv: &DvColumns,
        plain: bool,
    ) -> Result<Vec<u64>> {
        let mut buf = String::new();
        let no_dv = dv.is_absent();
        (0..path.len())
            .map(|i| {
                let p = path.value(i);
                let parts = if no_dv { None } else { dv.key_parts(i) };
                match parts {
                    // The packed key of a plain path without a DV is the path.
                    None if plain || is_plain_relative(p) => Ok(self.0.hash_one(p)),
                    parts => {
                        paths.key_into(p, parts, &mut buf)?;
                        Ok(self.0.hash_one(buf.as_str()))
                    }
                }
            })
            .collect()
    }
}

/// The adds and remove keys of every file of a checkpoint, each file named.
#[derive(Default)]
pub(super) struct Gathered {
    names: Vec<String>,
    adds: Vec<KeyedAdds>,
    removes: Vec<RemoveKeys>,
}

impl Gathered {
    /// Takes the live adds of file `name` (batches with the key hashes of
    /// their rows) and the keys of its removes.
    pub(super) fn take(
        &mut self,
        name: String,
        adds: Vec<AddColumns>,
        hashes: Vec<Vec<u64>>,
        removes: Vec<(StringArray, DvColumns, Vec<u64>)>,
    ) {
        let file = self.names.len();
        self.names.push(name);
        self.adds.extend(
            adds.into_iter()
                .zip(hashes)
                .map(|(adds, hashes)| KeyedAdds { file, adds, hashes }),
        );
        self.removes
            .extend(removes.into_iter().map(|(path, dv, hashes)| RemoveKeys {
                file,
                path,
                dv,
                hashes,
            }));
    }
}

/// The live adds of one batch of a checkpoint file, with their key hashes.
#[derive(Debug)]
struct KeyedAdds {
    /// The checkpoint part or sidecar (an index into the read's names).
    file: usize,
    adds: AddColumns,
    hashes: Vec<u64>,
}

/// The remove rows of one batch of a checkpoint file: their keys only.
#[derive(Debug)]
struct RemoveKeys {
    /// The checkpoint part or sidecar (an index into the read's names).
    file: usize,
    path: StringArray,
    dv: DvColumns,
    hashes: Vec<u64>,
}

/// The adds of a whole checkpoint (at `version`, every file `gathered`),
/// each logical file once: copies that agree are dropped, and copies that
/// differ, or an add whose file the checkpoint also removes, are an error
/// naming the files and the data file.
pub(super) fn unique_adds(
    version: u64,
    gathered: Gathered,
    paths: &TablePaths,
) -> Result<Vec<AddColumns>> {
    let Gathered {
        names,
        adds,
        removes,
    } = gathered;
    let suspects = suspects(&adds, &removes)?;
    if suspects.is_empty() {
        return Ok(adds.into_iter().map(|k| k.adds).collect());
    }
    let conflict = |files: [usize; 2], path: &str, detail: String| {
        let mut files: Vec<String> = files.iter().map(|&f| names[f].clone()).collect();
        files.dedup();
        LogError::ConflictingActions {
            version,
            files,
            path: path.to_string(),
            detail,
        }
    };
    // The add rows of each suspect key, in file order.
    let mut rows: BTreeMap<String, Vec<(usize, usize)>> = BTreeMap::new();
    for (b, k) in adds.iter().enumerate() {
        for (i, h) in k.hashes.iter().enumerate() {
            if suspects.contains(h) {
                let key = paths.file_key(k.adds.path.value(i), k.adds.dv.key_parts(i))?;
                rows.entry(key.as_str().to_string())
                    .or_default()
                    .push((b, i));
            }
        }
    }
    for r in &removes {
        for (i, h) in r.hashes.iter().enumerate() {
            if !suspects.contains(h) {
                continue;
            }
            let key = paths.file_key(r.path.value(i), r.dv.key_parts(i))?;
            if let Some(&(b, row)) = rows.get(key.as_str()).and_then(|v| v.first()) {
                let add = &adds[b];
                return Err(conflict(
                    [add.file, r.file],
                    add.adds.path.value(row),
                    "the checkpoint both adds and removes it, and a checkpoint's rows are unique"
                        .into(),
                ));
            }
        }
    }
    let mut dropped: Vec<Vec<usize>> = vec![Vec::new(); adds.len()];
    for copies in rows.values() {
        let [(b0, i0), rest @ ..] = copies.as_slice() else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        let first = AddFacts::from_columns(&adds[*b0].adds, *i0)?;
        for &(b, i) in rest {
            match first.difference(&AddFacts::from_columns(&adds[b].adds, i)?) {
                None => dropped[b].push(i),
                Some(what) => {
                    return Err(conflict(
                        [adds[*b0].file, adds[b].file],
                        adds[b].adds.path.value(i),
                        format!(
                            "the checkpoint adds it twice with different {what}, and a checkpoint's rows are unique"
                        ),
                    ));
                }
            }
        }
    }
    adds.into_iter()
        .zip(dropped)
        .map(|(k, drop)| {
            if drop.is_empty() {
                return Ok(k.adds);
            }
            let mut keep = vec![true; k.adds.len()];
            for i in drop {
                keep[i] = false;
            }
            k.adds.filter(&BooleanArray::from(keep))
        })
        .collect()
}

/// The hashes shared by two adds, or by an add and a remove: what may be
/// a repeated key (or, rarely, two keys of one hash). The hashes are split
/// by value into one share per core and each share sorted on its own.
fn suspects(adds: &[KeyedAdds], removes: &[RemoveKeys]) -> Result<HashSet<u64>> {
    let shares = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    let ids: Vec<u64> = (0..shares).collect();
    let found = crate::parallel::run_parallel(
        &ids,
        |&share| -> Result<Vec<u64>> {
            let mine = |h: &&u64| **h % shares == share;
            let mut added: Vec<u64> = adds
                .iter()
                .flat_map(|k| k.hashes.iter().filter(mine))
                .copied()
                .collect();
            added.sort_unstable();
            let mut out: Vec<u64> = added
                .windows(2)
                .filter(|w| w[0] == w[1])
                .map(|w| w[0])
                .collect();
            for r in removes {
                out.extend(
                    r.hashes
                        .iter()
                        .filter(mine)
                        .filter(|h| added.binary_search(h).is_ok()),
                );
            }
            Ok(out)
        },
        |_| super::decoding_failed("the checkpoint", "a thread checking its rows panicked"),
    );
    let mut out = HashSet::new();
    for share in found {
        out.extend(share?);
    }
    Ok(out)
}
