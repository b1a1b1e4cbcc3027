//! The Parquet reader over local disk: results and exact access patterns.

use dar_io::{Error, ObjectClass, ParquetReader, StorageOptions, TableStore};
use object_store::ObjectStoreExt;

use crate::common::*;

struct Fixture {
    _dir: tempfile::TempDir,
    table: TableStore,
    size: u64,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let data = parquet_file();
    std::fs::write(dir.path().join("part-0.parquet"), &data).unwrap();
    let table = TableStore::open(dir.path().to_str().unwrap(), StorageOptions::new()).unwrap();
    Fixture {
        _dir: dir,
        table,
        size: data.len() as u64,
    }
}

fn reader(f: &Fixture) -> ParquetReader {
    f.table
        .parquet_reader(f.table.child("part-0.parquet"), Some(f.size))
}

#[tokio::test]
async fn full_scan_reads_footer_once_and_caches_it() {
    let f = fixture();
    assert!(
        f.size > 100_000,
        "fixture should be larger than the footer hint"
    );
    let got = scan(reader(&f), None).await.unwrap();
    assert_eq!(got, full_result());
    let s = f.table.metrics().snapshot();
    // Footer and page indexes in one request (64 KiB hint, size known).
    assert_eq!(s.class(ObjectClass::Footer).requests, 1);
    assert!(s.class(ObjectClass::PageData).requests >= 1);
    assert!(s.class(ObjectClass::PageData).bytes <= f.size);

    // A second scan of the same file: the footer comes from the cache.
    let got = scan(reader(&f), None).await.unwrap();
    assert_eq!(got, full_result());
    let s2 = f.table.metrics().snapshot().since(&s);
    assert_eq!(s2.class(ObjectClass::Footer).requests, 0);
    let c = f.table.metadata_cache().stats();
    assert_eq!((c.hits, c.misses, c.entries), (1, 1, 1));
}

#[tokio::test]
async fn selected_pages_read_fewer_bytes() {
    let f = fixture();
    let (sel, want) = selection();
    let got = scan(reader(&f), Some(sel)).await.unwrap();
    assert_eq!(got, want);
    let s = f.table.metrics().snapshot();
    // Two pages of ten per column chunk are needed; local cost params merge
    // gaps up to ~1 MiB, but never beyond each row group's column chunks.
    assert!(s.class(ObjectClass::PageData).bytes < f.size, "{s}");
}

#[tokio::test]
async fn small_footer_hint_costs_exactly_one_more_request() {
    let f = fixture();
    // 8-byte hint, no page index: tail (8 B) then the footer itself.
    let mut r = reader(&f).with_footer_hint(8).with_cache(None);
    r.load_metadata(None).await.unwrap();
    let s = f.table.metrics().snapshot();
    assert_eq!(s.class(ObjectClass::Footer).requests, 2);
    assert_eq!(s.requests(), 2);
    // Large enough hint: one request.
    let mut r = reader(&f).with_cache(None);
    r.load_metadata(None).await.unwrap();
    let s2 = f.table.metrics().snapshot().since(&s);
    assert_eq!(s2.class(ObjectClass::Footer).requests, 1);
    assert_eq!(s2.class(ObjectClass::Footer).bytes, 64 * 1024);
}

#[tokio::test]
async fn unknown_size_costs_one_head() {
    let f = fixture();
    scan(reader(&f).with_cache(None), None).await.unwrap();
    let known = f.table.metrics().snapshot();
    let r = f
        .table
        .parquet_reader(f.table.child("part-0.parquet"), None)
        .with_cache(None);
    scan(r, None).await.unwrap();
    let unknown = f.table.metrics().snapshot().since(&known);
    assert_eq!(unknown.requests(), known.requests() + 1);
    assert_eq!(unknown.class(ObjectClass::Footer).requests, 1);
}

#[tokio::test]
async fn small_file_is_read_whole_in_one_request() {
    let f = fixture();
    let r = reader(&f).with_whole_object_threshold(f.size);
    let got = scan(r, None).await.unwrap();
    assert_eq!(got, full_result());
    let s = f.table.metrics().snapshot();
    assert_eq!(s.requests(), 1);
    assert_eq!(s.class(ObjectClass::Footer).bytes, f.size);
    assert_eq!(s.class(ObjectClass::PageData).requests, 0);
}

#[tokio::test]
async fn page_index_added_to_a_cached_footer_without_one() {
    let f = fixture();
    let mut r = reader(&f).with_footer_hint(8);
    let md = r.load_metadata(None).await.unwrap();
    assert!(md.offset_index().is_none());
    let opts = parquet::arrow::arrow_reader::ArrowReaderOptions::new()
        .with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
    let mut r = reader(&f);
    let md = r.load_metadata(Some(&opts)).await.unwrap();
    assert!(md.offset_index().is_some());
    assert!(md.column_index().is_some());
    // And now the cached entry has it: no request at all.
    let before = f.table.metrics().snapshot();
    let mut r = reader(&f);
    let md = r.load_metadata(Some(&opts)).await.unwrap();
    assert!(md.offset_index().is_some());
    assert_eq!(f.table.metrics().snapshot().since(&before).requests(), 0);
}

#[tokio::test]
async fn corrupt_file_is_an_error_naming_it() {
    let f = fixture();
    let bad = f.table.child("bad.parquet");
    f.table
        .store()
        .put(&bad, vec![0u8; 5000].into())
        .await
        .unwrap();
    let err = scan(f.table.parquet_reader(bad, Some(5000)), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bad.parquet"), "{err}");
}

#[tokio::test]
async fn wrong_size_and_bad_ranges_are_errors() {
    let f = fixture();
    // The caller claims a larger object than exists.
    let r = f
        .table
        .parquet_reader(f.table.child("part-0.parquet"), Some(f.size + 10));
    let err = scan(r, None).await.unwrap_err();
    assert!(err.to_string().contains("part-0.parquet"), "{err}");

    let mut r = reader(&f);
    let err = r
        .read_ranges(vec![f.size - 1..f.size + 1])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidRange { .. }), "{err}");
    assert!(err.to_string().contains("part-0.parquet"), "{err}");

    let missing = f
        .table
        .parquet_reader(f.table.child("missing.parquet"), None);
    let err = scan(missing, None).await.unwrap_err();
    assert!(err.to_string().contains("missing.parquet"), "{err}");
}
