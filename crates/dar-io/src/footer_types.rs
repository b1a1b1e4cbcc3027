//! The Thrift structures of a Parquet footer and page index as parquet-rs
//! reads them (parquet-format's `parquet.thrift`: every field parquet-rs
//! 59 reads by its id, and the format's other fields, whose declared type
//! is only checked). [`crate::thrift_walk`] holds each field of a known id
//! to its type here, so that it reads the bytes as parquet will.

use crate::thrift_walk::{Def, Ty};

use Ty::{Binary, Bool, Byte, Double, I16, I32, I64};

/// The struct `name` of fields `id: field type`.
macro_rules! def {
    ($name:literal { $($id:literal: $field:ident $ty:expr),* $(,)? }) => {
        Def {
            name: $name,
            fields: &[$(($id, stringify!($field), $ty)),*],
        }
    };
}

/// A struct type.
macro_rules! st {
    ($($def:tt)*) => {
        Ty::Struct(&def!($($def)*))
    };
}

/// The variants of `LogicalType`, `TimeUnit` and `ColumnOrder` that carry
/// nothing.
const EMPTY: Ty = st!("an empty variant" {});

const TIME_UNIT: Ty = st!("TimeUnit" { 1: MILLIS EMPTY, 2: MICROS EMPTY, 3: NANOS EMPTY });

/// `TimeType` and `TimestampType`.
const TIME: Ty = st!("TimeType" { 1: isAdjustedToUTC Bool, 2: unit TIME_UNIT });

const LOGICAL_TYPE: Ty = st!("LogicalType" {
    1: STRING EMPTY,
    2: MAP EMPTY,
    3: LIST EMPTY,
    4: ENUM EMPTY,
    5: DECIMAL st!("DecimalType" { 1: scale I32, 2: precision I32 }),
    6: DATE EMPTY,
    7: TIME TIME,
    8: TIMESTAMP TIME,
    10: INTEGER st!("IntType" { 1: bitWidth Byte, 2: isSigned Bool }),
    11: UNKNOWN EMPTY,
    12: JSON EMPTY,
    13: BSON EMPTY,
    14: UUID EMPTY,
    15: FLOAT16 EMPTY,
    16: VARIANT st!("VariantType" { 1: specification_version Byte }),
    17: GEOMETRY st!("GeometryType" { 1: crs Binary }),
    18: GEOGRAPHY st!("GeographyType" { 1: crs Binary, 2: algorithm I32 }),
});

/// `SchemaElement`.
pub(crate) const SCHEMA_ELEMENT: Def = def!("SchemaElement" {
    1: type_ I32,
    2: type_length I32,
    3: repetition_type I32,
    4: name Binary,
    5: num_children I32,
    6: converted_type I32,
    7: scale I32,
    8: precision I32,
    9: field_id I32,
    10: logicalType LOGICAL_TYPE,
});

/// `num_children` of [`SCHEMA_ELEMENT`].
pub(crate) const NUM_CHILDREN: i16 = 5;

const KEY_VALUE: Ty = st!("KeyValue" { 1: key Binary, 2: value Binary });

const STATISTICS: Ty = st!("Statistics" {
    1: max Binary,
    2: min Binary,
    3: null_count I64,
    4: distinct_count I64,
    5: max_value Binary,
    6: min_value Binary,
    7: is_max_value_exact Bool,
    8: is_min_value_exact Bool,
});

const SIZE_STATISTICS: Ty = st!("SizeStatistics" {
    1: unencoded_byte_array_data_bytes I64,
    2: repetition_level_histogram Ty::List(&I64),
    3: definition_level_histogram Ty::List(&I64),
});

const BOUNDING_BOX: Ty = st!("BoundingBox" {
    1: xmin Double,
    2: xmax Double,
    3: ymin Double,
    4: ymax Double,
    5: zmin Double,
    6: zmax Double,
    7: mmin Double,
    8: mmax Double,
});

const GEOSPATIAL_STATISTICS: Ty = st!("GeospatialStatistics" {
    1: bbox BOUNDING_BOX,
    2: geospatial_types Ty::List(&I32),
});

