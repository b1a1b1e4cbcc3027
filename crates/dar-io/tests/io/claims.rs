//! Issue 33, item 8: lengths a footer or page index claims size no
//! allocation. Every claim of [`CLAIMS`] at 2^31-1 is an error naming the
//! claim, by every path `ParquetReader` reads metadata (the whole object,
//! the tail, a cached footer gaining its page index); and lengths, counts
//! and bytes of valid files mutated at random are read or refused, never
//! an abort. parquet sized vectors by such claims and the process died of
//! SIGABRT: each test runs in a child process bounded to 8 GiB, so that
//! an abort fails the test (on any machine) and not the test binary.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, ListArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field};
use dar_io::{Error, MetadataCache, ParquetReader};
use dar_testkit::child::isolated;
use dar_testkit::claims::{
    CLAIM_MAX, CLAIMS, Region, base_file, disguised_row_groups, plant_at, sites, with_claim,
};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::properties::WriterProperties;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// How the reader gets at the metadata.
#[derive(Debug, Clone, Copy)]
enum Route {
    /// The whole object in one read.
    Whole,
    /// The tail (a short hint: the footer takes a second read).
    Tail,
    /// The footer first, cached; then the page index added to it.
    Cached,
}

const ROUTES: [Route; 3] = [Route::Whole, Route::Tail, Route::Cached];

/// The file's metadata through `path`, with the page index when
/// `page_index`.
async fn load(bytes: &[u8], path: Route, page_index: bool) -> Result<(), Error> {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let at = Path::from("t/part-0.parquet");
    store.put(&at, bytes.to_vec().into()).await.unwrap();
    let mut r = ParquetReader::new(store, at).with_size(Some(bytes.len() as u64));
    r = match path {
        Route::Whole => r.with_whole_object_threshold(u64::MAX),
        Route::Tail => r.with_whole_object_threshold(0).with_footer_hint(16),
        Route::Cached => r.with_cache(Some(MetadataCache::new(1 << 20))),
    };
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    if matches!(path, Route::Cached) {
        r.load_metadata(None).await?;
    }
    r.load_metadata(page_index.then_some(&options)).await?;
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

#[test]
fn every_claim_is_an_error_on_every_path() {
    if let Some(outcome) = isolated(module_path!(), "every_claim_is_an_error_on_every_path") {
        return outcome.unwrap();
    }
    let base = base_file().unwrap();
    runtime().block_on(async {
        for claim in CLAIMS {
            let hostile = with_claim(&base, claim, CLAIM_MAX).unwrap();
            for path in ROUTES {
                let context = format!("{} by {path:?}", claim.name);
                // The footer alone: page index claims are not read.
                let footer = load(&hostile, path, false).await;
                if claim.region.is_page_index() {
                    footer.unwrap();
                } else {
                    let err = footer.unwrap_err();
                    assert!(matches!(err, Error::Parquet { .. }), "{context}: {err}");
                    assert!(err.to_string().contains("claims"), "{context}: {err}");
                }
                let err = load(&hostile, path, true).await.unwrap_err();
                let text = err.to_string();
                assert!(
                    text.contains("part-0.parquet") && text.contains("claims"),
                    "{context}: {text}"
                );
            }
        }
        // A row-group list whose field header says boolean: parquet reads
        // field 4 as a list whatever the header says.
        let disguised = disguised_row_groups(&base).unwrap();
        for path in ROUTES {
            let err = load(&disguised, path, false).await.unwrap_err();
            assert!(
                err.to_string().contains("field 4 of FileMetaData"),
                "{path:?}: {err}"
            );
        }
    });
}

/// An object shorter than the 8-byte trailer, read whole or by its tail:
/// an error naming it (the tail read's hint was clamped to [8, size] and
/// panicked below 8 bytes, found by the `footer_scan` fuzz target once it
/// stopped hiding panics).
#[test]
fn an_object_shorter_than_a_trailer_is_an_error() {
    runtime().block_on(async {
        for len in 0..8 {
            for path in ROUTES {
                let err = load(&b"PAR1PAR1"[..len], path, true).await.unwrap_err();
                assert!(
                    err.to_string().contains("part-0.parquet"),
                    "{len} bytes by {path:?}: {err}"
                );
            }
        }
    });
}

/// A file with nested columns (a struct, a list), two row groups and the
/// page index: more lists, counts and nesting to mutate than the base.
fn nested_file() -> Vec<u8> {
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3), Some(4)]));
    let names: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c", "d"]));
    let st = StructArray::from(vec![
        (
            Arc::new(Field::new("i", DataType::Int32, true)),
            ints.clone(),
        ),
        (Arc::new(Field::new("n", DataType::Utf8, false)), names),
    ]);
    let list = ListArray::from_iter_primitive::<arrow_array::types::Int32Type, _, _>(vec![
        Some(vec![Some(1), Some(2)]),
        None,
        Some(vec![]),
        Some(vec![None]),
    ]);
    let batch = RecordBatch::try_from_iter([
        ("st", Arc::new(st) as ArrayRef),
        ("l", Arc::new(list) as ArrayRef),
        ("x", ints),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// Every region of `file`: the footer and each chunk's page indexes.
fn regions(file: &[u8]) -> Vec<Region> {
    let mut out = vec![Region::Footer];
    for row_group in 0..4 {
        for column in 0..4 {
            for r in [
                Region::ColumnIndex { row_group, column },
                Region::OffsetIndex { row_group, column },
            ] {
                if sites(file, r).is_ok() {
                    out.push(r);
                }
            }
        }
    }
    out
}

/// A claimed length: near the real one, or anywhere up to u64::MAX.
fn claimed() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..64,
        Just(CLAIM_MAX),
        Just(u64::from(u32::MAX)),
        any::<u32>().prop_map(u64::from),
        any::<u64>(),
    ]
}

