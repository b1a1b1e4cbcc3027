//! The crate's error type.

use arrow_schema::{ArrowError, DataType};

/// Shorthand for results of this crate.
pub type Result<T, E = TestkitError> = std::result::Result<T, E>;

/// Everything that can go wrong while writing a test table.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TestkitError {
    /// A column's Arrow type has no Delta equivalent that the kit writes.
    #[error("column `{column}`: Arrow type {data_type} is not supported by dar-testkit")]
    UnsupportedType {
        /// Dotted logical path of the column.
        column: String,
        /// Its Arrow type.
        data_type: DataType,
    },
    /// A partition column is missing from the schema or has a type that
    /// cannot be a partition column.
    #[error("partition column `{column}`: {reason}")]
    InvalidPartitionColumn {
        /// The logical column name.
        column: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// An appended batch does not have the table's schema.
    #[error("batch schema does not match the table schema: {reason}")]
    SchemaMismatch {
        /// The first difference found.
        reason: String,
    },
    /// An operation named a file that is not live in the table.
    #[error("`{path}` is not a live file of the table")]
    UnknownFile {
        /// The path as written in the log.
        path: String,
    },
    /// A deletion named a row index beyond the end of the file.
    #[error("`{path}`: row {row} is out of range (the file has {num_records} rows)")]
    RowOutOfRange {
        /// The data file.
        path: String,
        /// The offending row index.
        row: u64,
        /// Rows in the file.
        num_records: u64,
    },
    /// Writing a file of a hand-written table failed.
    #[error("cannot write `{path}`: {reason}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        reason: String,
    },
    /// `delete_rows` on a table created without deletion vectors.
    #[error("deletion vectors are not enabled on this table (use `with_deletion_vectors(true)`)")]
    DeletionVectorsDisabled,
    /// A file or directory name is not a valid object-store key segment
    /// (for example a partition value with a NUL character).
    #[error("`{name}` cannot be an object name: {reason}")]
    InvalidObjectName {
        /// The raw segment.
        name: String,
        /// Why object_store refused it.
        reason: String,
    },
    /// `snapshot_rows` on a writer built without `with_kept_rows(true)`.
    #[error("rows are not kept by this writer (use `with_kept_rows(true)`)")]
    RowsNotKept,
    /// An Arrow kernel failed.
    #[error("{context}: {source}")]
    Arrow {
        /// What was being done.
        context: String,
        /// The Arrow error.
        #[source]
        source: ArrowError,
    },
    /// Writing a Parquet file (data or checkpoint) failed.
    #[error("writing Parquet `{path}`: {source}")]
    Parquet {
        /// The file being written.
        path: String,
        /// The Parquet error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The object store failed.
    #[error("object store, `{path}`: {source}")]
    Store {
        /// The object being written or read.
        path: String,
        /// The store error.
        #[source]
        source: object_store::Error,
    },
    /// Encoding a deletion vector failed.
    #[error("deletion vector for `{path}`: {source}")]
    Dv {
        /// The data file the DV belongs to.
        path: String,
        /// The dar-dv error (boxed: it is large).
        #[source]
        source: Box<dar_dv::DvError>,
    },
    /// Bytes that should be Thrift (a Parquet footer or page index) are
    /// not, or a path into them names nothing.
    #[error("thrift: {reason}")]
    Thrift {
        /// What is wrong.
        reason: String,
    },
    /// A test run in a child process ([`crate::child::isolated`]) failed.
    #[error("test `{test}` in a child process: {reason}")]
    Child {
        /// The test.
        test: String,
        /// How it ended, and its output.
        reason: String,
    },
}

impl TestkitError {
    pub(crate) fn arrow(context: impl Into<String>) -> impl FnOnce(ArrowError) -> Self {
        let context = context.into();
        move |source| TestkitError::Arrow { context, source }
    }

    pub(crate) fn store(
        path: &object_store::path::Path,
    ) -> impl FnOnce(object_store::Error) -> Self {
        let path = path.to_string();
        move |source| TestkitError::Store { path, source }
    }
}
