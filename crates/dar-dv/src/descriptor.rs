//! The DV descriptor (`add.deletionVector` / `remove.deletionVector`), its
//! unique id, and where its bytes live.

use std::fmt;

use url::Url;

use crate::error::{DvError, DvSource, Result};
use crate::z85;

/// Where a DV's bytes are stored (`storageType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StorageType {
    /// `u`: a file next to the table, named by a UUID (with an optional
    /// random directory prefix).
    UuidRelative,
    /// `i`: the serialized bitmap itself, Z85-encoded in the log.
    Inline,
    /// `p`: a file at an absolute, URI-encoded path.
    AbsolutePath,
}

impl StorageType {
    /// The one-character code used in the Delta log.
    pub fn code(self) -> char {
        match self {
            Self::UuidRelative => 'u',
            Self::Inline => 'i',
            Self::AbsolutePath => 'p',
        }
    }

    /// The storage type of a log code (`u`, `i`, `p`).
    pub fn from_code(code: &str) -> Option<Self> {
        match code {
            "u" => Some(Self::UuidRelative),
            "i" => Some(Self::Inline),
            "p" => Some(Self::AbsolutePath),
            _ => None,
        }
    }
}

/// The byte position of the first record in a version-1 DV file, used when
/// a descriptor has no `offset` (kernel-rs' reading; see the protocol digest
/// §13.1: offset 0 is the version byte and cannot start a record).
pub const DEFAULT_OFFSET: u64 = 1;

/// Length of the Z85-encoded UUID at the end of a `u` descriptor's path.
const ENCODED_UUID_LEN: usize = 20;

/// A deletion-vector descriptor, validated.
///
/// Build it from the log's fields with [`DvDescriptor::try_new`]; optionally
/// bound the row indexes with [`DvDescriptor::with_row_count`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DvDescriptor {
    storage_type: StorageType,
    path_or_inline_dv: String,
    offset: Option<u64>,
    size_in_bytes: u32,
    cardinality: u64,
    row_count: Option<u64>,
}

impl DvDescriptor {
    /// Builds a descriptor from the log's fields: `storageType`,
    /// `pathOrInlineDv`, `offset` (optional), `sizeInBytes`, `cardinality`.
    ///
    /// Fails on an unknown storage type and on negative or oversized numbers.
    /// The path and payload are checked when the DV is resolved or decoded.
    pub fn try_new(
        storage_type: &str,
        path_or_inline_dv: impl Into<String>,
        offset: Option<i64>,
        size_in_bytes: i64,
        cardinality: i64,
    ) -> Result<Self> {
        let path_or_inline_dv = path_or_inline_dv.into();
        let name = || DvSource::Descriptor {
            unique_id: unique_id(storage_type, &path_or_inline_dv, offset),
        };
        let storage =
            StorageType::from_code(storage_type).ok_or_else(|| DvError::UnknownStorageType {
                dv: name(),
                storage_type: storage_type.to_owned(),
            })?;
        let invalid = |field, value| DvError::InvalidDescriptor {
            dv: name(),
            field,
            value,
        };
        let offset = offset
            .map(|o| u64::try_from(o).map_err(|_| invalid("offset", o)))
            .transpose()?;
        let size_in_bytes =
            u32::try_from(size_in_bytes).map_err(|_| invalid("sizeInBytes", size_in_bytes))?;
        let cardinality =
            u64::try_from(cardinality).map_err(|_| invalid("cardinality", cardinality))?;
        Ok(Self {
            storage_type: storage,
            path_or_inline_dv,
            offset,
            size_in_bytes,
            cardinality,
            row_count: None,
        })
    }

    /// Declares how many rows the DV's data file has (e.g. its `numRecords`):
    /// decoding then fails with [`DvError::RowIndexOutOfRange`] if any deleted
    /// row index is `>= row_count`. The descriptor's unique id is unchanged.
    pub fn with_row_count(mut self, row_count: u64) -> Self {
        self.row_count = Some(row_count);
        self
    }

    /// The storage type.
    pub fn storage_type(&self) -> StorageType {
        self.storage_type
    }

    /// `pathOrInlineDv` as written in the log.
    pub fn path_or_inline_dv(&self) -> &str {
        &self.path_or_inline_dv
    }

