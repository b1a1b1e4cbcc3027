//! Parquet files whose footer or page index claims a length its bytes
//! cannot hold: a list of 2^31-1 row groups in a 1 KB footer, a schema
//! group of 2^31-1 children, an offset index of 2^31-1 page locations. A
//! reader that sizes an allocation by such a claim aborts the process.
//!
//! [`CLAIMS`] names every list, binary and count of a footer and a page
//! index that a reader decodes; [`with_claim`] plants a claim in any
//! Parquet file (a data file, a checkpoint part, a sidecar), rewriting
//! the footer (and, for a page index, appending the edited index after
//! the column data and pointing the column chunk at it).
//!
//! ```
//! use dar_testkit::claims::{CLAIMS, base_file, with_claim};
//!
//! let file = base_file().unwrap();
//! let row_groups = CLAIMS.iter().find(|c| c.name == "row groups").unwrap();
//! let hostile = with_claim(&file, row_groups, (1 << 31) - 1).unwrap();
//! assert!(hostile.ends_with(b"PAR1"));
//! ```

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::SortingColumn;
use parquet::file::properties::WriterProperties;
use serde_json::json;

use crate::error::{Result, TestkitError};
use crate::hand::HandTable;
use crate::thrift::{Step, Thrift, decode_struct};

/// Where in a Parquet file a claim is planted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The footer (`FileMetaData`).
    Footer,
    /// The column index of one column chunk.
    ColumnIndex {
        /// The row group.
        row_group: usize,
        /// The column.
        column: usize,
    },
    /// The offset index of one column chunk.
    OffsetIndex {
        /// The row group.
        row_group: usize,
        /// The column.
        column: usize,
    },
}

impl Region {
    /// Whether a reader meets the claim only when it loads the page index.
    pub fn is_page_index(self) -> bool {
        self != Region::Footer
    }
}

/// One claimed length: a list, set, map or binary whose header claims
/// more than it holds, or a count (a group's `num_children`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// What it is, for test messages.
    pub name: &'static str,
    /// Where it is.
    pub region: Region,
    /// The Thrift path to it within its region.
    pub path: &'static [Step],
}

use Step::{Field as F, Item as I};

const FOOTER: Region = Region::Footer;
/// The page indexes of the string column `s` of [`base_file`].
const COLUMN_INDEX: Region = Region::ColumnIndex {
    row_group: 0,
    column: 1,
};
const OFFSET_INDEX: Region = Region::OffsetIndex {
    row_group: 0,
    column: 1,
};

/// Every claim of a footer and a page index a reader decodes, with paths
/// into [`base_file`] (the footer paths also fit any file with a schema
/// of two leaves or more, a checkpoint's included). The first three are
/// those parquet-rs 59 sized a vector by (200 GB, 16 GB, 48 GB at
/// 2^31-1); the others it refused, or read more bytes for, itself.
pub const CLAIMS: &[Claim] = &[
    Claim {
        name: "row groups",
        region: FOOTER,
        path: &[F(4)],
    },
    Claim {
        name: "schema children",
        region: FOOTER,
        path: &[F(2), I(0), F(5)],
    },
    Claim {
        name: "page locations",
        region: OFFSET_INDEX,
        path: &[F(1)],
    },
    Claim {
        name: "schema elements",
        region: FOOTER,
        path: &[F(2)],
    },
    Claim {
        name: "schema name",
        region: FOOTER,
        path: &[F(2), I(1), F(4)],
    },
    Claim {
        name: "key-value metadata",
        region: FOOTER,
        path: &[F(5)],
    },
    Claim {
        name: "created_by",
        region: FOOTER,
        path: &[F(6)],
    },
    Claim {
        name: "column orders",
        region: FOOTER,
        path: &[F(7)],
    },
    Claim {
        name: "column chunks",
        region: FOOTER,
        path: &[F(4), I(0), F(1)],
    },
    Claim {
        name: "sorting columns",
        region: FOOTER,
        path: &[F(4), I(0), F(4)],
    },
    Claim {
        name: "encodings",
        region: FOOTER,
        path: &[F(4), I(0), F(1), I(1), F(3), F(2)],
    },
    Claim {
        name: "path in schema",
        region: FOOTER,
        path: &[F(4), I(0), F(1), I(1), F(3), F(3)],
    },
    Claim {
        name: "encoding stats",
        region: FOOTER,
        path: &[F(4), I(0), F(1), I(1), F(3), F(13)],
    },
    Claim {
        name: "statistics max",
        region: FOOTER,
        path: &[F(4), I(0), F(1), I(1), F(3), F(12), F(5)],
    },
    Claim {
        name: "page null flags",
        region: COLUMN_INDEX,
        path: &[F(1)],
    },
    Claim {
        name: "page minimums",
        region: COLUMN_INDEX,
        path: &[F(2)],
    },
    Claim {
        name: "page maximums",
        region: COLUMN_INDEX,
        path: &[F(3)],
    },
    Claim {
        name: "page null counts",
        region: COLUMN_INDEX,
        path: &[F(5)],
    },
    Claim {
        name: "page byte sizes",
        region: OFFSET_INDEX,
        path: &[F(2)],
    },
];

