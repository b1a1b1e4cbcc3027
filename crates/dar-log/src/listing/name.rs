//! Strict file-name grammar of `_delta_log/` (protocol digest §1.2).
//!
//! ```text
//! pad20(v).json                              commit
//! pad20(v).checkpoint.parquet                classic checkpoint (V1 or V2 spec)
//! pad20(v).checkpoint.pad10(o).pad10(p).parquet   part o of p (1 <= o <= p, p > 1)
//! pad20(v).checkpoint.<uuid36>.json|parquet  UUID-named (V2) checkpoint
//! pad20(x).pad20(y).compacted.json           log compaction, x < y
//! pad20(v).crc                               version checksum
//! ```
//!
//! Anything else (Hadoop `.crc` files, `*.tmp`, sub-directories) is not a log
//! file and is ignored.

/// What a `_delta_log/` file name denotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFileKind {
    /// `pad20(v).json`.
    Commit,
    /// `pad20(v).checkpoint.parquet`.
    ClassicCheckpoint,
    /// `pad20(v).checkpoint.pad10(part).pad10(parts).parquet`.
    MultiPartCheckpoint {
        /// 1-based part number.
        part: u32,
        /// Number of parts.
        parts: u32,
    },
    /// `pad20(v).checkpoint.<uuid>.(json|parquet)`.
    UuidCheckpoint {
        /// True for the JSON form.
        json: bool,
    },
    /// `pad20(x).pad20(y).compacted.json` (version is `x`).
    Compaction {
        /// Last version covered.
        end: u64,
    },
    /// `pad20(v).crc`.
    Checksum,
}

impl LogFileKind {
    /// Whether this names a checkpoint file (classic, a part, or UUID-named).
    pub fn is_checkpoint(&self) -> bool {
        matches!(
            self,
            Self::ClassicCheckpoint
                | Self::MultiPartCheckpoint { .. }
                | Self::UuidCheckpoint { .. }
        )
    }
}

/// A classified `_delta_log/` file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedName {
    /// The version (for compactions: the first covered version).
    pub version: u64,
    /// The kind of file.
    pub kind: LogFileKind,
}

fn digits(s: &str, n: usize) -> Option<u64> {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Classify a bare file name (no directory). `None` when it is not a log file.
pub fn parse_log_file_name(name: &str) -> Option<ParsedName> {
    let version = digits(name.get(..20)?, 20)?;
    let rest = name.get(20..)?;
    let kind = match rest {
        ".json" => LogFileKind::Commit,
        ".crc" => LogFileKind::Checksum,
        ".checkpoint.parquet" => LogFileKind::ClassicCheckpoint,
        _ => {
            if let Some(cp) = rest.strip_prefix(".checkpoint.") {
                parse_checkpoint_suffix(cp)?
            } else {
                let tail = rest.strip_prefix('.')?.strip_suffix(".compacted.json")?;
                let end = digits(tail, 20)?;
                if end <= version {
                    return None;
                }
                LogFileKind::Compaction { end }
            }
        }
    };
    Some(ParsedName { version, kind })
}

fn parse_checkpoint_suffix(cp: &str) -> Option<LogFileKind> {
    if let Some(uuid) = cp.strip_suffix(".json") {
        return is_uuid(uuid).then_some(LogFileKind::UuidCheckpoint { json: true });
    }
    let stem = cp.strip_suffix(".parquet")?;
    if is_uuid(stem) {
        return Some(LogFileKind::UuidCheckpoint { json: false });
    }
    let (part, parts) = stem.split_once('.')?;
    let part = u32::try_from(digits(part, 10)?).ok()?;
    let parts = u32::try_from(digits(parts, 10)?).ok()?;
    (parts > 1 && part >= 1 && part <= parts)
        .then_some(LogFileKind::MultiPartCheckpoint { part, parts })
}

/// `pad20(v)`.
pub fn pad20(v: u64) -> String {
    format!("{v:020}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        let p = |s: &str| parse_log_file_name(s).map(|n| (n.version, n.kind));
        assert_eq!(
            p("00000000000000000007.json"),
            Some((7, LogFileKind::Commit))
        );
        assert_eq!(
            p("00000000000000000007.crc"),
            Some((7, LogFileKind::Checksum))
        );
        assert_eq!(
            p("00000000000000000010.checkpoint.parquet"),
            Some((10, LogFileKind::ClassicCheckpoint))
        );
        assert_eq!(
            p("00000000000000000010.checkpoint.0000000002.0000000003.parquet"),
            Some((10, LogFileKind::MultiPartCheckpoint { part: 2, parts: 3 }))
        );
        assert_eq!(
            p("00000000000000000002.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"),
            Some((2, LogFileKind::UuidCheckpoint { json: true }))
        );
        assert_eq!(
            p("00000000000000000004.00000000000000000006.compacted.json"),
            Some((4, LogFileKind::Compaction { end: 6 }))
        );
        // Not log files.
        for bad in [
            "0000000000000000007.json",
            "000000000000000000007.json",
            ".00000000000000000001.json.crc",
            "00000000000000000001.json.tmp",
            "0000000000000000000a.json",
            "00000000000000000010.checkpoint.0000000004.0000000003.parquet",
            "00000000000000000010.checkpoint.0000000001.0000000001.parquet",
            "00000000000000000010.checkpoint.000000001.0000000003.parquet",
            "00000000000000000006.00000000000000000004.compacted.json",
            "00000000000000000002.checkpoint.not-a-uuid.json",
            "_last_checkpoint",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }
}
