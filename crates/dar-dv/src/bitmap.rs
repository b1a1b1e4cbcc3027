//! The serialized bitmap: a magic number, then a 64-bit "portable" roaring
//! array. This is what an inline DV's Z85 payload holds, and what sits
//! between the size field and the checksum of a DV file record.
//!
//! ```text
//! bytes 0..3    magic       u32 LE = 1681511377 (on disk: d1 d3 39 64)
//! bytes 4..11   numBuckets  u64 LE
//! numBuckets times, keys strictly ascending and < 2^31:
//!   key         u32 LE      high 32 bits of every value in the bucket
//!   bucket      a standard 32-bit RoaringBitmap (RoaringFormatSpec)
//! ```
//!
//! Every value is `(key << 32) | low32`. Delta-Spark writes every bucket from
//! 0 to the highest key, empty ones included; this encoder writes only
//! non-empty buckets (as kernel-rs does), which every portable reader accepts.

use std::io::{Cursor, Read};

use roaring::{RoaringBitmap, RoaringTreemap};

use crate::error::{DvError, DvSource, Result};

/// The portable-format magic number (little-endian on disk).
pub(crate) const PORTABLE_MAGIC: u32 = 1_681_511_377;
/// Delta-Spark's "native" layout magic, recognised only to say so in errors.
pub(crate) const NATIVE_MAGIC: u32 = 1_681_511_376;
/// Bucket keys are non-negative Java ints.
const MAX_BUCKET_KEY: u32 = i32::MAX as u32;

/// Decodes a serialized bitmap (magic included). All of `bytes` must be used.
pub(crate) fn decode(bytes: &[u8], dv: &DvSource) -> Result<RoaringTreemap> {
    let truncated = |what, expected: u64, actual: usize| DvError::Truncated {
        dv: dv.clone(),
        what,
        expected,
        actual: actual as u64,
    };
    let Some((magic, rest)) = bytes.split_first_chunk::<4>() else {
        return Err(truncated("bitmap magic", 4, bytes.len()));
    };
    let magic = u32::from_le_bytes(*magic);
    if magic != PORTABLE_MAGIC {
        return Err(DvError::BadMagic {
            dv: dv.clone(),
            found: magic,
        });
    }
    let Some((count, rest)) = rest.split_first_chunk::<8>() else {
        return Err(truncated("bucket count", 12, bytes.len()));
    };
    let count = u64::from_le_bytes(*count);

    // Read bucket by bucket (rather than `RoaringTreemap::deserialize_from`)
    // so that duplicate or descending keys are an error instead of one bucket
    // silently replacing another.
    let mut cursor = Cursor::new(rest);
    let mut buckets: Vec<(u32, RoaringBitmap)> = Vec::new();
    for index in 0..count {
        let mut key = [0_u8; 4];
        if cursor.read_exact(&mut key).is_err() {
            return Err(truncated(
                "bucket key",
                12 + cursor.position() + 4,
                bytes.len(),
            ));
        }
        let key = u32::from_le_bytes(key);
        let ascending = buckets.last().is_none_or(|(previous, _)| key > *previous);
        if !ascending || key > MAX_BUCKET_KEY {
            return Err(DvError::BadBucketKey {
                dv: dv.clone(),
                index,
                key,
            });
        }
        let bucket =
            RoaringBitmap::deserialize_from(&mut cursor).map_err(|source| DvError::Bitmap {
                dv: dv.clone(),
                index,
                source,
            })?;
        if !bucket.is_empty() {
            buckets.push((key, bucket));
        }
    }
    let extra = rest.len() as u64 - cursor.position();
    if extra != 0 {
        return Err(DvError::TrailingBytes {
            dv: dv.clone(),
            what: "roaring bitmap array",
            extra,
        });
    }
    Ok(RoaringTreemap::from_bitmaps(buckets))
}

/// Serializes `rows` as magic + portable 64-bit roaring array.
pub(crate) fn encode(rows: &RoaringTreemap) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + rows.serialized_size());
    out.extend_from_slice(&PORTABLE_MAGIC.to_le_bytes());
    // Writing into a Vec cannot fail; the error arm is unreachable.
    if rows.serialize_into(&mut out).is_err() {
        out.truncate(4);
    }
    out
}