    /// `offset` as written in the log (absent for inline DVs).
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// Where this DV's record starts in its file: `offset`, or
    /// [`DEFAULT_OFFSET`] when absent.
    pub fn effective_offset(&self) -> u64 {
        self.offset.unwrap_or(DEFAULT_OFFSET)
    }

    /// `sizeInBytes`: the serialized bitmap's length, magic included.
    pub fn size_in_bytes(&self) -> u32 {
        self.size_in_bytes
    }

    /// `cardinality`: the number of deleted rows.
    pub fn cardinality(&self) -> u64 {
        self.cardinality
    }

    /// The row count given by [`DvDescriptor::with_row_count`], if any.
    pub fn row_count(&self) -> Option<u64> {
        self.row_count
    }

    /// True when the descriptor carries no bitmap at all: an inline DV with
    /// an empty payload and cardinality 0 (what [`DvDescriptor::inline`]
    /// writes for "nothing deleted"). No I/O is needed for it. Any other
    /// descriptor is loaded and validated whatever its cardinality: a
    /// `cardinality` of 0 whose bitmap deletes rows is an error, never a
    /// licence to skip the DV.
    pub fn is_empty(&self) -> bool {
        self.storage_type == StorageType::Inline
            && self.path_or_inline_dv.is_empty()
            && self.cardinality == 0
    }

    /// The DV's unique id: `storageType + pathOrInlineDv`, then `"@" + offset`
    /// when an offset is present. Log replay keys files by (path, this id).
    pub fn unique_id(&self) -> String {
        let mut code = [0u8; 4];
        unique_id(
            self.storage_type.code().encode_utf8(&mut code),
            &self.path_or_inline_dv,
            self.offset.and_then(|o| i64::try_from(o).ok()),
        )
    }

    /// The name errors use before the DV is resolved to a file.
    pub(crate) fn source(&self) -> DvSource {
        match self.storage_type {
            StorageType::Inline => DvSource::Inline {
                unique_id: self.unique_id(),
            },
            _ => DvSource::Descriptor {
                unique_id: self.unique_id(),
            },
        }
    }

    /// For a `u` DV: the UUID of its file, Z85-decoded from the last 20
    /// characters of `pathOrInlineDv`, and the directory prefix before them.
    /// `None` for other storage types.
    pub fn uuid_and_prefix(&self) -> Result<Option<(uuid::Uuid, &str)>> {
        if self.storage_type != StorageType::UuidRelative {
            return Ok(None);
        }
        let text = &self.path_or_inline_dv;
        let split = text
            .len()
            .checked_sub(ENCODED_UUID_LEN)
            .filter(|&at| text.is_char_boundary(at))
            .ok_or_else(|| DvError::InvalidPath {
                dv: self.source(),
                reason: format!(
                    "a `u` pathOrInlineDv ends with a {ENCODED_UUID_LEN}-character Z85 UUID, got {} bytes",
                    text.len()
                ),
            })?;
        let (prefix, encoded) = text.split_at(split);
        let bytes = z85::decode(encoded).map_err(|e| DvError::InvalidZ85 {
            dv: self.source(),
            position: split + e.position,
            reason: e.reason,
        })?;
        let uuid = uuid::Uuid::from_slice(&bytes).map_err(|e| DvError::InvalidPath {
            dv: self.source(),
            reason: e.to_string(),
        })?;
        Ok(Some((uuid, prefix)))
    }

    /// The DV file's location for `u` and `p` DVs, `None` for inline ones.
    ///
    /// * `u`: `<table_root>/<prefix>/deletion_vector_<uuid>.bin` (no prefix
    ///   directory when the prefix is empty).
    /// * `p`: the absolute URI in `pathOrInlineDv`.
    pub fn file_url(&self, table_root: &Url) -> Result<Option<Url>> {
        match self.storage_type {
            StorageType::Inline => Ok(None),
            StorageType::AbsolutePath => {
                Url::parse(&self.path_or_inline_dv)
                    .map(Some)
                    .map_err(|e| DvError::InvalidPath {
                        dv: self.source(),
                        reason: format!("`p` path is not an absolute URI: {e}"),
                    })
            }
            StorageType::UuidRelative => {
                let Some((uuid, prefix)) = self.uuid_and_prefix()? else {
                    return Ok(None);
                };
                let mut url = table_root.clone();
                let file_name = format!("deletion_vector_{uuid}.bin");
                {
                    // Path segments are percent-encoded as they are pushed,
                    // so an unusual prefix cannot turn into a query string.
                    let mut segments =
                        url.path_segments_mut().map_err(|()| DvError::InvalidPath {
                            dv: self.source(),
                            reason: format!("table root {table_root} cannot hold a path"),
                        })?;
                    segments.pop_if_empty();
                    if !prefix.is_empty() {
                        segments.push(prefix);
                    }
                    segments.push(&file_name);
                }
                Ok(Some(url))
            }
        }
    }

