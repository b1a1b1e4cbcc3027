//! Every variant of [`ScanError`], and of the errors below it that it
//! wraps, with its kind.

use arrow_schema::ArrowError;
use dar_dv::DvSource;
use parquet::errors::ParquetError;

use super::*;
use crate::errors::option_error::TableOptionError;

mod below;

use below::{dv_errors, io_errors, log_errors, prune_errors};

fn s(text: &str) -> String {
    text.to_string()
}

fn store_error() -> object_store::Error {
    object_store::Error::NotFound {
        path: s("t/part-0.parquet"),
        source: Box::new(std::io::Error::from(std::io::ErrorKind::NotFound)),
    }
}

fn json_error() -> serde_json::Error {
    serde_json::from_str::<serde_json::Value>("{").unwrap_err()
}

fn dv() -> DvSource {
    DvSource::File {
        path: s("t/deletion_vector_1.bin"),
        offset: 1,
    }
}

/// Every `ScanError` variant that wraps nothing below, and its kind.
fn scan_errors() -> Vec<(ScanError, ErrorKind)> {
    use ErrorKind::*;
    use ScanError as E;
    let path = || s("t/part-0.parquet");
    vec![
        (E::UnknownColumn { column: s("fair") }, InvalidArgument),
        (
            E::InvalidOption {
                option: "batch_size",
                reason: s("must be at least 1"),
            },
            InvalidArgument,
        ),
        (
            E::OtherStore {
                path: s("s3://b/x"),
                origin: s("s3://b"),
            },
            PathRefused,
        ),
        (
            E::TaskFailed {
                path: path(),
                reason: s("panic"),
            },
            Internal,
        ),
        (
            E::OutsideRoot {
                what: "data file",
                path: s("/elsewhere/x"),
            },
            PathRefused,
        ),
        (
            E::NullInNonNullable {
                path: path(),
                column: s("a"),
                nulls: 1,
            },
            SchemaViolation,
        ),
        (
            E::MissingNonNullable {
                path: path(),
                column: s("a"),
            },
            SchemaViolation,
        ),
        (
            E::Parquet {
                path: path(),
                source: Box::new(ParquetError::General(s("bad page"))),
            },
            CorruptData,
        ),
        (
            E::Parquet {
                path: path(),
                source: Box::new(ParquetError::External(Box::new(store_error()))),
            },
            Storage,
        ),
        (
            E::SchemaMismatch {
                path: path(),
                column: s("a"),
                found: s("utf8"),
                expected: s("int"),
            },
            SchemaViolation,
        ),
        (
            E::RowCountMismatch {
                path: path(),
                expected: 1,
                actual: 2,
            },
            CorruptData,
        ),
        (
            E::Arrow {
                context: "assembling a batch",
                path: path(),
                source: Box::new(ArrowError::MemoryError(s("x"))),
            },
            Internal,
        ),
        (
            E::InvalidTask {
                path: path(),
                reason: s("x"),
            },
            CorruptData,
        ),
        (E::Spec { reason: s("x") }, InvalidArgument),
        (
            E::SpecFormat {
                found: 9,
                producer: s("dar 9"),
                supported: 1,
            },
            ProtocolUnsupported,
        ),
        (
            E::TableOption {
                source: TableOptionError::VersionAndTimestamp,
            },
            InvalidArgument,
        ),
    ]
}

#[test]
fn every_variant_has_its_kind() {
    let path = || s("t/part-0.parquet");
    let mut cases = scan_errors();
    // The same dar-io errors opening the table and reading a data file.
    for ((open, kind), (read, _)) in io_errors().into_iter().zip(io_errors()) {
        cases.push((
            ScanError::Open {
                uri: s("t"),
                source: Box::new(open),
            },
            kind,
        ));
        cases.push((
            ScanError::Io {
                path: path(),
                source: Box::new(read),
            },
            kind,
        ));
    }
    for (e, kind) in log_errors() {
        cases.push((
            ScanError::Log {
                uri: s("t"),
                source: Box::new(e),
            },
            kind,
        ));
    }
    for (e, kind) in dv_errors() {
        cases.push((
            ScanError::DeletionVector {
                path: path(),
                source: Box::new(e),
            },
            kind,
        ));
    }
    for (e, kind) in prune_errors() {
        cases.push((
            ScanError::Predicate {
                source: Box::new(e),
            },
            kind,
        ));
    }
    cases.push((
        ScanError::Evaluate {
            path: path(),
            source: Box::new(PruneError::BatchMismatch {
                column: s("a"),
                message: s("x"),
            }),
        },
        ErrorKind::Internal,
    ));
    for (e, kind) in &cases {
        assert_eq!(e.kind(), *kind, "{e:?}");
    }
    // Every kind is reached by some variant.
    for kind in [
        ErrorKind::NotFound,
        ErrorKind::ProtocolUnsupported,
        ErrorKind::InvalidPredicate,
        ErrorKind::InvalidArgument,
        ErrorKind::Storage,
        ErrorKind::CorruptData,
        ErrorKind::SchemaViolation,
        ErrorKind::PathRefused,
        ErrorKind::Internal,
    ] {
        assert!(cases.iter().any(|(_, k)| *k == kind), "{kind:?}");
    }
}

#[test]
fn a_store_failure_below_a_decoder_is_storage() {
    let read_failed = ParquetError::External(Box::new(dar_io::Error::Parquet {
        path: s("t/x"),
        source: ParquetError::External(Box::new(dar_io::Error::Truncated {
            path: s("t/x"),
            range: 0..8,
            expected: 8,
            actual: 4,
        })),
    }));
    let e = ScanError::Parquet {
        path: s("t/x"),
        source: Box::new(read_failed),
    };
    assert_eq!(e.kind(), ErrorKind::Storage);
}