const PAGE_ENCODING_STATS: Ty = st!("PageEncodingStats" {
    1: page_type I32,
    2: encoding I32,
    3: count I32,
});

const COLUMN_META_DATA: Ty = st!("ColumnMetaData" {
    1: type_ I32,
    2: encodings Ty::List(&I32),
    3: path_in_schema Ty::List(&Binary),
    4: codec I32,
    5: num_values I64,
    6: total_uncompressed_size I64,
    7: total_compressed_size I64,
    8: key_value_metadata Ty::List(&KEY_VALUE),
    9: data_page_offset I64,
    10: index_page_offset I64,
    11: dictionary_page_offset I64,
    12: statistics STATISTICS,
    13: encoding_stats Ty::List(&PAGE_ENCODING_STATS),
    14: bloom_filter_offset I64,
    15: bloom_filter_length I32,
    16: size_statistics SIZE_STATISTICS,
    17: geospatial_statistics GEOSPATIAL_STATISTICS,
});

const COLUMN_CRYPTO_META_DATA: Ty = st!("ColumnCryptoMetaData" {
    1: ENCRYPTION_WITH_FOOTER_KEY EMPTY,
    2: ENCRYPTION_WITH_COLUMN_KEY st!("EncryptionWithColumnKey" {
        1: path_in_schema Ty::List(&Binary),
        2: key_metadata Binary,
    }),
});

const COLUMN_CHUNK: Ty = st!("ColumnChunk" {
    1: file_path Binary,
    2: file_offset I64,
    3: meta_data COLUMN_META_DATA,
    4: offset_index_offset I64,
    5: offset_index_length I32,
    6: column_index_offset I64,
    7: column_index_length I32,
    8: crypto_metadata COLUMN_CRYPTO_META_DATA,
    9: encrypted_column_metadata Binary,
});

const SORTING_COLUMN: Ty = st!("SortingColumn" {
    1: column_idx I32,
    2: descending Bool,
    3: nulls_first Bool,
});

const ROW_GROUP: Ty = st!("RowGroup" {
    1: columns Ty::List(&COLUMN_CHUNK),
    2: total_byte_size I64,
    3: num_rows I64,
    4: sorting_columns Ty::List(&SORTING_COLUMN),
    5: file_offset I64,
    6: total_compressed_size I64,
    7: ordinal I16,
});

/// `AesGcmV1` and `AesGcmCtrV1`.
const AES: Ty = st!("AesGcmV1" {
    1: aad_prefix Binary,
    2: aad_file_unique Binary,
    3: supply_aad_prefix Bool,
});

/// `FileMetaData`, the footer.
pub(crate) const FILE_META_DATA: Def = def!("FileMetaData" {
    1: version I32,
    2: schema Ty::List(&Ty::Struct(&SCHEMA_ELEMENT)),
    3: num_rows I64,
    4: row_groups Ty::List(&ROW_GROUP),
    5: key_value_metadata Ty::List(&KEY_VALUE),
    6: created_by Binary,
    7: column_orders Ty::List(&st!("ColumnOrder" { 1: TYPE_ORDER EMPTY })),
    8: encryption_algorithm st!("EncryptionAlgorithm" { 1: AES_GCM_V1 AES, 2: AES_GCM_CTR_V1 AES }),
    9: footer_signing_key_metadata Binary,
});

/// `ColumnIndex`.
pub(crate) const COLUMN_INDEX: Def = def!("ColumnIndex" {
    1: null_pages Ty::List(&Bool),
    2: min_values Ty::List(&Binary),
    3: max_values Ty::List(&Binary),
    4: boundary_order I32,
    5: null_counts Ty::List(&I64),
    6: repetition_level_histograms Ty::List(&I64),
    7: definition_level_histograms Ty::List(&I64),
});

/// `OffsetIndex`.
pub(crate) const OFFSET_INDEX: Def = def!("OffsetIndex" {
    1: page_locations Ty::List(&st!("PageLocation" {
        1: offset I64,
        2: compressed_page_size I32,
        3: first_row_index I64,
    })),
    2: unencoded_byte_array_data_bytes Ty::List(&I64),
});
