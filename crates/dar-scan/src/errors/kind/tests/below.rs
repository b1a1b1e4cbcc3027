//! Every variant of the errors of the crates below dar-scan, with the kind
//! a `ScanError` wrapping it has.

use arrow_schema::{ArrowError, DataType};
use dar_log::schema::ColumnMappingMode;
use parquet::errors::ParquetError;

use super::*;
use super::{dv, json_error, s, store_error};

/// Every `dar-io` variant and its kind.
pub(super) fn io_errors() -> Vec<(dar_io::Error, ErrorKind)> {
    use ErrorKind::*;
    use dar_io::Error as E;
    let range = 0..8;
    vec![
        (
            E::InvalidUri {
                uri: s("s3://"),
                reason: s("no bucket"),
            },
            InvalidArgument,
        ),
        (
            E::UnsupportedScheme {
                uri: s("ftp://h/t"),
                scheme: s("ftp"),
            },
            InvalidArgument,
        ),
        (
            E::CacheDir {
                path: s("/home/u/.cache/dar"),
                source: std::io::Error::other("read-only file system"),
            },
            Storage,
        ),
        (
            E::CacheDirRefused {
                path: s("/tmp"),
                reason: s("writable by everyone"),
            },
            InvalidArgument,
        ),
        (
            E::FeatureDisabled {
                uri: s("az://c/t"),
                feature: "azure",
            },
            InvalidArgument,
        ),
        (
            E::UnknownOption {
                key: s("k"),
                backend: "s3",
            },
            InvalidArgument,
        ),
        (
            E::InvalidOption {
                key: s("k"),
                reason: s("not a bool"),
            },
            InvalidArgument,
        ),
        (
            E::BuildStore {
                uri: s("s3://b/t"),
                reason: s("<redacted>"),
            },
            InvalidArgument,
        ),
        (
            E::Store {
                path: s("t/x"),
                source: store_error(),
            },
            Storage,
        ),
        (
            E::Truncated {
                path: s("t/x"),
                range: range.clone(),
                expected: 8,
                actual: 4,
            },
            Storage,
        ),
        (
            E::SizeMismatch {
                path: s("t/x"),
                expected: 8,
                actual: 9,
            },
            CorruptData,
        ),
        (
            E::InvalidRange {
                path: s("t/x"),
                range,
                size: Some(4),
            },
            CorruptData,
        ),
        (
            E::Parquet {
                path: s("t/x"),
                source: ParquetError::General(s("bad footer")),
            },
            CorruptData,
        ),
        // Reading the footer's bytes failed: the store, not the file.
        (
            E::Parquet {
                path: s("t/x"),
                source: ParquetError::External(Box::new(E::Store {
                    path: s("t/x"),
                    source: store_error(),
                })),
            },
            Storage,
        ),
        (
            E::Parquet {
                path: s("t/x"),
                source: ParquetError::External(Box::new(store_error())),
            },
            Storage,
        ),
        // The bytes were read; they disagree with the log.
        (
            E::Parquet {
                path: s("t/x"),
                source: ParquetError::External(Box::new(E::SizeMismatch {
                    path: s("t/x"),
                    expected: 8,
                    actual: 9,
                })),
            },
            CorruptData,
        ),
    ]
}

/// Every `dar-log` variant and its kind.
pub(super) fn log_errors() -> Vec<(LogError, ErrorKind)> {
    let mut all = log_read_errors();
    all.extend(log_metadata_errors());
    all
}

