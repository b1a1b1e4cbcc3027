//! The I/O shape of a scan, asserted from the requests it makes, never from
//! time: a selective scan over S3 (dar-io's in-process server) reads each
//! file's footer and page index in one request and a shared DV file once,
//! and fetches no gap beyond the planner's byte cap; a full scan on a
//! 2-thread runtime reads and decodes two files on two threads at once.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_io::testing::{Fault, FaultStore, S3Server};
use dar_io::{CostParams, ObjectClass, TableStore};
use dar_scan::{Table, TableOptions};
use dar_testkit::{Codec, DvStorage, ParquetOptions, TableWriter};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

use crate::common::{a_where, collect, int64s, table_over};

pub(crate) const FILES: i64 = 4;
pub(crate) const ROWS: i64 = 16_000;
const ROW_GROUP: usize = 4_000;
const PAGE: usize = 400;
const VALUE_COLUMNS: usize = 10;

/// `k` (row within its file, 0..ROWS), `id` (unique) and ten columns of
/// incompressible values: 1.5 MB per file, above the whole-object size.
pub(crate) fn wide_schema() -> Arc<Schema> {
    let mut fields = vec![
        Field::new("k", DataType::Int64, false),
        Field::new("id", DataType::Int64, false),
    ];
    fields.extend((0..VALUE_COLUMNS).map(|c| Field::new(format!("v{c}"), DataType::Int64, true)));
    Arc::new(Schema::new(fields))
}

pub(crate) fn wide_batch(schema: &Arc<Schema>, file: i64) -> RecordBatch {
    let mut columns: Vec<Arc<dyn Array>> = vec![
        Arc::new(Int64Array::from_iter_values(0..ROWS)),
        Arc::new(Int64Array::from_iter_values(
            (0..ROWS).map(|k| file * ROWS + k),
        )),
    ];
    for c in 0..VALUE_COLUMNS as i64 {
        columns.push(Arc::new(Int64Array::from_iter_values((0..ROWS).map(|k| {
            ((file * ROWS + k) * 31 + c).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64)
        }))));
    }
    RecordBatch::try_new(Arc::clone(schema), columns).unwrap()
}

pub(crate) fn wide_options() -> ParquetOptions {
    ParquetOptions::default()
        .with_row_group_rows(ROW_GROUP)
        .with_page_rows(PAGE)
        .with_page_index(true)
        .with_dictionary(false)
        .with_codec(Codec::Uncompressed)
}

/// Bytes of the pages of `columns` that hold rows `first..=last` of row
/// group `rg` in the file at `path`.
fn page_bytes(path: &std::path::Path, columns: &[usize], rg: usize, first: i64, last: i64) -> u64 {
    let file = std::fs::File::open(path).unwrap();
    let md = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&file)
        .unwrap();
    let rows = md.row_group(rg).num_rows();
    let offsets = &md.offset_index().unwrap()[rg];
    columns
        .iter()
        .map(|c| {
            let column = &offsets[*c];
            let pages = column.page_locations();
            pages
                .iter()
                .enumerate()
                .filter(|(i, p)| {
                    let end = pages.get(i + 1).map_or(rows, |n| n.first_row_index);
                    p.first_row_index <= last && end > first
                })
                .map(|(_, p)| p.compressed_page_size as u64)
                .sum::<u64>()
        })
        .sum()
}

/// The wide table under `dir/t`: [`FILES`] files, one DV file holding a DV
/// (row 5) for each of them; its writer and the files' paths.
pub(crate) async fn write_wide_dv_table(dir: &std::path::Path) -> (TableWriter, Vec<String>) {
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let schema = wide_schema();
    let mut w = TableWriter::builder(local, Path::from("t"), Arc::clone(&schema))
        .with_parquet_options(wide_options())
        .with_deletion_vectors(true)
        .create()
        .await
        .unwrap();
    let mut files = Vec::new();
    for f in 0..FILES {
        let commit = w.append(&wide_batch(&schema, f)).await.unwrap();
        files.push(commit.added[0].path.clone());
    }
    let deletes: Vec<(&str, &[u64])> = files.iter().map(|p| (p.as_str(), &[5u64][..])).collect();
    w.delete_rows_in(&deletes, DvStorage::File).await.unwrap();
    (w, files)
}

