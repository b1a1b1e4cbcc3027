//! A checkpoint's rows are unique (protocol digest §2.10): no logical file
//! (path and DV unique id) is added twice, across its parts and sidecars
//! or within one, and none is both added and removed.
//!
//! Checking costs one hash per live row, computed where each row range
//! is decoded (no per-row allocation for plain relative paths), then a
//! radix pass of the hashes into small buckets, sorted side by side:
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

/// Hashes per bucket of [`suspects`]: small enough to sort in the L1
/// cache, large enough for the bucket offsets to stay in L2.
const BUCKET_HASHES: usize = 64;

/// The hashes shared by two adds, or by an add and a remove: what may be
/// a repeated key (or, rarely, two keys of one hash).
///
/// One radix pass puts the add hashes into buckets by their top bits
/// (hashes are uniform: about [`BUCKET_HASHES`] a bucket); the buckets are
/// sorted side by side, each on its own, and neighbours compared. A remove
/// hash is searched in its bucket only. Every hash is read twice and
/// sorted among a few dozen others, where one sort of all of them compared
/// each with about log2(n) others.
fn suspects(adds: &[KeyedAdds], removes: &[RemoveKeys]) -> Result<HashSet<u64>> {
    let all = || adds.iter().flat_map(|k| k.hashes.iter().copied());
    let n: usize = adds.iter().map(|k| k.hashes.len()).sum();
    let buckets = Buckets::new(n);
    let mut starts = vec![0usize; buckets.count + 1];
    for h in all() {
        starts[buckets.of(h) + 1] += 1;
    }
    for b in 0..buckets.count {
        starts[b + 1] += starts[b];
    }
    let mut sorted = vec![0u64; n];
    let mut next = starts[..buckets.count].to_vec();
    for h in all() {
        let b = buckets.of(h);
        sorted[next[b]] = h;
        next[b] += 1;
    }
    // Contiguous runs of buckets, one per share, sorted side by side.
    let shares = crate::parallel::cores().min(buckets.count);
    let mut runs = Vec::with_capacity(shares);
    let mut rest: &mut [u64] = &mut sorted;
    let mut taken = 0;
    for share in 0..shares {
        let first = buckets.count * share / shares;
        let end = buckets.count * (share + 1) / shares;
        let (run, tail) = rest.split_at_mut(starts[end] - taken);
        taken = starts[end];
        rest = tail;
        let bounds: Vec<usize> = starts[first..=end]
            .iter()
            .map(|s| s - starts[first])
            .collect();
        runs.push(std::sync::Mutex::new((run, bounds)));
    }
    let found = crate::parallel::run_parallel(
        &runs,
        |run| -> Result<Vec<u64>> {
            let mut run = run
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let (hashes, bounds) = &mut *run;
            let mut twice = Vec::new();
            for w in bounds.windows(2) {
                let bucket = &mut hashes[w[0]..w[1]];
                bucket.sort_unstable();
                twice.extend(bucket.windows(2).filter(|p| p[0] == p[1]).map(|p| p[0]));
            }
            Ok(twice)
        },
        |_| super::decoding_failed("the checkpoint", "a thread checking its rows panicked"),
    );
    let mut out = HashSet::new();
    for share in found {
        out.extend(share?);
    }
    for h in removes.iter().flat_map(|r| r.hashes.iter().copied()) {
        let b = buckets.of(h);
        if sorted[starts[b]..starts[b + 1]].binary_search(&h).is_ok() {
            out.insert(h);
        }
    }
    Ok(out)
}

/// How [`suspects`] splits `n` hashes into buckets by their top bits.
#[derive(Debug, Clone, Copy)]
struct Buckets {
    /// Buckets (a power of two, at least 1).
    count: usize,
    /// `64 - log2(count)`: the shift leaving a hash's bucket.
    shift: u32,
}

impl Buckets {
    fn new(n: usize) -> Self {
        let bits = (n / BUCKET_HASHES).max(1).ilog2().min(24);
        Self {
            count: 1 << bits,
            shift: 64 - bits,
        }
    }

    fn of(self, hash: u64) -> usize {
        // A shift by 64 would overflow: one bucket holds everything.
        hash.checked_shr(self.shift).unwrap_or(0) as usize
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::add_columns::AddColumnsBuilder;

    fn keyed(hashes: Vec<u64>) -> KeyedAdds {
        KeyedAdds {
            file: 0,
            adds: AddColumnsBuilder::default().finish(),
            hashes,
        }
    }

    fn removes(hashes: Vec<u64>) -> RemoveKeys {
        RemoveKeys {
            file: 0,
            path: StringArray::from(vec![""; hashes.len()]),
            dv: DvColumns::absent(hashes.len()),
            hashes,
        }
    }

    /// What `suspects` finds, by a plain sort of everything.
    fn reference(adds: &[Vec<u64>], removed: &[u64]) -> HashSet<u64> {
        let mut all: Vec<u64> = adds.iter().flatten().copied().collect();
        all.sort_unstable();
        let mut out: HashSet<u64> = all
            .windows(2)
            .filter(|w| w[0] == w[1])
            .map(|w| w[0])
            .collect();
        out.extend(removed.iter().filter(|h| all.binary_search(h).is_ok()));
        out
    }

    proptest! {
        #[test]
        fn suspects_are_the_repeated_hashes(
            // Few distinct values in the low and high bits: repeats in
            // one batch, across batches, and in one bucket or another.
            batches in proptest::collection::vec(
                proptest::collection::vec(
                    (0u64..40, 0u64..4).prop_map(|(lo, hi)| lo ^ (hi << 62) ^ (lo << 40)),
                    0..300,
                ),
                0..5,
            ),
            removed in proptest::collection::vec(0u64..60, 0..20),
            spread in 0usize..3,
        ) {
            // Pad with unique hashes, spread over every bucket, so the
            // table has many buckets.
            let mut batches = batches;
            let pad: Vec<u64> = (0..(spread * 5_000) as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1 << 61)
                .collect();
            batches.push(pad);
            let expected = reference(&batches, &removed);
            let adds: Vec<KeyedAdds> = batches.into_iter().map(keyed).collect();
            let got = suspects(&adds, &[removes(removed)]).unwrap();
            prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn buckets_cover_every_hash() {
        for n in [0, 1, 63, 64, 65, 1_000, 1 << 20, usize::MAX] {
            let b = Buckets::new(n);
            assert!(b.count.is_power_of_two());
            assert!(b.of(u64::MAX) < b.count, "{n}");
            assert_eq!(b.of(0), 0);
        }
    }
}
