//! The crate's one error type, and [`DvSource`], the name every error carries.

use std::fmt;

/// Which deletion vector an error is about: a DV file record (by path and
/// offset), an inline DV, or a descriptor that was not resolved to a file yet.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DvSource {
    /// A record inside a DV file (`u` or `p` storage).
    File {
        /// The DV file's location as resolved (a URL or object-store path).
        path: String,
        /// Byte offset of the record inside the file.
        offset: u64,
    },
    /// An inline (`i`) DV, named by its unique id (shortened in `Display`).
    Inline {
        /// The DV's unique id: `i` followed by the Z85 payload.
        unique_id: String,
    },
    /// A descriptor not (yet) tied to a file, named by its unique id.
    Descriptor {
        /// The DV's unique id (`storageType + pathOrInlineDv [+ "@" + offset]`).
        unique_id: String,
    },
}

/// Inline payloads can be kilobytes long; error messages show a prefix.
const SHOWN_ID_CHARS: usize = 48;

fn shortened(id: &str) -> String {
    match id.char_indices().nth(SHOWN_ID_CHARS) {
        Some((cut, _)) => format!("{}... ({} chars)", &id[..cut], id.chars().count()),
        None => id.to_owned(),
    }
}

impl fmt::Display for DvSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File { path, offset } => write!(f, "DV file {path} at offset {offset}"),
            Self::Inline { unique_id } => write!(f, "inline DV {}", shortened(unique_id)),
            Self::Descriptor { unique_id } => write!(f, "DV {}", shortened(unique_id)),
        }
    }
}