/// A writer of `x: Int64` tables in `memory` (uncompressed, plain; row
/// groups of `rows_per_group` when given; DVs when `dvs`).
async fn x_writer(memory: &Arc<InMemory>, rows_per_group: Option<usize>, dvs: bool) -> TableWriter {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let mut options = ParquetOptions::default()
        .with_codec(Codec::Uncompressed)
        .with_dictionary(false);
    if let Some(rows) = rows_per_group {
        options = options.with_row_group_rows(rows);
    }
    TableWriter::builder(
        Arc::clone(memory) as Arc<dyn ObjectStore>,
        Path::from("t"),
        schema,
    )
    .with_parquet_options(options)
    .with_deletion_vectors(dvs)
    .create()
    .await
    .unwrap()
}

/// `x` values `range` as one batch.
fn x_batch(range: std::ops::Range<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from_iter_values(range))]).unwrap()
}

/// The table in `store` (a `memory://` store over it).
async fn memory_table(store: Arc<dyn ObjectStore>) -> Table {
    table_over("memory://t", store).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selective_scan_over_s3_takes_the_planned_requests() {
    // The table: 4 files, one DV file holding a DV for each of them.
    let dir = tempfile::tempdir().unwrap();
    let (_, files) = write_wide_dv_table(dir.path()).await;

    let server = S3Server::start().await.unwrap();
    server.create_bucket("shape").await.unwrap();
    server
        .upload_dir(&dir.path().join("t"), "shape", "t")
        .unwrap();
    // A link that requests share (150 Mbit/s, 200 ms per request): the
    // bandwidth-bound regime, where a fetched gap is never free.
    let params = CostParams::remote()
        .with_request_latency(Duration::from_millis(200))
        .with_bandwidth(18.75e6 / 16.0)
        .with_aggregate_bandwidth(Some(18.75e6))
        .with_max_concurrency(64);
    let store = TableStore::builder("s3://shape/t")
        .with_env(Vec::new())
        .with_options(server.storage_options())
        .with_cost_params(params.clone())
        .build()
        .unwrap();
    let cost = std::sync::Arc::clone(store.cost_model());
    let t = Table::from_store(store, TableOptions::new()).await.unwrap();

    // Rows 4,410..=4,420 of every file: row group 1, page 10 of each.
    let (first, last) = (4_410, 4_420);
    let plan = t
        .scan()
        .with_columns(["id", "v0", "v9"])
        .with_predicate_sql(format!("k BETWEEN {first} AND {last}"))
        .build()
        .unwrap();
    let batches = collect(&plan).await;
    let mut ids = int64s(&batches, 0);
    ids.sort_unstable();
    let expected: Vec<i64> = (0..FILES)
        .flat_map(|f| (first..=last).map(move |k| f * ROWS + k))
        .collect();
    assert_eq!(ids, expected);

    let m = plan.metrics().snapshot();
    assert_eq!(m.files_read, FILES as u64, "{m:?}");
    // Footer and page index together: one request per file.
    let footers = m.io.class(ObjectClass::Footer);
    assert_eq!(footers.requests, FILES as u64, "{m:?}");
    // One DV file for the four files' DVs: one request.
    assert_eq!(m.io.class(ObjectClass::DeletionVector).requests, 1, "{m:?}");
    // Only the pages holding the rows, of the two projected columns, the
    // predicate column and `id`: no gap beyond the planner's byte cap,
    // but for gaps cheaper than a request where the model learned that
    // the server answers one request at a time (the server runs on this
    // test's two threads, and may): at most one such gap a needed page.
    let columns = [0, 1, 2, 2 + VALUE_COLUMNS - 1];
    let needed: u64 = files
        .iter()
        .map(|p| {
            let path = dir.path().join("t").join(p);
            page_bytes(&path, &columns, 1, first - 4_000, last - 4_000)
        })
        .sum();
    let data = m.io.class(ObjectClass::PageData);
    let free = cost.params().free_gap_bytes() * (FILES as u64) * columns.len() as u64;
    assert!(
        data.bytes as f64 <= needed as f64 * params.max_amplification + free as f64,
        "fetched {} page bytes for {needed} needed ({free} in cheap gaps): {m:?}",
        data.bytes
    );
    assert!(data.bytes >= needed, "{} < {needed}", data.bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_scan_decodes_two_files_at_once_on_two_threads() {
    let memory = Arc::new(InMemory::new());
    let mut w = x_writer(&memory, None, false).await;
    // 160 KB per file: more than the footer read, so pages are fetched.
    const N: i64 = 20_000;
    let mut added = Vec::new();
    for f in 0..4i64 {
        added.push(
            w.append(&x_batch(f * N..f * N + N)).await.unwrap().added[0]
                .path
                .clone(),
        );
    }
    // Page reads of two files must block two threads at the same time to
    // go on: on one thread the first would wait alone until the timeout.
    let gate = Arc::new(
        FaultStore::new(Arc::clone(&memory)).with_page_rendezvous(2, Duration::from_secs(20)),
    );
    let t = memory_table(Arc::clone(&gate) as Arc<dyn ObjectStore>).await;
    let plan = t.scan().with_columns(["x"]).build().unwrap();
    let batches = collect(&plan).await;
    assert!(
        gate.rendezvous_met(),
        "two files' pages were never read at the same time on two threads"
    );
    // Still in plan order.
    let expected: Vec<i64> = plan
        .tasks()
        .iter()
        .map(|t| added.iter().position(|p| *p == t.log_path).unwrap() as i64)
        .flat_map(|f| f * N..f * N + N)
        .collect();
    let values = int64s(&batches, 0);
    assert_eq!(values.len(), expected.len());
    let first_difference = values.iter().zip(&expected).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "rows out of plan order");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_file_of_many_row_groups_decodes_on_two_threads_at_once() {
    let memory = Arc::new(InMemory::new());
    let mut w = x_writer(&memory, Some(20_000), true).await;
    // One file, 4 row groups of 160 KB: fewer files than threads.
    const N: i64 = 80_000;
    let file = w.append(&x_batch(0..N)).await.unwrap().added[0]
        .path
        .clone();
    // Page reads of two parts of the file must block two threads at the
    // same time to go on: decoded in one piece, the reads would come one
    // after the other and wait alone until the timeout.
    let gate = Arc::new(
        FaultStore::new(Arc::clone(&memory)).with_page_range_rendezvous(2, Duration::from_secs(20)),
    );
    let t = memory_table(Arc::clone(&gate) as Arc<dyn ObjectStore>).await;
    let plan = t.scan().with_columns(["x"]).build().unwrap();
    let batches = collect(&plan).await;
    assert!(
        gate.rendezvous_met(),
        "two parts of the file were never read at the same time on two threads"
    );
    // Every row, in file order.
    assert_eq!(int64s(&batches, 0), (0..N).collect::<Vec<_>>());

    // With deleted rows (on both sides of row-group bounds) and a
    // predicate: each part gets its share of the selection.
    let deleted = [5u64, 19_999, 20_000, 40_001, 60_000, 79_999];
    w.delete_rows_in(&[(file.as_str(), &deleted[..])], DvStorage::Inline)
        .await
        .unwrap();
    let t = memory_table(Arc::clone(&memory) as Arc<dyn ObjectStore>).await;
    let plan = t
        .scan()
        .with_columns(["x"])
        .with_predicate_sql("x >= 3 AND x < 79000")
        .build()
        .unwrap();
    let want: Vec<i64> = (3..79_000)
        .filter(|x| !deleted.contains(&(*x as u64)))
        .collect();
    assert_eq!(int64s(&collect(&plan).await, 0), want);
}

/// A local read's buffer goes back to the table's pool when the batches
/// made from it are dropped: the next scan of the same table reads into
/// it (no zeroing, no fresh pages), and its rows are the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_scan_reads_into_buffers_an_earlier_scan_handed_back() {
    let dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn ObjectStore> =
        Arc::new(LocalFileSystem::new_with_prefix(dir.path()).unwrap());
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
    let options = ParquetOptions::default()
        .with_codec(Codec::Uncompressed)
        .with_dictionary(false);
    let mut w = TableWriter::builder(local, Path::from("t"), Arc::clone(&schema))
        .with_parquet_options(options)
        .create()
        .await
        .unwrap();
    // Three files of 20,000 values: each read is 160 KB, above the
    // smallest pooled read.
    let rows = 20_000i64;
    for f in 0..3 {
        let x = Int64Array::from_iter_values(f * rows..(f + 1) * rows);
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(x)]).unwrap();
        w.append(&batch).await.unwrap();
    }
    let uri = dir.path().join("t").to_str().unwrap().to_string();
    let table = Table::open(&uri).await.unwrap();
    let scan = || async {
        let plan = table.scan().build().unwrap();
        let mut xs = int64s(&collect(&plan).await, 0);
        xs.sort_unstable();
        (xs, plan.metrics().snapshot().io)
    };
    let expected: Vec<i64> = (0..3 * rows).collect();
    let (first, _) = scan().await;
    assert_eq!(first, expected);
    let (second, io) = scan().await;
    assert_eq!(second, expected);
    assert!(io.local_buffers_reused >= 1, "{io:?}");
}