/// Every list, set, map, binary and integer of the footer and page
/// indexes of valid files, set to a random length, and random bytes of
/// the footer overwritten: the metadata reads or is refused, on every
/// path, never aborting (a child process bounded to 8 GiB; parquet's
/// aborts were allocations of 16 to 200 GB).
#[test]
fn mutated_lengths_are_read_or_refused() {
    if let Some(outcome) = isolated(module_path!(), "mutated_lengths_are_read_or_refused") {
        return outcome.unwrap();
    }
    let files = [base_file().unwrap(), nested_file()];
    let mut cases = Vec::new();
    for (f, file) in files.iter().enumerate() {
        for region in regions(file) {
            for path in sites(file, region).unwrap() {
                cases.push((f, region, path));
            }
        }
    }
    assert!(cases.len() > 200, "{} sites", cases.len());
    let rt = runtime();
    let mut runner = TestRunner::new(Config {
        cases: 512,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..cases.len(), claimed(), any::<bool>());
    runner
        .run(&strategy, |(case, n, page_index)| {
            let (f, region, path) = &cases[case];
            let hostile = plant_at(&files[*f], *region, path, n).unwrap();
            rt.block_on(async {
                for p in ROUTES {
                    let _ = load(&hostile, p, page_index).await;
                }
            });
            Ok(())
        })
        .unwrap();
    // Random bytes of the footer overwritten.
    let strategy = (
        0..files.len(),
        any::<prop::sample::Index>(),
        any::<[u8; 4]>(),
        1usize..5,
    );
    runner
        .run(&strategy, |(f, at, bytes, n)| {
            let mut file = files[f].clone();
            let len = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap());
            let start = file.len() - 8 - len as usize;
            let i = start + at.index(len as usize);
            let end = file.len() - 8;
            for (k, b) in bytes.iter().take(n).enumerate() {
                if i + k < end {
                    file[i + k] = *b;
                }
            }
            rt.block_on(async {
                for p in ROUTES {
                    let _ = load(&file, p, true).await;
                }
            });
            Ok(())
        })
        .unwrap();
}
