//! Parquet layout: row groups, pages, page index, codecs and field ids are
//! what the options asked for.

use dar_testkit::{Codec, ColumnMappingMode, PARQUET_FIELD_ID_KEY, ParquetOptions, TableWriter};
use object_store::path::Path;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::basic::Compression;
use parquet::file::metadata::PageIndexPolicy;

use crate::*;

async fn write_one(options: ParquetOptions, mode: ColumnMappingMode) -> (Bytes, String) {
    let store = memory();
    let root = Path::from("layout");
    let mut table = TableWriter::builder(store.clone(), root.clone(), all_types_schema())
        .with_parquet_options(options)
        .with_column_mapping(mode)
        .create()
        .await
        .unwrap();
    let file = table
        .append(&all_types_batch(100, 0))
        .await
        .unwrap()
        .added
        .remove(0);
    let location = dar_log::file_index::resolve_path(&root, &file.path).unwrap();
    let bytes = read(&store, &location).await;
    assert_eq!(bytes.len() as u64, file.size);
    (bytes, file.path)
}

fn metadata(bytes: &Bytes) -> ArrowReaderMetadata {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    ArrowReaderMetadata::load(bytes, options).unwrap()
}

#[tokio::test]
async fn row_groups_pages_and_page_index() {
    let options = ParquetOptions::default()
        .with_row_group_rows(40)
        .with_page_rows(10)
        .with_dictionary(false);
    let (bytes, path) = write_one(options, ColumnMappingMode::None).await;
    assert!(path.ends_with(".c000.snappy.parquet"), "{path}");
    let meta = metadata(&bytes);
    let parquet = meta.metadata();
    let rows: Vec<i64> = parquet
        .row_groups()
        .iter()
        .map(|rg| rg.num_rows())
        .collect();
    assert_eq!(rows, [40, 40, 20]);
    let offsets = parquet.offset_index().expect("offset index");
    let pages: Vec<usize> = offsets
        .iter()
        .map(|rg| rg[0].page_locations().len())
        .collect();
    assert_eq!(pages, [4, 4, 2], "10-row pages of the first column");
    assert!(parquet.column_index().is_some(), "page index on");
    assert_eq!(
        parquet.row_group(0).column(0).compression(),
        Compression::SNAPPY
    );
    // No embedded Arrow schema: types come from the Parquet schema alone.
    let kv = parquet.file_metadata().key_value_metadata();
    assert!(kv.is_none_or(|kv| kv.iter().all(|e| e.key != "ARROW:schema")));
}

#[tokio::test]
async fn page_index_off_codec_and_field_ids() {
    let options = ParquetOptions::default()
        .with_page_index(false)
        .with_codec(Codec::Zstd)
        .with_data_page_v2(true);
    let (bytes, path) = write_one(options, ColumnMappingMode::Id).await;
    assert!(path.ends_with(".c000.zstd.parquet"), "{path}");
    let meta = metadata(&bytes);
    let parquet = meta.metadata();
    assert!(
        parquet
            .column_index()
            .is_none_or(|index| index.iter().flatten().all(|c| matches!(
                c,
                parquet::file::page_index::column_index::ColumnIndexMetaData::NONE
            )))
    );
    assert!(matches!(
        parquet.row_group(0).column(0).compression(),
        Compression::ZSTD(_)
    ));
    let id_field = &meta.schema().fields()[0];
    assert!(id_field.name().starts_with("col-"));
    assert_eq!(id_field.metadata()[PARQUET_FIELD_ID_KEY], "1");
    let root = parquet.file_metadata().schema_descr().root_schema();
    assert_eq!(root.get_fields()[0].get_basic_info().id(), 1);
}