/// The value of the claim the hostile files of the issue used: the
/// largest Thrift list length (2^31-1).
pub const CLAIM_MAX: u64 = i32::MAX as u64;

/// The batch of [`base_file`]: `id: Int64` 1..=3 and `s: Utf8` (`a`,
/// null, `c`).
pub fn base_batch() -> Result<RecordBatch> {
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2, 3]))),
        (
            "s",
            Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
        ),
    ];
    RecordBatch::try_from_iter(columns).map_err(TestkitError::arrow("base batch"))
}

/// A small Parquet file holding every list [`CLAIMS`] names: statistics,
/// encoding stats, sorting columns, key-value metadata (the Arrow
/// schema), column orders and the page index.
pub fn base_file() -> Result<Vec<u8>> {
    let batch = base_batch()?;
    let props = WriterProperties::builder()
        .set_sorting_columns(Some(vec![SortingColumn {
            column_idx: 0,
            descending: false,
            nulls_first: false,
        }]))
        .build();
    let err = |source| TestkitError::Parquet {
        path: "base_file".into(),
        source,
    };
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).map_err(err)?;
    w.write(&batch).map_err(err)?;
    w.close().map_err(err)?;
    Ok(bytes)
}

/// The footer of `file`: where it starts and its decoded value.
pub fn footer(file: &[u8]) -> Result<(usize, Thrift)> {
    let bad = |reason: &str| TestkitError::Thrift {
        reason: reason.into(),
    };
    let end = file
        .len()
        .checked_sub(8)
        .filter(|e| file[*e + 4..] == *b"PAR1")
        .ok_or_else(|| bad("no PAR1 trailer"))?;
    let len = u32::from_le_bytes([file[end], file[end + 1], file[end + 2], file[end + 3]]);
    let start = end
        .checked_sub(len as usize)
        .ok_or_else(|| bad("footer longer than the file"))?;
    let (value, _) = decode_struct(&file[start..end])?;
    Ok((start, value))
}

/// `value` claiming `n`: a list, set, map or binary keeps its content
/// under a header claiming `n`; an integer becomes `n`.
fn plant(value: &mut Thrift, n: u64) -> Result<()> {
    match value {
        Thrift::I16(v) | Thrift::I32(v) | Thrift::I64(v) => *v = n as i64,
        Thrift::List { .. } | Thrift::Map { .. } | Thrift::Binary(_) => {
            let inner = std::mem::replace(value, Thrift::Bool(false));
            *value = Thrift::Claimed {
                claim: n,
                value: Box::new(inner),
            };
        }
        other => {
            return Err(TestkitError::Thrift {
                reason: format!("no length to claim in {other:?}"),
            });
        }
    }
    Ok(())
}

/// `file` (any Parquet file) with `claim` claiming `n`.
pub fn with_claim(file: &[u8], claim: &Claim, n: u64) -> Result<Vec<u8>> {
    plant_at(file, claim.region, claim.path, n)
}

/// The column chunk field ids of a page index's offset and length.
fn index_fields(region: Region) -> Option<(usize, usize, i16, i16)> {
    match region {
        Region::Footer => None,
        Region::ColumnIndex { row_group, column } => Some((row_group, column, 6, 7)),
        Region::OffsetIndex { row_group, column } => Some((row_group, column, 4, 5)),
    }
}

/// The page index of `region` in `file`: the column chunk's path in the
/// footer, and the index's byte range.
fn page_index(
    meta: &mut Thrift,
    (row_group, column, off, len): (usize, usize, i16, i16),
) -> Result<(Vec<Step>, std::ops::Range<usize>)> {
    let path = vec![F(4), I(row_group), F(1), I(column)];
    let chunk = meta.at_mut(&path)?;
    let mut at = |id| -> Result<usize> {
        let v = chunk.at_mut(&[F(id)])?.as_int();
        v.and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| TestkitError::Thrift {
                reason: format!("column chunk field {id} is no offset"),
            })
    };
    let (offset, length) = (at(off)?, at(len)?);
    Ok((path, offset..offset.saturating_add(length)))
}

/// The decoded value of `region` in `file` (the footer, or a page index).
pub fn region_value(file: &[u8], region: Region) -> Result<Thrift> {
    let (_, mut meta) = footer(file)?;
    let Some(fields) = index_fields(region) else {
        return Ok(meta);
    };
    let (_, range) = page_index(&mut meta, fields)?;
    let bytes = file.get(range).ok_or_else(|| TestkitError::Thrift {
        reason: "page index outside the file".into(),
    })?;
    Ok(decode_struct(bytes)?.0)
}