/// Everything that can go wrong while resolving, fetching, decoding or
/// encoding a deletion vector. Every variant names the DV ([`DvSource`]) and
/// says what was wrong; none carries credentials (paths only, no URLs with
/// query strings are produced by this crate).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DvError {
    /// `storageType` is not `u`, `i` or `p`.
    #[error(
        "{dv}: unknown deletion vector storage type {storage_type:?} (expected \"u\", \"i\" or \"p\")"
    )]
    UnknownStorageType {
        /// The DV.
        dv: DvSource,
        /// The storage type as written in the log.
        storage_type: String,
    },
    /// A descriptor field holds an impossible value (negative, or too large).
    #[error("{dv}: invalid descriptor field {field} = {value}")]
    InvalidDescriptor {
        /// The DV.
        dv: DvSource,
        /// The field's name in the Delta log (`offset`, `sizeInBytes`, `cardinality`).
        field: &'static str,
        /// The value found.
        value: i64,
    },
    /// A Z85 string is malformed (length not a multiple of 5, a character
    /// outside the alphabet, or a group above `u32::MAX`).
    #[error("{dv}: invalid Z85 at character {position}: {reason}")]
    InvalidZ85 {
        /// The DV.
        dv: DvSource,
        /// Index of the offending character (or the string length for a
        /// length error).
        position: usize,
        /// What was wrong.
        reason: &'static str,
    },
    /// The `u` path or `p` URI cannot be turned into a location.
    #[error("{dv}: invalid DV path: {reason}")]
    InvalidPath {
        /// The DV.
        dv: DvSource,
        /// What was wrong.
        reason: String,
    },
    /// The caller passed input that does not fit the call (e.g. a file DV to
    /// [`crate::decode_inline`], or bytes starting after the record).
    #[error("{dv}: {reason}")]
    InvalidArgument {
        /// The DV.
        dv: DvSource,
        /// What did not fit.
        reason: String,
    },
    /// Fewer bytes than the layout requires.
    #[error("{dv}: truncated: needed {expected} bytes for the {what}, found {actual}")]
    Truncated {
        /// The DV.
        dv: DvSource,
        /// Which part was cut short.
        what: &'static str,
        /// Bytes required.
        expected: u64,
        /// Bytes present.
        actual: u64,
    },
    /// Bytes left over after the last structure that the layout defines.
    #[error("{dv}: {extra} trailing bytes after the {what}")]
    TrailingBytes {
        /// The DV.
        dv: DvSource,
        /// What they follow.
        what: &'static str,
        /// How many bytes are left over.
        extra: u64,
    },
    /// The DV file's first byte is not format version 1.
    #[error("{dv}: unsupported DV file version byte {found} (expected 1)")]
    BadVersion {
        /// The DV.
        dv: DvSource,
        /// The byte found.
        found: u8,
    },
    /// The record's size field differs from the descriptor's `sizeInBytes`.
    #[error("{dv}: size field is {in_file} but the descriptor's sizeInBytes is {in_descriptor}")]
    SizeMismatch {
        /// The DV.
        dv: DvSource,
        /// The big-endian size stored before the bitmap.
        in_file: u32,
        /// `sizeInBytes` from the descriptor.
        in_descriptor: u32,
    },
    /// The CRC-32 stored after the bitmap does not match its bytes.
    #[error("{dv}: checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    ChecksumMismatch {
        /// The DV.
        dv: DvSource,
        /// The stored big-endian CRC-32.
        stored: u32,
        /// The CRC-32 of the bitmap bytes.
        computed: u32,
    },
    /// The bitmap does not start with the portable magic number.
    #[error("{dv}: bad bitmap magic {found} (expected 1681511377, the portable format{native})", native = if *found == crate::bitmap::NATIVE_MAGIC { "; the native format 1681511376 is not supported" } else { "" })]
    BadMagic {
        /// The DV.
        dv: DvSource,
        /// The little-endian u32 found.
        found: u32,
    },
    /// A bucket key of the 64-bit bitmap is out of order or out of range.
    #[error(
        "{dv}: bitmap bucket {index} has key {key}: keys must ascend strictly and stay below 2^31"
    )]
    BadBucketKey {
        /// The DV.
        dv: DvSource,
        /// Bucket index.
        index: u64,
        /// The key found.
        key: u32,
    },
    /// A 32-bit roaring bitmap inside the DV is malformed.
    #[error("{dv}: malformed roaring bitmap in bucket {index}")]
    Bitmap {
        /// The DV.
        dv: DvSource,
        /// Bucket index.
        index: u64,
        /// The roaring crate's error.
        #[source]
        source: std::io::Error,
    },
    /// The decoded number of rows differs from the descriptor's `cardinality`.
    #[error("{dv}: decoded {actual} deleted rows but the descriptor's cardinality is {expected}")]
    CardinalityMismatch {
        /// The DV.
        dv: DvSource,
        /// `cardinality` from the descriptor.
        expected: u64,
        /// Rows in the decoded bitmap.
        actual: u64,
    },
    /// A deleted row index is not below the data file's row count.
    #[error("{dv}: deleted row index {row} is beyond the file's {row_count} rows")]
    RowIndexOutOfRange {
        /// The DV.
        dv: DvSource,
        /// The largest deleted row index.
        row: u64,
        /// The row count the caller gave (e.g. the file's `numRecords`).
        row_count: u64,
    },
    /// Reading the DV file failed.
    #[error("{dv}: reading failed")]
    Fetch {
        /// The DV.
        dv: DvSource,
        /// The object store's error.
        #[source]
        source: object_store::Error,
    },
}

impl DvError {
    /// The DV this error is about.
    pub fn dv(&self) -> &DvSource {
        match self {
            Self::UnknownStorageType { dv, .. }
            | Self::InvalidDescriptor { dv, .. }
            | Self::InvalidZ85 { dv, .. }
            | Self::InvalidPath { dv, .. }
            | Self::InvalidArgument { dv, .. }
            | Self::Truncated { dv, .. }
            | Self::TrailingBytes { dv, .. }
            | Self::BadVersion { dv, .. }
            | Self::SizeMismatch { dv, .. }
            | Self::ChecksumMismatch { dv, .. }
            | Self::BadMagic { dv, .. }
            | Self::BadBucketKey { dv, .. }
            | Self::Bitmap { dv, .. }
            | Self::CardinalityMismatch { dv, .. }
            | Self::RowIndexOutOfRange { dv, .. }
            | Self::Fetch { dv, .. } => dv,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = DvError> = std::result::Result<T, E>;
