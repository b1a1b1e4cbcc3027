//! Deleting rows through deletion vectors (§9), with dar-dv's encoder.
//!
//! One `delete_rows` call writes at most one DV file: every touched data
//! file gets a record in it (so DV files shared by several data files, as
//! Delta-Spark writes them, are exercised). A file that already has a DV
//! gets the union of its old and new deleted rows.

use dar_dv::{DeletedRows, DvDescriptor, DvFileWriter};
use uuid::Uuid;

use crate::error::{Result, TestkitError};

/// Where new deletion vectors are stored.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DvStorage {
    /// Inline in the log (`storageType` `i`, Z85 in `pathOrInlineDv`).
    Inline,
    /// In a `deletion_vector_<uuid>.bin` file (`storageType` `u`) at the
    /// table root.
    #[default]
    File,
    /// As `File`, under `<root>/<prefix>/` (Delta's random prefixes).
    FileWithPrefix(String),
}

impl DvStorage {
    fn prefix(&self) -> Option<&str> {
        match self {
            DvStorage::Inline => None,
            DvStorage::File => Some(""),
            DvStorage::FileWithPrefix(prefix) => Some(prefix),
        }
    }
}

/// The union of `old` and `new`, checked against the file's row count.
pub(crate) fn merge(
    path: &str,
    num_records: u64,
    old: Option<&DeletedRows>,
    new: &[u64],
) -> Result<DeletedRows> {
    if let Some(&row) = new.iter().find(|&&row| row >= num_records) {
        return Err(TestkitError::RowOutOfRange {
            path: path.to_owned(),
            row,
            num_records,
        });
    }
    let old = old.into_iter().flat_map(DeletedRows::iter);
    Ok(old.chain(new.iter().copied()).collect())
}

/// DVs being built in one commit.
pub(crate) struct DvBatch {
    storage: DvStorage,
    uuid: Uuid,
    file: DvFileWriter,
    used: bool,
}

impl DvBatch {
    pub(crate) fn new(storage: DvStorage, uuid: Uuid) -> Self {
        Self {
            storage,
            uuid,
            file: DvFileWriter::new(),
            used: false,
        }
    }

    /// The descriptor for `rows`, written inline or into the batch's file.
    pub(crate) fn add(&mut self, path: &str, rows: &DeletedRows) -> Result<DvDescriptor> {
        let dv_err = |source: dar_dv::DvError| TestkitError::Dv {
            path: path.to_owned(),
            source: Box::new(source),
        };
        match self.storage.prefix() {
            None => DvDescriptor::inline(rows).map_err(dv_err),
            Some(prefix) => {
                let record = self.file.add(rows).map_err(dv_err)?;
                self.used = true;
                Ok(DvDescriptor::uuid_file(prefix, self.uuid, &record))
            }
        }
    }

    /// The DV file to write (relative key segments and bytes), if any DV went to a file.
    pub(crate) fn finish(self) -> Option<(Vec<String>, Vec<u8>)> {
        let prefix = self.storage.prefix()?;
        if !self.used {
            return None;
        }
        let mut segments = Vec::new();
        if !prefix.is_empty() {
            segments.push(prefix.to_owned());
        }
        segments.push(crate::naming::dv_file_name(self.uuid));
        Some((segments, self.file.finish()))
    }
}
