//! Writing one data file: a physical batch to Parquet bytes with the chosen
//! layout (row-group and page sizes, page index, codec, dictionary).

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};

use crate::error::{Result, TestkitError};

/// The compression codec of data files (and the name suffix Spark gives them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Codec {
    /// No compression (`part-....c000.parquet`).
    Uncompressed,
    /// Snappy, Spark's default (`.snappy.parquet`).
    #[default]
    Snappy,
    /// Zstandard at level 3 (`.zstd.parquet`).
    Zstd,
    /// Gzip at the default level (`.gz.parquet`).
    Gzip,
    /// LZ4 raw (`.lz4raw.parquet`).
    Lz4Raw,
}

impl Codec {
    /// The suffix before `.parquet` in Spark's file names ("" for none).
    pub fn file_suffix(self) -> &'static str {
        match self {
            Codec::Uncompressed => "",
            Codec::Snappy => "snappy",
            Codec::Zstd => "zstd",
            Codec::Gzip => "gz",
            Codec::Lz4Raw => "lz4raw",
        }
    }

    fn compression(self) -> Compression {
        match self {
            Codec::Uncompressed => Compression::UNCOMPRESSED,
            Codec::Snappy => Compression::SNAPPY,
            Codec::Zstd => Compression::ZSTD(ZstdLevel::default()),
            Codec::Gzip => Compression::GZIP(GzipLevel::default()),
            Codec::Lz4Raw => Compression::LZ4_RAW,
        }
    }
}

/// How data files are laid out. Defaults follow parquet-rs (1 Mi rows per
/// row group, 20,000 rows or 1 MiB per page), with the page index on,
/// Snappy, dictionaries on, data page v1.
///
/// ```
/// use dar_testkit::{Codec, ParquetOptions};
/// // Small row groups and pages so that row-group and page pruning have work.
/// let layout = ParquetOptions::default()
///     .with_row_group_rows(100)
///     .with_page_rows(10)
///     .with_codec(Codec::Zstd);
/// assert_eq!(layout.row_group_rows(), 100);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ParquetOptions {
    row_group_rows: usize,
    page_rows: usize,
    page_bytes: usize,
    page_index: bool,
    codec: Codec,
    dictionary: bool,
    data_page_v2: bool,
}

impl Default for ParquetOptions {
    fn default() -> Self {
        Self {
            row_group_rows: 1024 * 1024,
            page_rows: 20_000,
            page_bytes: 1024 * 1024,
            page_index: true,
            codec: Codec::Snappy,
            dictionary: true,
            data_page_v2: false,
        }
    }
}

impl ParquetOptions {
    /// Maximum rows per row group (at least 1).
    pub fn with_row_group_rows(mut self, rows: usize) -> Self {
        self.row_group_rows = rows.max(1);
        self
    }

    /// Maximum rows per data page (at least 1). Enforced exactly: the
    /// writer's batch size is lowered to match.
    pub fn with_page_rows(mut self, rows: usize) -> Self {
        self.page_rows = rows.max(1);
        self
    }

    /// Best-effort maximum bytes per data page.
    pub fn with_page_bytes(mut self, bytes: usize) -> Self {
        self.page_bytes = bytes.max(1);
        self
    }

    /// Page index on (statistics level `Page`: column and offset index) or
    /// off (chunk statistics only, no column index).
    pub fn with_page_index(mut self, on: bool) -> Self {
        self.page_index = on;
        self
    }

    /// The compression codec.
    pub fn with_codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// Dictionary encoding on or off.
    pub fn with_dictionary(mut self, on: bool) -> Self {
        self.dictionary = on;
        self
    }

    /// Data page v2 instead of v1.
    pub fn with_data_page_v2(mut self, on: bool) -> Self {
        self.data_page_v2 = on;
        self
    }

    /// Maximum rows per row group.
    pub fn row_group_rows(&self) -> usize {
        self.row_group_rows
    }

    /// Maximum rows per data page.
    pub fn page_rows(&self) -> usize {
        self.page_rows
    }

    /// Whether the page index is written.
    pub fn page_index(&self) -> bool {
        self.page_index
    }

    /// The codec.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    fn properties(&self) -> WriterProperties {
        let statistics = if self.page_index {
            EnabledStatistics::Page
        } else {
            EnabledStatistics::Chunk
        };
        let version = if self.data_page_v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        };
        WriterProperties::builder()
            .set_writer_version(version)
            .set_max_row_group_row_count(Some(self.row_group_rows))
            .set_data_page_row_count_limit(self.page_rows)
            // The row limit is checked between write batches.
            .set_write_batch_size(self.page_rows.min(1024))
            .set_data_page_size_limit(self.page_bytes)
            .set_statistics_enabled(statistics)
            .set_compression(self.codec.compression())
            .set_dictionary_enabled(self.dictionary)
            .build()
    }
}

/// Encodes `batch` (physical names, field ids in metadata) as one Parquet
/// file. No `ARROW:schema` metadata is embedded, as with Spark's files, so
/// readers must get types from the Parquet schema alone. `name` is for errors.
pub(crate) fn write_file(
    batches: &[RecordBatch],
    options: &ParquetOptions,
    name: &str,
) -> Result<Vec<u8>> {
    let err = |source| TestkitError::Parquet {
        path: name.to_owned(),
        source,
    };
    let writer_options = ArrowWriterOptions::new()
        .with_properties(options.properties())
        .with_skip_arrow_metadata(true);
    let schema =
        batches
            .first()
            .map(RecordBatch::schema)
            .ok_or_else(|| TestkitError::SchemaMismatch {
                reason: format!("{name}: no batch to write"),
            })?;
    let mut writer =
        ArrowWriter::try_new_with_options(Vec::new(), schema, writer_options).map_err(err)?;
    for batch in batches {
        writer.write(batch).map_err(err)?;
    }
    writer.into_inner().map_err(err)
}
