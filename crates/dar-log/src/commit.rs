//! Parsing newline-delimited JSON actions (commits and JSON checkpoints).
//!
//! Each line is decoded with serde into a lean struct that borrows from the
//! file's bytes; the caller receives one [`Action`] at a time and decides
//! what to keep, so nothing per file is allocated here beyond what the
//! caller copies into Arrow builders. Unknown actions and unknown fields are
//! ignored (protocol digest §2); a line that is not JSON, or a known action
//! with wrongly typed fields, is an error naming the file and the line.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::actions::{CommitInfo, DomainMetadata, Metadata, Protocol, Txn};
use crate::error::{LogError, Result};

/// `partitionValues` of an add, kept as its raw JSON text and decoded only
/// for adds that survive reconciliation, straight into the caller's
/// builders (no per-file map or vector).
#[derive(Debug, Default, Clone, Copy)]
pub struct PartitionEntries<'a>(pub Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for PartitionEntries<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Option::<&'a RawValue>::deserialize(d).map(PartitionEntries)
    }
}

impl<'a> PartitionEntries<'a> {
    /// Call `f(physical name, value)` for each entry, in file order. A JSON
    /// `null` map has no entries; a value that is not a string or null is an error.
    pub fn for_each(
        &self,
        f: impl FnMut(&str, Option<&str>),
    ) -> std::result::Result<(), serde_json::Error> {
        struct V<F>(F);
        impl<'de, F: FnMut(&str, Option<&str>)> Visitor<'de> for V<F> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of partition values")
            }
            fn visit_unit<E>(self) -> std::result::Result<(), E> {
                Ok(())
            }
            fn visit_map<M: MapAccess<'de>>(
                mut self,
                mut m: M,
            ) -> std::result::Result<(), M::Error> {
                #[derive(Deserialize)]
                struct S<'a>(#[serde(borrow)] Cow<'a, str>);
                #[derive(Deserialize)]
                struct O<'a>(#[serde(borrow)] Option<Cow<'a, str>>);
                while let Some((k, v)) = m.next_entry::<S<'de>, O<'de>>()? {
                    (self.0)(&k.0, v.0.as_deref());
                }
                Ok(())
            }
        }
        let Some(raw) = self.0 else { return Ok(()) };
        let mut de = serde_json::Deserializer::from_str(raw.get());
        serde::Deserializer::deserialize_any(&mut de, V(f))
    }
}

/// `deletionVector` of an add or remove.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DvLine<'a> {
    /// `storageType`.
    #[serde(borrow)]
    pub storage_type: Cow<'a, str>,
    /// `pathOrInlineDv`.
    #[serde(borrow)]
    pub path_or_inline_dv: Cow<'a, str>,
    /// `offset`.
    #[serde(default)]
    pub offset: Option<i32>,
    /// `sizeInBytes`.
    pub size_in_bytes: i32,
    /// `cardinality`.
    pub cardinality: i64,
}

impl DvLine<'_> {
    /// The DV unique id (§2.10).
    pub fn unique_id(&self) -> String {
        dar_dv::unique_id(
            &self.storage_type,
            &self.path_or_inline_dv,
            self.offset.map(i64::from),
        )
    }

    /// Every field, as a file index row takes them (`AddRow::dv`).
    pub fn fields(&self) -> (&str, &str, Option<i32>, i32, i64) {
        (
            &self.storage_type,
            &self.path_or_inline_dv,
            self.offset,
            self.size_in_bytes,
            self.cardinality,
        )
    }

    /// `(storageType, pathOrInlineDv, offset)`, the parts of its key.
    pub fn key_parts(&self) -> (&str, &str, Option<i32>) {
        (&self.storage_type, &self.path_or_inline_dv, self.offset)
    }
}

/// An `add` line.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddLine<'a> {
    /// `path`.
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    /// `partitionValues`.
    #[serde(default, borrow)]
    pub partition_values: PartitionEntries<'a>,
    /// `size`.
    pub size: i64,
    /// `modificationTime`.
    #[serde(default)]
    pub modification_time: i64,
    /// `stats` (JSON text).
    #[serde(default, borrow)]
    pub stats: Option<Cow<'a, str>>,
    /// `deletionVector`.
    #[serde(default, borrow)]
    pub deletion_vector: Option<DvLine<'a>>,
    /// `dataChange` (required by the protocol; read as true when absent).
    #[serde(default = "yes")]
    pub data_change: bool,
}