    /// Builds a `u` descriptor for a record written by
    /// [`crate::DvFileWriter`]: `prefix` is the random directory (may be
    /// empty), `uuid` names the file.
    pub fn uuid_file(prefix: &str, uuid: uuid::Uuid, record: &crate::DvRecord) -> Self {
        Self {
            storage_type: StorageType::UuidRelative,
            path_or_inline_dv: format!("{prefix}{}", z85::encode(uuid.as_bytes())),
            offset: Some(record.offset),
            size_in_bytes: record.size_in_bytes,
            cardinality: record.cardinality,
            row_count: None,
        }
    }

    /// Builds an inline (`i`) descriptor holding `rows`, Z85-encoded as
    /// Delta-Spark does (the empty set becomes `i` with an empty payload).
    pub fn inline(rows: &crate::DeletedRows) -> Result<Self> {
        if rows.is_empty() {
            return Ok(Self {
                storage_type: StorageType::Inline,
                path_or_inline_dv: String::new(),
                offset: None,
                size_in_bytes: 0,
                cardinality: 0,
                row_count: None,
            });
        }
        let bytes = rows.serialize()?;
        let size_in_bytes = u32::try_from(bytes.len()).map_err(|_| DvError::InvalidDescriptor {
            dv: DvSource::Descriptor {
                unique_id: String::from("i"),
            },
            field: "sizeInBytes",
            value: bytes.len() as i64,
        })?;
        Ok(Self {
            storage_type: StorageType::Inline,
            path_or_inline_dv: z85::encode(&bytes),
            offset: None,
            size_in_bytes,
            cardinality: rows.len(),
            row_count: None,
        })
    }
}

/// The DV unique id of the log's raw fields (protocol §2.10):
/// `storageType + pathOrInlineDv`, then `"@" + offset` when there is an
/// offset. The one definition: log replay keys files by it before any
/// descriptor is validated, and [`DvDescriptor::unique_id`] uses it too.
pub fn unique_id(storage_type: &str, path_or_inline_dv: &str, offset: Option<i64>) -> String {
    match offset {
        Some(offset) => format!("{storage_type}{path_or_inline_dv}@{offset}"),
        None => format!("{storage_type}{path_or_inline_dv}"),
    }
}

impl fmt::Display for DvDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.source().fmt(f)
    }
}

/// A descriptor as the log writes it (camelCase fields, numbers as JSON
/// numbers): the serialized form of [`DvDescriptor`] in scan tasks too.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogForm {
    storage_type: String,
    path_or_inline_dv: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    offset: Option<i64>,
    size_in_bytes: i64,
    cardinality: i64,
}

/// Serialized as the log's `deletionVector` object; the row count bound
/// ([`DvDescriptor::with_row_count`]) is not part of it.
impl serde::Serialize for DvDescriptor {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let to_i64 = |v: u64| i64::try_from(v).map_err(serde::ser::Error::custom);
        LogForm {
            storage_type: self.storage_type.code().to_string(),
            path_or_inline_dv: self.path_or_inline_dv.clone(),
            offset: self.offset.map(to_i64).transpose()?,
            size_in_bytes: i64::from(self.size_in_bytes),
            cardinality: to_i64(self.cardinality)?,
        }
        .serialize(serializer)
    }
}

/// Deserialized from the log's `deletionVector` object and validated as
/// [`DvDescriptor::try_new`] does.
impl<'de> serde::Deserialize<'de> for DvDescriptor {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let f = LogForm::deserialize(deserializer)?;
        DvDescriptor::try_new(
            &f.storage_type,
            f.path_or_inline_dv,
            f.offset,
            f.size_in_bytes,
            f.cardinality,
        )
        .map_err(serde::de::Error::custom)
    }
}
