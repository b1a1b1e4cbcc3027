//! Choosing log compaction files to stand in for runs of commits (protocol
//! digest §1.6): `pad20(x).pad20(y).compacted.json` holds the reconciled
//! actions of commits `x..=y`, so replay may read it once instead of
//! `y - x + 1` commit files.
//!
//! ```text
//! commits      lo ... x ... y ... version-1  version
//!                     [compaction]            (always read: commitInfo)
//! pos := version - 1
//! while a compaction [x, y] has lo <= x and y <= pos:
//!     take the widest (ties: the newest); read commits y+1..=pos, then it
//!     pos := x - 1
//! read commits lo..=pos
//! ```
//!
//! `lo` is the first commit of the segment: checkpoint + 1, or 0 without a
//! checkpoint, so a compaction never reaches into the checkpoint. The commit
//! at the target version itself is always read: the snapshot's `commitInfo`
//! (and in-commit timestamp) must come from it.

use super::name::LogFileKind;
use super::segment::LogFile;

/// The last version a compaction covers, `None` for other files.
fn end_of(f: &LogFile) -> Option<u64> {
    match f.kind {
        LogFileKind::Compaction { end } => Some(end),
        _ => None,
    }
}

/// The files to replay for `commits` (contiguous, ascending, ending at the
/// target version), with usable `compactions` standing in for runs of
/// commits. Ascending by covered versions; each version covered once.
pub(crate) fn plan(commits: &[LogFile], compactions: &[LogFile]) -> Vec<LogFile> {
    let (Some(first), Some(last)) = (commits.first(), commits.last()) else {
        return Vec::new();
    };
    let lo = first.version;
    let Some(mut pos) = last.version.checked_sub(1) else {
        return commits.to_vec();
    };
    // Index of the commit at version v.
    let at = |v: u64| usize::try_from(v - lo).unwrap_or(usize::MAX);
    // Newest first while choosing.
    let mut out = vec![last.clone()];
    while pos >= lo {
        let best = compactions
            .iter()
            .filter_map(|c| end_of(c).map(|end| (c, end)))
            .filter(|(c, end)| c.size > 0 && c.version >= lo && c.version < *end && *end <= pos)
            .max_by_key(|(c, end)| (end - c.version, *end));
        let Some((c, end)) = best else {
            break;
        };
        out.extend(commits[at(end + 1)..=at(pos)].iter().rev().cloned());
        out.push(c.clone());
        match c.version.checked_sub(1) {
            Some(p) => pos = p,
            None => return finish(out),
        }
    }
    if pos >= lo {
        out.extend(commits[..=at(pos)].iter().rev().cloned());
    }
    finish(out)
}

fn finish(mut newest_first: Vec<LogFile>) -> Vec<LogFile> {
    newest_first.reverse();
    newest_first
}

#[cfg(test)]
mod tests {
    use object_store::path::Path;

    use super::*;

    fn file(version: u64, kind: LogFileKind) -> LogFile {
        LogFile {
            location: Path::from(format!("_delta_log/{version}-{kind:?}")),
            version,
            kind,
            size: 10,
            last_modified_ms: 0,
            store_version: None,
        }
    }

    fn commits(lo: u64, hi: u64) -> Vec<LogFile> {
        (lo..=hi).map(|v| file(v, LogFileKind::Commit)).collect()
    }

    fn comp(x: u64, y: u64) -> LogFile {
        file(x, LogFileKind::Compaction { end: y })
    }

    /// (first version, last version) of each planned file.
    fn ranges(p: &[LogFile]) -> Vec<(u64, u64)> {
        p.iter()
            .map(|f| (f.version, end_of(f).unwrap_or(f.version)))
            .collect()
    }

    #[test]
    fn no_compactions_keeps_commits() {
        let c = commits(0, 3);
        assert_eq!(ranges(&plan(&c, &[])), ranges(&c));
        assert!(plan(&[], &[comp(0, 2)]).is_empty());
    }

    #[test]
    fn widest_wins_and_target_commit_is_kept() {
        let c = commits(0, 25);
        let p = plan(&c, &[comp(0, 5), comp(6, 10), comp(6, 15)]);
        let mut want = vec![(0, 5), (6, 15)];
        want.extend((16..=25).map(|v| (v, v)));
        assert_eq!(ranges(&p), want);
        // A compaction ending at the target is not used.
        let p = plan(&commits(0, 15), &[comp(6, 15)]);
        assert_eq!(ranges(&p), ranges(&commits(0, 15)));
        // Ending one below the target is.
        let p = plan(&commits(0, 16), &[comp(6, 15)]);
        let mut want: Vec<_> = (0..=5).map(|v| (v, v)).collect();
        want.extend([(6, 15), (16, 16)]);
        assert_eq!(ranges(&p), want);
    }

    #[test]
    fn never_below_the_first_commit_nor_overlapping() {
        // Commits start after a checkpoint at 4: [3, 6] reaches into it.
        let p = plan(&commits(5, 9), &[comp(3, 6)]);
        assert_eq!(ranges(&p), ranges(&commits(5, 9)));
        // [5, 7] and [6, 8] tie on width: the newer is taken, and then
        // neither [5, 7] (overlap) nor [2, 6] (checkpoint) fits.
        let p = plan(&commits(5, 9), &[comp(5, 7), comp(6, 8), comp(2, 6)]);
        assert_eq!(ranges(&p), vec![(5, 5), (6, 8), (9, 9)]);
        // Empty files are skipped.
        let mut empty = comp(5, 8);
        empty.size = 0;
        assert_eq!(
            ranges(&plan(&commits(5, 9), &[empty])),
            ranges(&commits(5, 9))
        );
    }
}