fn yes() -> bool {
    true
}

/// A `remove` line: the key matters to snapshot readers; a change data
/// feed also reads its optional file fields (`extendedFileMetadata`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveLine<'a> {
    /// `path`.
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    /// `deletionVector`.
    #[serde(default, borrow)]
    pub deletion_vector: Option<DvLine<'a>>,
    /// `dataChange` (required by the protocol; read as true when absent).
    #[serde(default = "yes")]
    pub data_change: bool,
    /// `partitionValues` (optional on removes).
    #[serde(default, borrow)]
    pub partition_values: Option<PartitionEntries<'a>>,
    /// `size` (optional on removes).
    #[serde(default)]
    pub size: Option<i64>,
    /// `stats` (optional on removes).
    #[serde(default, borrow)]
    pub stats: Option<Cow<'a, str>>,
}

/// A `cdc` line (protocol §2.4): a change data file of one commit.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CdcLine<'a> {
    /// `path`.
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    /// `partitionValues`.
    #[serde(default, borrow)]
    pub partition_values: PartitionEntries<'a>,
    /// `size`.
    pub size: i64,
}

/// A `sidecar` line (V2 JSON checkpoints only).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarLine {
    /// URI-encoded path, relative to `_delta_log/_sidecars/`.
    pub path: String,
    /// Size in bytes.
    #[serde(default)]
    pub size_in_bytes: Option<i64>,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(default, borrow)]
    add: Option<AddLine<'a>>,
    #[serde(default, borrow)]
    remove: Option<RemoveLine<'a>>,
    #[serde(default, borrow)]
    cdc: Option<CdcLine<'a>>,
    #[serde(default)]
    protocol: Option<Protocol>,
    #[serde(default, rename = "metaData")]
    meta_data: Option<Metadata>,
    #[serde(default)]
    txn: Option<Txn>,
    #[serde(default, rename = "domainMetadata")]
    domain_metadata: Option<DomainMetadata>,
    #[serde(default, rename = "commitInfo", borrow)]
    commit_info: Option<&'a RawValue>,
    #[serde(default)]
    sidecar: Option<SidecarLine>,
}