/// `dar-log`'s errors of listing and reading the log, and their kinds.
fn log_read_errors() -> Vec<(LogError, ErrorKind)> {
    use ErrorKind::*;
    use LogError as E;
    let log = || s("t/_delta_log/");
    vec![
        (
            E::Store {
                path: log(),
                source: store_error(),
            },
            Storage,
        ),
        (E::NoLog { log_dir: log() }, NotFound),
        (
            E::VersionGap {
                log_dir: log(),
                missing: 3,
            },
            CorruptData,
        ),
        (
            E::TruncatedHistory {
                log_dir: log(),
                target: 1,
                earliest: 2,
            },
            CorruptData,
        ),
        (
            E::VersionNotFound {
                requested: 9,
                earliest: 0,
                latest: 2,
            },
            NotFound,
        ),
        (
            E::TimestampOutOfRange {
                requested_ms: 0,
                relation: "before",
                earliest_ms: 1,
                latest_ms: 2,
            },
            NotFound,
        ),
        (
            E::MalformedJson {
                path: log(),
                line: 1,
                source: json_error(),
            },
            CorruptData,
        ),
        (E::EmptyCommit { path: log() }, CorruptData),
        (
            E::CheckpointParquet {
                path: log(),
                source: ParquetError::EOF(s("eof")),
            },
            CorruptData,
        ),
        (
            E::CheckpointParquet {
                path: log(),
                source: ParquetError::External(Box::new(store_error())),
            },
            Storage,
        ),
        (
            E::CheckpointSchema {
                path: log(),
                column: s("add"),
                detail: s("a struct"),
            },
            CorruptData,
        ),
        (
            E::InvalidAction {
                path: log(),
                detail: s("null path"),
            },
            CorruptData,
        ),
    ]
}

/// `dar-log`'s errors of a table's protocol, metadata, schema and
/// actions, and their kinds.
fn log_metadata_errors() -> Vec<(LogError, ErrorKind)> {
    use ErrorKind::*;
    use LogError as E;
    let log = || s("t/_delta_log/");
    vec![
        (E::MissingSchema { version: 3 }, CorruptData),
        (
            E::InvalidAdd {
                path: s("part-0.parquet"),
                detail: s("size -5 is not a number of bytes"),
            },
            CorruptData,
        ),
        (
            E::InvalidDeletionVector {
                path: s("part-0.parquet"),
                source: Box::new(dar_dv::DvDescriptor::try_new("x", "a", None, 1, 1).unwrap_err()),
            },
            CorruptData,
        ),
        (
            E::MissingProtocol {
                log_dir: log(),
                version: 0,
            },
            CorruptData,
        ),
        (
            E::MissingMetadata {
                log_dir: log(),
                version: 0,
            },
            CorruptData,
        ),
        (
            E::UnsupportedReaderVersion {
                reader_version: 4,
                version: 0,
            },
            ProtocolUnsupported,
        ),
        (
            E::UnsupportedFeature {
                feature: s("geospatial"),
                version: 0,
            },
            ProtocolUnsupported,
        ),
        (
            E::UnsupportedFormat { provider: s("orc") },
            ProtocolUnsupported,
        ),
        (
            E::Arrow {
                context: s("building the file index"),
                source: ArrowError::MemoryError(s("x")),
            },
            Internal,
        ),
        (
            E::InvalidPath {
                path: s("%"),
                detail: s("bad escape"),
            },
            CorruptData,
        ),
        (
            E::SchemaJson {
                source: json_error(),
            },
            CorruptData,
        ),
        (
            E::InvalidSchema {
                field: s("a"),
                reason: s("no type"),
            },
            CorruptData,
        ),
        (
            E::UnknownType {
                field: s("g"),
                type_name: s("geometry"),
            },
            ProtocolUnsupported,
        ),
        (E::ColumnNotFound { column: s("p") }, CorruptData),
        (E::UnknownColumnMappingMode { mode: s("x") }, CorruptData),
        (
            E::ColumnMapping {
                field: s("a"),
                mode: ColumnMappingMode::Name,
                reason: s("no name"),
            },
            CorruptData,
        ),
        (
            E::InvalidTypeChange {
                field: s("a"),
                from_type: s("long"),
                to_type: s("int"),
            },
            CorruptData,
        ),
        (
            E::InvalidTypeChangeMetadata {
                field: s("a"),
                reason: s("x"),
            },
            CorruptData,
        ),
        (
            E::InvalidTableProperty {
                key: s("k"),
                value: s("v"),
            },
            CorruptData,
        ),
        (
            E::PartitionValue {
                file: s("f"),
                column: s("p"),
                value: s("x"),
                data_type: s("int"),
            },
            CorruptData,
        ),
        (
            E::UnexpectedArrowType {
                column: s("c"),
                expected: s("utf8"),
                found: s("int"),
            },
            CorruptData,
        ),
    ]
}

