//! Writing DV files (for fixtures and round-trip tests): the version byte,
//! then one framed record per DV. Inline DVs are made by
//! [`crate::DvDescriptor::inline`].

use crate::decode::{FORMAT_VERSION, RECORD_OVERHEAD};
use crate::error::{DvError, DvSource, Result};
use crate::rows::DeletedRows;

/// Where [`DvFileWriter::add`] put a DV: the fields of its descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DvRecord {
    /// Byte offset of the record (its size field) in the file.
    pub offset: u64,
    /// Length of the serialized bitmap, magic included (`sizeInBytes`).
    pub size_in_bytes: u32,
    /// Number of deleted rows (`cardinality`).
    pub cardinality: u64,
}

/// Builds a DV file holding one or more DVs, back to back.
///
/// ```
/// use dar_dv::{DeletedRows, DvDescriptor, DvFileWriter};
///
/// let mut writer = DvFileWriter::new();
/// let first = writer.add(&DeletedRows::from_iter([0, 9]))?;
/// let second = writer.add(&DeletedRows::from_iter([5]))?;
/// assert_eq!((first.offset, second.offset), (1, 1 + 8 + 36));
/// let file = writer.finish();
///
/// let uuid = uuid::Uuid::nil();
/// let dv = DvDescriptor::uuid_file("", uuid, &second);
/// let rows = dar_dv::decode_file_bytes(&dv, "dv.bin", 0, &file)?;
/// assert_eq!(rows.iter().collect::<Vec<_>>(), [5]);
/// # Ok::<(), dar_dv::DvError>(())
/// ```
#[derive(Debug, Clone)]
pub struct DvFileWriter {
    bytes: Vec<u8>,
}

impl Default for DvFileWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl DvFileWriter {
    /// A file holding only the version byte.
    pub fn new() -> Self {
        Self {
            bytes: vec![FORMAT_VERSION],
        }
    }

    /// Appends `rows` as a record: BE size, bitmap, BE CRC-32 of the bitmap.
    pub fn add(&mut self, rows: &DeletedRows) -> Result<DvRecord> {
        let bitmap = rows.serialize()?;
        let size_in_bytes =
            u32::try_from(bitmap.len()).map_err(|_| DvError::InvalidDescriptor {
                dv: DvSource::Descriptor {
                    unique_id: String::from("(being encoded)"),
                },
                field: "sizeInBytes",
                value: bitmap.len() as i64,
            })?;
        let offset = self.bytes.len() as u64;
        self.bytes.reserve(bitmap.len() + RECORD_OVERHEAD as usize);
        self.bytes.extend_from_slice(&size_in_bytes.to_be_bytes());
        self.bytes.extend_from_slice(&bitmap);
        self.bytes
            .extend_from_slice(&crc32fast::hash(&bitmap).to_be_bytes());
        Ok(DvRecord {
            offset,
            size_in_bytes,
            cardinality: rows.len(),
        })
    }

    /// The file's bytes.
    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}
