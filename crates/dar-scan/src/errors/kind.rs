//! [`ErrorKind`]: what kind of failure a [`ScanError`] is, for callers that
//! react to the kind rather than to the variant (an exception class in
//! Python, an exit status, a retry).
//!
//! Every variant of [`ScanError`] is classified by an exhaustive `match`
//! (a new variant does not compile until it is classified), and a variant
//! that wraps an error of a crate below is classified by that error:
//! `dar-io` (storage, or a bad URI or option), `dar-log` (not found,
//! unsupported protocol, corrupt log), `dar-dv`, `dar-prune`. Their enums
//! are `#[non_exhaustive]`, so their matches list every variant known
//! today and fall back, for variants added later, to the kind the crate's
//! errors mostly are.

use std::error::Error as StdError;

use dar_dv::DvError;
use dar_log::LogError;
use dar_prune::PruneError;

use crate::errors::error::ScanError;

/// The kinds of failure a [`ScanError`] reports ([`ScanError::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The table has no Delta log, or the version or timestamp asked for is
    /// outside its history.
    NotFound,
    /// The table (or an encoded scan) needs a reader version, feature,
    /// format or type that dar cannot read.
    ProtocolUnsupported,
    /// The predicate does not parse or does not fit the table schema.
    InvalidPredicate,
    /// An argument is out of range or names nothing: an unknown column, a
    /// table or scan option, a URI, a storage option, encoded scan bytes
    /// that do not parse.
    InvalidArgument,
    /// The object store failed: a request, the credentials, or an object
    /// that is not there.
    Storage,
    /// The Delta log, a checkpoint, a data file or a deletion vector is
    /// malformed, or they disagree (sizes, row counts).
    CorruptData,
    /// A data file breaks the schema the table declares: nulls in or no
    /// column for a column declared not null, or a column of a type that
    /// cannot be read as the declared one.
    SchemaViolation,
    /// The log names a data or DV file where the table's options do not let
    /// dar read: outside the table root while paths are confined to it, or
    /// on another store for which no store was configured.
    PathRefused,
    /// dar itself failed: a decoder task stopped (a panic), or an Arrow
    /// kernel failed on batches dar built. No input explains it; a bug
    /// report does.
    Internal,
}

impl ScanError {
    /// The kind of failure.
    ///
    /// ```
    /// use dar_scan::{ErrorKind, ScanError};
    ///
    /// let e = ScanError::UnknownColumn { column: "fair".into() };
    /// assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Open { source, .. } | Self::Io { source, .. } => io_kind(source),
            Self::Log { source, .. } => log_kind(source),
            Self::UnknownColumn { .. }
            | Self::InvalidOption { .. }
            | Self::TableOption { .. }
            | Self::Spec { .. } => ErrorKind::InvalidArgument,
            Self::Predicate { source } | Self::Evaluate { source, .. } => prune_kind(source),
            Self::OtherStore { .. } | Self::OutsideRoot { .. } => ErrorKind::PathRefused,
            Self::TaskFailed { .. } | Self::Arrow { .. } => ErrorKind::Internal,
            Self::NullInNonNullable { .. }
            | Self::MissingNonNullable { .. }
            | Self::SchemaMismatch { .. } => ErrorKind::SchemaViolation,
            Self::Parquet { source, .. } => corrupt_unless_store_failed(source.as_ref()),
            Self::DeletionVector { source, .. } => dv_kind(source),
            Self::RowCountMismatch { .. } | Self::InvalidTask { .. } => ErrorKind::CorruptData,
            Self::SpecFormat { .. } => ErrorKind::ProtocolUnsupported,
        }
    }
}

/// A `dar-io` error: a bad URI or option, a store failure, or bytes that
/// are not what the log says.
fn io_kind(error: &dar_io::Error) -> ErrorKind {
    use dar_io::Error as E;
    match error {
        E::InvalidUri { .. }
        | E::UnsupportedScheme { .. }
        | E::FeatureDisabled { .. }
        | E::UnknownOption { .. }
        | E::InvalidOption { .. }
        | E::BuildStore { .. }
        | E::CacheDirRefused { .. } => ErrorKind::InvalidArgument,
        E::Store { .. } | E::Truncated { .. } => ErrorKind::Storage,
        E::SizeMismatch { .. } | E::InvalidRange { .. } => ErrorKind::CorruptData,
        // Parquet metadata failed: reading its bytes (a store error
        // inside), or on bytes that are not Parquet (bad footer, ...).
        E::Parquet { .. } => corrupt_unless_store_failed(error),
        _ => ErrorKind::Storage,
    }
}