/// Every `dar-dv` variant and its kind.
pub(super) fn dv_errors() -> Vec<(DvError, ErrorKind)> {
    use DvError as E;
    use ErrorKind::*;
    vec![
        (
            E::UnknownStorageType {
                dv: dv(),
                storage_type: s("x"),
            },
            CorruptData,
        ),
        (
            E::InvalidDescriptor {
                dv: dv(),
                field: "offset",
                value: -1,
            },
            CorruptData,
        ),
        (
            E::InvalidZ85 {
                dv: dv(),
                position: 3,
                reason: "bad char",
            },
            CorruptData,
        ),
        (
            E::InvalidPath {
                dv: dv(),
                reason: s("x"),
            },
            CorruptData,
        ),
        (
            E::InvalidArgument {
                dv: dv(),
                reason: s("inline"),
            },
            Internal,
        ),
        (
            E::Truncated {
                dv: dv(),
                what: "bitmap",
                expected: 8,
                actual: 4,
            },
            CorruptData,
        ),
        (
            E::TrailingBytes {
                dv: dv(),
                what: "bitmap",
                extra: 1,
            },
            CorruptData,
        ),
        (E::BadVersion { dv: dv(), found: 2 }, CorruptData),
        (
            E::SizeMismatch {
                dv: dv(),
                in_file: 1,
                in_descriptor: 2,
            },
            CorruptData,
        ),
        (
            E::ChecksumMismatch {
                dv: dv(),
                stored: 1,
                computed: 2,
            },
            CorruptData,
        ),
        (E::BadMagic { dv: dv(), found: 7 }, CorruptData),
        (
            E::BadBucketKey {
                dv: dv(),
                index: 0,
                key: 9,
            },
            CorruptData,
        ),
        (
            E::Bitmap {
                dv: dv(),
                index: 0,
                source: std::io::Error::other("bad"),
            },
            CorruptData,
        ),
        (
            E::CardinalityMismatch {
                dv: dv(),
                expected: 2,
                actual: 0,
            },
            CorruptData,
        ),
        (
            E::RowIndexOutOfRange {
                dv: dv(),
                row: 10,
                row_count: 5,
            },
            CorruptData,
        ),
        (
            E::Fetch {
                dv: dv(),
                source: store_error(),
            },
            Storage,
        ),
    ]
}

/// Every `dar-prune` variant and its kind.
pub(super) fn prune_errors() -> Vec<(PruneError, ErrorKind)> {
    use ErrorKind::*;
    use PruneError as E;
    vec![
        (
            E::UnknownColumn {
                column: s("fair"),
                suggestions: vec![s("fare")],
            },
            InvalidPredicate,
        ),
        (
            E::NotAStruct {
                column: s("a"),
                data_type: DataType::Int32,
                field: s("b"),
            },
            InvalidPredicate,
        ),
        (
            E::IncompatibleTypes {
                column: s("a"),
                column_type: DataType::Int32,
                literal_type: DataType::Utf8,
                literal: s("'x'"),
                reason: None,
            },
            InvalidPredicate,
        ),
        (
            E::UnsupportedOperation {
                operation: s("LIKE"),
                column: s("a"),
                data_type: DataType::Int32,
            },
            InvalidPredicate,
        ),
        (E::InvalidExpr { message: s("x") }, InvalidPredicate),
        (
            E::Parse {
                line: 1,
                column: 2,
                message: s("x"),
            },
            InvalidPredicate,
        ),
        (
            E::Unsupported {
                line: 1,
                column: 2,
                what: s("CASE"),
            },
            InvalidPredicate,
        ),
        (E::TooDeep { limit: 64 }, InvalidPredicate),
        (E::TooDeepAfterKeyword { limit: 16 }, InvalidPredicate),
        (
            E::BatchMismatch {
                column: s("a"),
                message: s("missing"),
            },
            Internal,
        ),
        (
            E::Arrow {
                context: s("x"),
                source: ArrowError::MemoryError(s("x")),
            },
            Internal,
        ),
    ]
}
