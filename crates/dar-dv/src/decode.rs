//! Pure decoding: descriptor + bytes in, [`DeletedRows`] out. No I/O.
//!
//! A DV file (`u` and `p` storage) is a version byte followed by records
//! packed back to back; a descriptor's `offset` points at one record:
//!
//! ```text
//! byte 0                        version      u8 = 1
//! offset+0 .. +3                dataSize     u32 BIG-endian (= sizeInBytes)
//! offset+4 .. +4+dataSize-1     bitmap       magic + roaring array (see bitmap.rs)
//! offset+4+dataSize .. +7       checksum     u32 BIG-endian CRC-32 (IEEE) of the
//!                                            bitmap bytes (size field not covered)
//! ```

use std::ops::Range;

use crate::bitmap;
use crate::descriptor::{DvDescriptor, StorageType};
use crate::error::{DvError, DvSource, Result};
use crate::rows::DeletedRows;
use crate::z85;

/// The only DV file format version.
pub const FORMAT_VERSION: u8 = 1;
/// Size field (4) plus checksum (4) around each record's bitmap.
pub(crate) const RECORD_OVERHEAD: u64 = 8;

/// Decodes an inline (`i`) DV from its descriptor alone.
///
/// The Z85 payload is decoded, cut to `sizeInBytes` (Delta pads it to a
/// multiple of 4 bytes), and checked against the cardinality and row count.
pub fn decode_inline(dv: &DvDescriptor) -> Result<DeletedRows> {
    let name = dv.source();
    if dv.storage_type() != StorageType::Inline {
        return Err(DvError::InvalidArgument {
            dv: name,
            reason: "not an inline DV: fetch it from its file".to_owned(),
        });
    }
    // An empty payload with cardinality 0 holds no bitmap to decode.
    if dv.is_empty() {
        return Ok(DeletedRows::default());
    }
    let mut bytes = z85::decode(dv.path_or_inline_dv()).map_err(|e| DvError::InvalidZ85 {
        dv: name.clone(),
        position: e.position,
        reason: e.reason,
    })?;
    let size = u64::from(dv.size_in_bytes());
    let decoded = bytes.len() as u64;
    if decoded < size {
        return Err(DvError::Truncated {
            dv: name,
            what: "inline bitmap (sizeInBytes)",
            expected: size,
            actual: decoded,
        });
    }
    // Only the zero padding of the last 4-byte group may follow the bitmap.
    if decoded - size >= 4 {
        return Err(DvError::TrailingBytes {
            dv: name,
            what: "inline bitmap (sizeInBytes)",
            extra: decoded - size,
        });
    }
    bytes.truncate(dv.size_in_bytes() as usize);
    let rows = DeletedRows::from_treemap(bitmap::decode(&bytes, &name)?);
    validate(dv, &name, &rows)?;
    Ok(rows)
}

/// The byte range of `dv`'s record in its file: `[offset, offset + 8 + sizeInBytes)`.
pub fn record_range(dv: &DvDescriptor) -> Range<u64> {
    let start = dv.effective_offset();
    start..start.saturating_add(RECORD_OVERHEAD + u64::from(dv.size_in_bytes()))
}

/// The range to fetch for `dv`: its record, widened by one byte to include
/// the version byte when the record is the file's first (offset 1). That
/// costs one byte and no extra request, and lets the version be checked in
/// the common case; records further in are validated by size and checksum.
pub fn fetch_range(dv: &DvDescriptor) -> Range<u64> {
    let record = record_range(dv);
    if record.start == 1 {
        0..record.end
    } else {
        record
    }
}

/// Decodes a `u`/`p` DV from `bytes`, which hold the file's bytes from `start` on:
/// either a whole DV file (`start == 0`, trailing records allowed), the
/// exact [`fetch_range`], or the exact [`record_range`].
///
/// When the bytes start at 0 the version byte is checked. `path` names the
/// file in errors.
pub fn decode_file_bytes(
    dv: &DvDescriptor,
    path: &str,
    start: u64,
    bytes: &[u8],
) -> Result<DeletedRows> {
    let offset = dv.effective_offset();
    let name = DvSource::File {
        path: path.to_owned(),
        offset,
    };
    if dv.storage_type() == StorageType::Inline {
        return Err(DvError::InvalidArgument {
            dv: dv.source(),
            reason: "an inline DV has no file: use decode_inline".to_owned(),
        });
    }
    let mut record = bytes;
    let mut whole_file = false;
    if start == 0 {
        let Some((&version, _)) = bytes.split_first() else {
            return Err(DvError::Truncated {
                dv: name,
                what: "version byte",
                expected: 1,
                actual: 0,
            });
        };
        if version != FORMAT_VERSION {
            return Err(DvError::BadVersion {
                dv: name,
                found: version,
            });
        }
        // Bytes past the record are other DVs' records only when we were
        // handed more than the record itself (a whole file).
        whole_file = bytes.len() as u64 > fetch_range(dv).end;
    }
    let skip = offset
        .checked_sub(start)
        .ok_or_else(|| DvError::InvalidArgument {
            dv: name.clone(),
            reason: format!("bytes start at {start}, after the record's offset"),
        })?;
    let size = u64::from(dv.size_in_bytes());
    let needed = skip + RECORD_OVERHEAD + size;
    if (record.len() as u64) < needed {
        return Err(DvError::Truncated {
            dv: name,
            what: "DV record (size field, bitmap, checksum)",
            expected: needed,
            actual: record.len() as u64,
        });
    }
    if !whole_file && record.len() as u64 > needed {
        return Err(DvError::TrailingBytes {
            dv: name,
            what: "DV record",
            extra: record.len() as u64 - needed,
        });
    }
    // `needed <= record.len()`, so these conversions and slices are in bounds.
    record = &record[skip as usize..needed as usize];
    let (size_field, rest) = record.split_at(4);
    let (bitmap_bytes, checksum) = rest.split_at(size as usize);
    let in_file = u32::from_be_bytes([size_field[0], size_field[1], size_field[2], size_field[3]]);
    if in_file != dv.size_in_bytes() {
        return Err(DvError::SizeMismatch {
            dv: name,
            in_file,
            in_descriptor: dv.size_in_bytes(),
        });
    }
    let stored = u32::from_be_bytes([checksum[0], checksum[1], checksum[2], checksum[3]]);
    let computed = crc32fast::hash(bitmap_bytes);
    if stored != computed {
        return Err(DvError::ChecksumMismatch {
            dv: name,
            stored,
            computed,
        });
    }
    let rows = DeletedRows::from_treemap(bitmap::decode(bitmap_bytes, &name)?);
    validate(dv, &name, &rows)?;
    Ok(rows)
}

/// Checks decoded rows against the descriptor's cardinality and row count.
pub(crate) fn validate(dv: &DvDescriptor, name: &DvSource, rows: &DeletedRows) -> Result<()> {
    if rows.len() != dv.cardinality() {
        return Err(DvError::CardinalityMismatch {
            dv: name.clone(),
            expected: dv.cardinality(),
            actual: rows.len(),
        });
    }
    check_row_count(dv, name, rows)
}

/// Checks that every deleted row is below the descriptor's row count (if set).
fn check_row_count(dv: &DvDescriptor, name: &DvSource, rows: &DeletedRows) -> Result<()> {
    if let (Some(row_count), Some(row)) = (dv.row_count(), rows.max())
        && row >= row_count
    {
        return Err(DvError::RowIndexOutOfRange {
            dv: name.clone(),
            row,
            row_count,
        });
    }
    Ok(())
}