/// A `dar-log` error.
fn log_kind(error: &LogError) -> ErrorKind {
    use LogError as E;
    match error {
        E::NoLog { .. } | E::VersionNotFound { .. } | E::TimestampOutOfRange { .. } => {
            ErrorKind::NotFound
        }
        E::ChangeCommitMissing { .. } => ErrorKind::NotFound,
        E::ChangeRange { .. } => ErrorKind::InvalidArgument,
        E::ChangeDataFeedDisabled { .. } | E::ChangeFeedSchema { .. } => {
            ErrorKind::ProtocolUnsupported
        }
        E::UnsupportedReaderVersion { .. }
        | E::UnsupportedFeature { .. }
        | E::UnsupportedFormat { .. }
        | E::UnknownType { .. } => ErrorKind::ProtocolUnsupported,
        E::Store { .. } => ErrorKind::Storage,
        E::Arrow { .. } => ErrorKind::Internal,
        E::CheckpointParquet { .. } => corrupt_unless_store_failed(error),
        E::VersionGap { .. }
        | E::TruncatedHistory { .. }
        | E::MalformedJson { .. }
        | E::EmptyCommit { .. }
        | E::CheckpointSchema { .. }
        | E::InvalidAction { .. }
        | E::InvalidAdd { .. }
        | E::MissingSchema { .. }
        | E::InvalidDeletionVector { .. }
        | E::MissingProtocol { .. }
        | E::MissingMetadata { .. }
        | E::InvalidPath { .. }
        | E::SchemaJson { .. }
        | E::InvalidSchema { .. }
        | E::ColumnNotFound { .. }
        | E::UnknownColumnMappingMode { .. }
        | E::ColumnMapping { .. }
        | E::InvalidTypeChange { .. }
        | E::InvalidTypeChangeMetadata { .. }
        | E::InvalidTableProperty { .. }
        | E::PartitionValue { .. }
        | E::UnexpectedArrowType { .. } => ErrorKind::CorruptData,
        _ => ErrorKind::CorruptData,
    }
}

/// A `dar-dv` error: the DV file could not be read, or its bytes or
/// descriptor are wrong.
fn dv_kind(error: &DvError) -> ErrorKind {
    use DvError as E;
    match error {
        E::Fetch { .. } => ErrorKind::Storage,
        // dar-scan handed the decoder input that does not fit the call.
        E::InvalidArgument { .. } => ErrorKind::Internal,
        E::UnknownStorageType { .. }
        | E::InvalidDescriptor { .. }
        | E::InvalidZ85 { .. }
        | E::InvalidPath { .. }
        | E::Truncated { .. }
        | E::TrailingBytes { .. }
        | E::BadVersion { .. }
        | E::SizeMismatch { .. }
        | E::ChecksumMismatch { .. }
        | E::BadMagic { .. }
        | E::BadBucketKey { .. }
        | E::Bitmap { .. }
        | E::CardinalityMismatch { .. }
        | E::RowIndexOutOfRange { .. } => ErrorKind::CorruptData,
        _ => ErrorKind::CorruptData,
    }
}

/// A `dar-prune` error: the predicate is wrong, unless evaluating a
/// validated predicate failed on a batch dar built.
fn prune_kind(error: &PruneError) -> ErrorKind {
    use PruneError as E;
    match error {
        E::BatchMismatch { .. } | E::Arrow { .. } => ErrorKind::Internal,
        E::UnknownColumn { .. }
        | E::NotAStruct { .. }
        | E::IncompatibleTypes { .. }
        | E::UnsupportedOperation { .. }
        | E::InvalidExpr { .. }
        | E::Parse { .. }
        | E::Unsupported { .. }
        | E::TooDeep { .. }
        | E::TooDeepAfterKeyword { .. } => ErrorKind::InvalidPredicate,
        _ => ErrorKind::InvalidPredicate,
    }
}

/// [`ErrorKind::Storage`] when a store request failed somewhere below
/// `error` (parquet and the log readers wrap the store's errors), else
/// [`ErrorKind::CorruptData`]: the bytes were read and are wrong.
fn corrupt_unless_store_failed(error: &(dyn StdError + 'static)) -> ErrorKind {
    let mut cause = error.source();
    while let Some(e) = cause {
        let store_failed = e.is::<object_store::Error>()
            || e.downcast_ref::<dar_io::Error>()
                .is_some_and(|io| io_kind(io) == ErrorKind::Storage);
        if store_failed {
            return ErrorKind::Storage;
        }
        cause = e.source();
    }
    ErrorKind::CorruptData
}

#[cfg(test)]
mod tests;
