//! Object classes for metering: which kind of object (or which part of a
//! Parquet file) a request was for.
//!
//! Classification is by path, with no knowledge of Delta beyond naming
//! conventions that are stable across lakehouse formats: a reader that knows
//! better (the Parquet reader knows footer from page reads) attaches an
//! [`ObjectClass`] to the request's `GetOptions::extensions`, and the metered
//! store uses that instead.

use object_store::path::Path;

/// What a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectClass {
    /// A log entry (`_delta_log/*.json`, `*.crc`, `_last_checkpoint`).
    Log,
    /// A checkpoint or checkpoint sidecar.
    Checkpoint,
    /// A Parquet footer (metadata, page indexes) or a whole small object read
    /// to get it.
    Footer,
    /// Parquet column-chunk / page bytes.
    PageData,
    /// A deletion-vector file.
    DeletionVector,
    /// Anything else.
    Other,
}

impl ObjectClass {
    /// Every class, in the order used by [`crate::IoSnapshot`].
    pub const ALL: [ObjectClass; 6] = [
        ObjectClass::Log,
        ObjectClass::Checkpoint,
        ObjectClass::Footer,
        ObjectClass::PageData,
        ObjectClass::DeletionVector,
        ObjectClass::Other,
    ];

    /// Position in [`Self::ALL`].
    pub fn index(self) -> usize {
        match self {
            ObjectClass::Log => 0,
            ObjectClass::Checkpoint => 1,
            ObjectClass::Footer => 2,
            ObjectClass::PageData => 3,
            ObjectClass::DeletionVector => 4,
            ObjectClass::Other => 5,
        }
    }

    /// A short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ObjectClass::Log => "log",
            ObjectClass::Checkpoint => "checkpoint",
            ObjectClass::Footer => "footer",
            ObjectClass::PageData => "page_data",
            ObjectClass::DeletionVector => "dv",
            ObjectClass::Other => "other",
        }
    }

    /// Classifies a request by its path alone.
    ///
    /// Checkpoints are recognised before log entries because checkpoints also
    /// live in `_delta_log/`; a `.parquet` that is not a checkpoint counts as
    /// page data (its footer reads are re-labelled by the Parquet reader).
    pub fn classify(path: &Path) -> ObjectClass {
        let s = path.as_ref();
        let file = s.rsplit('/').next().unwrap_or(s);
        let in_log = s.starts_with("_delta_log/") || s.contains("/_delta_log/");
        if s.contains("/_sidecars/") || s.starts_with("_sidecars/") || file.contains(".checkpoint")
        {
            ObjectClass::Checkpoint
        } else if in_log
            && (file.ends_with(".json") || file.ends_with(".crc") || file == "_last_checkpoint")
        {
            ObjectClass::Log
        } else if file.starts_with("deletion_vector_") {
            ObjectClass::DeletionVector
        } else if file.ends_with(".parquet") {
            ObjectClass::PageData
        } else {
            ObjectClass::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_by_path() {
        let cases = [
            ("t/_delta_log/00000000000000000003.json", ObjectClass::Log),
            ("_delta_log/00000000000000000000.json", ObjectClass::Log),
            ("t/_delta_log/_last_checkpoint", ObjectClass::Log),
            ("t/_delta_log/00000000000000000010.crc", ObjectClass::Log),
            (
                "t/_delta_log/00000000000000000010.checkpoint.parquet",
                ObjectClass::Checkpoint,
            ),
            (
                "t/_delta_log/00000000000000000010.checkpoint.0000000001.0000000002.parquet",
                ObjectClass::Checkpoint,
            ),
            (
                "t/_delta_log/_sidecars/abc.parquet",
                ObjectClass::Checkpoint,
            ),
            (
                "t/deletion_vector_0f9e2b3c-aaaa-bbbb-cccc-000000000000.bin",
                ObjectClass::DeletionVector,
            ),
            (
                "t/part=1/part-00000-abc.snappy.parquet",
                ObjectClass::PageData,
            ),
            ("t/readme.txt", ObjectClass::Other),
            ("t/json/x.json", ObjectClass::Other),
        ];
        for (p, want) in cases {
            assert_eq!(ObjectClass::classify(&Path::from(p)), want, "{p}");
        }
    }

    #[test]
    fn index_matches_all() {
        for (i, c) in ObjectClass::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }
}