/// Every place of `region` in `file` a claim can be planted at (see
/// [`Thrift::sites`]).
pub fn sites(file: &[u8], region: Region) -> Result<Vec<Vec<Step>>> {
    Ok(region_value(file, region)?.sites())
}

/// `file` with the value at `path` of `region` claiming `n`.
pub fn plant_at(file: &[u8], region: Region, path: &[Step], n: u64) -> Result<Vec<u8>> {
    let (start, mut meta) = footer(file)?;
    let mut out = file[..start].to_vec();
    let Some(fields) = index_fields(region) else {
        plant(meta.at_mut(path)?, n)?;
        return Ok(finish(out, &meta));
    };
    let (chunk, range) = page_index(&mut meta, fields)?;
    let bytes = file.get(range).ok_or_else(|| TestkitError::Thrift {
        reason: "page index outside the file".into(),
    })?;
    let (mut index, _) = decode_struct(bytes)?;
    plant(index.at_mut(path)?, n)?;
    let index = index.encode();
    let chunk = meta.at_mut(&chunk)?;
    *chunk.at_mut(&[F(fields.2)])? = Thrift::I64(out.len() as i64);
    *chunk.at_mut(&[F(fields.3)])? = Thrift::I32(index.len() as i64);
    out.extend(index);
    Ok(finish(out, &meta))
}

/// `file` whose footer's `row_groups` (field 4) says it is a boolean,
/// followed by bytes parquet reads as a list header claiming 260,245,004
/// row groups (it reads field 4 as a list whatever its header says): a
/// walk by the headers' types sees a boolean, then five nested structs of
/// an unknown field.
pub fn disguised_row_groups(file: &[u8]) -> Result<Vec<u8>> {
    let (start, mut meta) = footer(file)?;
    *meta.at_mut(&[F(4)])? = Thrift::Raw {
        kind: 1,
        bytes: vec![0xFC, 0x8C, 0x8C, 0x8C, 0x7C, 0, 0, 0, 0, 0],
    };
    Ok(finish(file[..start].to_vec(), &meta))
}

fn finish(mut out: Vec<u8>, meta: &Thrift) -> Vec<u8> {
    let footer = meta.encode();
    out.extend(&footer);
    out.extend((footer.len() as u32).to_le_bytes());
    out.extend(b"PAR1");
    out
}

/// A one-file table at `dir` (columns `id: long`, `s: string`) whose data
/// file `part-0.parquet` is [`base_file`] with `claim` claiming `n`.
pub fn table_with_claim(dir: &Path, claim: &Claim, n: u64) -> Result<HandTable> {
    table_with_file(dir, &with_claim(&base_file()?, claim, n)?)
}

/// A one-file table at `dir` (columns `id: long`, `s: string`) whose data
/// file `part-0.parquet` holds `bytes` (a hostile variant of
/// [`base_file`]).
pub fn table_with_file(dir: &Path, bytes: &[u8]) -> Result<HandTable> {
    let mut t = HandTable::new(dir)?;
    let path = dir.join("part-0.parquet");
    std::fs::write(&path, bytes).map_err(|e| TestkitError::Io {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    t.commit(&[
        HandTable::protocol(),
        HandTable::metadata(
            json!([
                HandTable::field("id", json!("long"), json!({})),
                HandTable::field("s", json!("string"), json!({})),
            ]),
            &[],
            json!({}),
        ),
        HandTable::add("part-0.parquet", bytes.len() as u64, json!({}), None),
    ])?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every claim of the catalogue is in the base file, and planting it
    /// changes the file.
    #[test]
    fn every_claim_is_planted() {
        let file = base_file().unwrap();
        for claim in CLAIMS {
            let hostile = with_claim(&file, claim, CLAIM_MAX)
                .unwrap_or_else(|e| panic!("{}: {e}", claim.name));
            assert_ne!(hostile, file, "{}", claim.name);
            // A claimed length cannot be met: the footer no longer decodes
            // whole (a count, `num_children`, still does).
            let (start, mut meta) = footer(&file).unwrap();
            assert_eq!(hostile[..start], file[..start], "{}", claim.name);
            if claim.region == Region::Footer && meta.at_mut(claim.path).unwrap().as_int().is_none()
            {
                assert!(footer(&hostile).is_err(), "{}", claim.name);
            }
        }
    }

    /// Claiming what is there gives the same footer back.
    #[test]
    fn an_honest_claim_is_the_same_file() {
        let file = base_file().unwrap();
        let (start, meta) = footer(&file).unwrap();
        assert_eq!(finish(file[..start].to_vec(), &meta), file);
    }
}