/// One recognized action.
#[derive(Debug)]
pub enum Action<'a> {
    /// `add`.
    Add(AddLine<'a>),
    /// `remove`.
    Remove(RemoveLine<'a>),
    /// `cdc` (read by change data feeds only).
    Cdc(CdcLine<'a>),
    /// `protocol`.
    Protocol(Protocol),
    /// `metaData`.
    Metadata(Box<Metadata>),
    /// `txn`.
    Txn(Txn),
    /// `domainMetadata`.
    DomainMetadata(DomainMetadata),
    /// `commitInfo`, undecoded (see [`commit_info`]).
    CommitInfo(&'a RawValue),
    /// `sidecar` (meaningful in V2 checkpoints only).
    Sidecar(SidecarLine),
}

/// Decode a raw `commitInfo` object.
pub fn commit_info(path: &str, line: usize, raw: &RawValue) -> Result<CommitInfo> {
    let value: serde_json::Value =
        serde_json::from_str(raw.get()).map_err(|source| LogError::MalformedJson {
            path: path.to_string(),
            line,
            source,
        })?;
    Ok(CommitInfo {
        timestamp: value.get("timestamp").and_then(serde_json::Value::as_i64),
        in_commit_timestamp: value
            .get("inCommitTimestamp")
            .and_then(serde_json::Value::as_i64),
        raw: value,
    })
}

/// A line read only for its `commitInfo`; every other key is skipped unparsed.
#[derive(Deserialize)]
struct CommitInfoLine<'a> {
    #[serde(default, rename = "commitInfo", borrow)]
    commit_info: Option<&'a RawValue>,
}

/// The first `commitInfo` of a commit file's `bytes`, read leniently: only
/// that action is decoded, and lines that are not valid JSON (or a
/// `commitInfo` that is not an object) are skipped, so a commit whose other
/// actions are malformed still yields its timestamp. `None` when no line
/// holds a readable `commitInfo`. For reading a commit only for its
/// `commitInfo` (its in-commit timestamp), never for replay.
pub(crate) fn first_commit_info(path: &str, bytes: &[u8]) -> Option<CommitInfo> {
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
        .filter_map(|(idx, l)| {
            let raw = serde_json::from_slice::<CommitInfoLine<'_>>(l)
                .ok()?
                .commit_info?;
            commit_info(path, idx + 1, raw)
                .ok()
                .filter(|c| c.raw.is_object())
        })
        .next()
}

/// Parse newline-delimited actions, calling `f(line_number, action)` for each
/// recognized action. `path` only names the file in errors.
pub fn parse_actions<'a>(
    path: &str,
    bytes: &'a [u8],
    mut f: impl FnMut(usize, Action<'a>) -> Result<()>,
) -> Result<()> {
    for (idx, raw_line) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = idx + 1;
        if raw_line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed: Line<'a> =
            serde_json::from_slice(raw_line).map_err(|source| LogError::MalformedJson {
                path: path.to_string(),
                line,
                source,
            })?;
        // A line holds one action; take whichever is present.
        let action = if let Some(a) = parsed.add {
            Action::Add(a)
        } else if let Some(r) = parsed.remove {
            Action::Remove(r)
        } else if let Some(c) = parsed.cdc {
            Action::Cdc(c)
        } else if let Some(p) = parsed.protocol {
            Action::Protocol(p)
        } else if let Some(m) = parsed.meta_data {
            Action::Metadata(Box::new(m))
        } else if let Some(t) = parsed.txn {
            Action::Txn(t)
        } else if let Some(d) = parsed.domain_metadata {
            Action::DomainMetadata(d)
        } else if let Some(c) = parsed.commit_info {
            Action::CommitInfo(c)
        } else if let Some(s) = parsed.sidecar {
            Action::Sidecar(s)
        } else {
            continue;
        };
        f(line, action)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_ignores_unknown() {
        let text = br#"{"commitInfo":{"timestamp":5,"inCommitTimestamp":7,"operation":"WRITE"}}
{"add":{"path":"a%20b.parquet","partitionValues":{"p":"x","q":null},"size":10,"modificationTime":3,"dataChange":true,"stats":"{\"numRecords\":2}","newField":1}}

{"remove":{"path":"old.parquet","deletionVector":{"storageType":"u","pathOrInlineDv":"ab","offset":1,"sizeInBytes":3,"cardinality":1},"dataChange":true}}
{"someFutureAction":{"x":1}}
{"cdc":{"path":"_change_data/x.parquet","partitionValues":{},"size":1,"dataChange":false}}
"#;
        let mut seen = Vec::new();
        parse_actions("f.json", text, |line, a| {
            seen.push(match a {
                Action::Add(a) => {
                    let mut pv = Vec::new();
                    a.partition_values
                        .for_each(|k, v| pv.push(format!("{k}={v:?}")))
                        .unwrap();
                    assert_eq!(pv, ["p=Some(\"x\")", "q=None"]);
                    assert_eq!(a.stats.as_deref(), Some(r#"{"numRecords":2}"#));
                    format!("{line}:add:{}", a.path)
                }
                Action::Remove(r) => format!(
                    "{line}:remove:{}",
                    r.deletion_vector.map(|d| d.unique_id()).unwrap_or_default()
                ),
                Action::Cdc(c) => format!("{line}:cdc:{}:{}", c.path, c.size),
                Action::CommitInfo(c) => {
                    let ci = commit_info("f.json", line, c)?;
                    format!("{line}:ci:{:?}:{:?}", ci.timestamp, ci.in_commit_timestamp)
                }
                other => format!("{other:?}"),
            });
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                "1:ci:Some(5):Some(7)",
                "2:add:a%20b.parquet",
                "4:remove:uab@1",
                "6:cdc:_change_data/x.parquet:1"
            ]
        );
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let text = b"{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n{\"add\":{\"path\":\"x\"\n";
        let err =
            parse_actions("_delta_log/00000000000000000003.json", text, |_, _| Ok(())).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, LogError::MalformedJson { line: 2, .. }),
            "{msg}"
        );
        assert!(
            msg.contains("00000000000000000003.json") && msg.contains("line 2"),
            "{msg}"
        );
        // A known action with a wrongly typed field is malformed too.
        let text = br#"{"add":{"path":"x","size":"big","partitionValues":{}}}"#;
        assert!(matches!(
            parse_actions("c.json", text, |_, _| Ok(())),
            Err(LogError::MalformedJson { line: 1, .. })
        ));
    }
}