/// Every (file, row group) read of a local table: all its planned fetches
/// in one direct call (the file opened once), each still counted as a
/// request; the same rows as the same files through `LocalFileSystem`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_scan_reads_each_row_group_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let (_, files) = write_wide_dv_table(dir.path()).await;
    let uri = dir.path().join("t").to_str().unwrap().to_string();
    let scan = |t: Table| async move {
        let plan = t.scan().build().unwrap();
        let batches = collect(&plan).await;
        let mut ids = int64s(&batches, 1);
        ids.sort_unstable();
        (ids, plan.metrics().snapshot())
    };

    let (ids, m) = scan(Table::open(&uri).await.unwrap()).await;
    let expected: Vec<i64> = (0..FILES * ROWS).filter(|i| i % ROWS != 5).collect();
    assert_eq!(ids, expected);
    let groups = FILES as u64 * (ROWS as u64 / ROW_GROUP as u64);
    let requests = m.io.class(ObjectClass::PageData).requests;
    // One call per row group, and at most one more per file (its page
    // index) and one for the DV file.
    assert!(
        (groups..=groups + FILES as u64 + 1).contains(&m.io.local_reads),
        "{} direct reads for {groups} row groups: {m:?}",
        m.io.local_reads
    );
    assert!(requests >= groups, "{m:?}");
    assert_eq!(files.len() as u64, m.files_read);

    // A store the caller built is read through object_store as before.
    let store = TableStore::builder(&uri)
        .with_store(Arc::new(LocalFileSystem::new()))
        .build()
        .unwrap();
    let t = Table::from_store(store, TableOptions::new()).await.unwrap();
    let (through_store, m) = scan(t).await;
    assert_eq!(through_store, expected);
    assert_eq!(m.io.local_reads, 0, "{m:?}");
}

/// An `s3://` table whose objects come from `memory` (no S3 request)
/// through a store where every read takes 100 ms, so that reads issued
/// together overlap; the store, to count them.
async fn slow_remote_table(memory: &Arc<InMemory>) -> (Arc<FaultStore<Arc<InMemory>>>, Table) {
    let slow = Arc::new(
        FaultStore::new(Arc::clone(memory))
            .with_faults((0..64).map(|_| Fault::Slow(Duration::from_millis(100)))),
    );
    let store = TableStore::builder("s3://bucket/t")
        .with_env(Vec::new())
        .with_store(Arc::clone(&slow) as Arc<dyn ObjectStore>)
        .build()
        .unwrap();
    assert!(store.backend().is_remote());
    (
        slow,
        Table::from_store(store, TableOptions::new()).await.unwrap(),
    )
}

/// On object storage a file of a few row groups is read in parts, one a
/// row group here, their page reads in flight at once: one file's row
/// groups read one after another cost a round trip each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_files_row_groups_are_read_at_once() {
    let memory = Arc::new(InMemory::new());
    let mut w = x_writer(&memory, Some(40_000), false).await;
    // One file of 1.3 MB (read by ranges, not whole), 4 row groups: more
    // row groups than threads.
    const N: i64 = 160_000;
    w.append(&x_batch(0..N)).await.unwrap();
    let (slow, t) = slow_remote_table(&memory).await;
    let plan = t.scan().with_columns(["x"]).build().unwrap();
    let batches = collect(&plan).await;
    // Every row, in file order.
    assert_eq!(int64s(&batches, 0), (0..N).collect::<Vec<_>>());
    // The four row groups' reads in flight together: in one part per
    // thread, two at most.
    assert!(
        slow.max_pages_in_flight() >= 4,
        "{} page reads in flight at most",
        slow.max_pages_in_flight()
    );
}

/// On object storage the row filter's steps fetch their columns in one
/// round: conjuncts on `a` and on `b` (two steps) have both columns' pages
/// requested together, where locally `b`'s wait for `a`'s to be decoded.
/// The rows and the filter's counts are the same either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_row_filter_fetches_its_steps_columns_in_one_round() {
    let memory = Arc::new(InMemory::new());
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, false),
        Field::new("pad", DataType::Int64, false),
        Field::new("b", DataType::Int64, false),
    ]));
    let mut w = TableWriter::builder(
        Arc::clone(&memory) as Arc<dyn ObjectStore>,
        Path::from("t"),
        Arc::clone(&schema),
    )
    .with_parquet_options(
        ParquetOptions::default()
            .with_codec(Codec::Uncompressed)
            .with_dictionary(false)
            .with_page_rows(1000)
            .with_page_index(true),
    )
    .create()
    .await
    .unwrap();
    // One file of 4.8 MB: `pad` (1.6 MB of values) lies between `a` and
    // `b`, so their pages are never one request.
    const N: i64 = 200_000;
    let pad = (0..N).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(Int64Array::from_iter_values(0..N)),
            Arc::new(Int64Array::from_iter_values(pad)),
            Arc::new(Int64Array::from_iter_values(0..N)),
        ],
    )
    .unwrap();
    w.append(&batch).await.unwrap();
    let filter = "a >= 150500 AND a < 150510 AND b >= 150505";
    let want: Vec<i64> = (150_505..150_510).collect();

    let (slow, t) = slow_remote_table(&memory).await;
    let (rows, remote) = a_where(&t, filter).await;
    assert_eq!(rows, want);
    assert_eq!(
        slow.max_pages_in_flight(),
        2,
        "the steps' pages were fetched one round after the other: {remote:?}"
    );

    // Locally (memory:// is not remote), in steps: the same rows and
    // counts.
    let t = memory_table(Arc::clone(&memory) as Arc<dyn ObjectStore>).await;
    let (rows, local) = a_where(&t, filter).await;
    assert_eq!(rows, want);
    assert_eq!(local.rows_output, remote.rows_output);
    assert_eq!(
        local.rows_filtered + local.rows_skipped_by_pages,
        remote.rows_filtered + remote.rows_skipped_by_pages,
        "{local:?} {remote:?}"
    );
}
