//! Issue 33, item 8: lengths a Parquet footer or page index claims (2^31-1
//! row groups, schema children, page locations, and every other list,
//! binary and count of [`CLAIMS`]) size no allocation: each is an error
//! naming the file, in data files (local, and over S3 where the page
//! index comes with the footer) and in checkpoints (classic, multi-part,
//! V2 sidecars). parquet sized vectors by some of these claims and the
//! process died of SIGABRT; each test runs in a child process bounded to
//! 8 GiB, so such an abort fails the test (on any machine) and not the
//! test binary.

use std::path::Path;
use std::sync::Arc;

use dar_scan::{ErrorKind, ScanError, Table, TableOptions};
use dar_testkit::child::isolated;
use dar_testkit::claims::{
    CLAIM_MAX, CLAIMS, Claim, base_batch, base_file, disguised_row_groups, table_with_claim,
    table_with_file, with_claim,
};
use dar_testkit::{CheckpointOptions, TableWriter};
use futures::TryStreamExt;
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;

use crate::common::num_rows;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The rows of a scan of `table`, filtered by `predicate`.
async fn scan(table: &Table, predicate: Option<&str>) -> Result<usize, ScanError> {
    let mut b = table.scan();
    if let Some(p) = predicate {
        b = b.with_predicate_sql(p);
    }
    let batches: Vec<_> = b.build()?.execute().try_collect().await?;
    Ok(num_rows(&batches))
}

/// `result` is dar's refusal of the claim, naming `file`.
fn assert_refused<T: std::fmt::Debug>(result: Result<T, ScanError>, file: &str, claim: &Claim) {
    let err = match result {
        Ok(v) => panic!("{}: read {v:?}", claim.name),
        Err(e) => e,
    };
    let text = err.to_string();
    assert!(
        text.contains(file) && text.contains("claims"),
        "{}: {text}",
        claim.name
    );
    assert_eq!(err.kind(), ErrorKind::CorruptData, "{}: {text}", claim.name);
}

/// Footer claims fail every scan; page index claims fail the scans that
/// read the page index (a predicate), and the others read the rows.
async fn check_table(table: &Table, claim: &Claim) {
    let plain = scan(table, None).await;
    if claim.region.is_page_index() {
        assert_eq!(plain.unwrap(), 3, "{}", claim.name);
    } else {
        assert_refused(plain, "part-0.parquet", claim);
    }
    assert_refused(scan(table, Some("id > 1")).await, "part-0.parquet", claim);
}

#[test]
fn claimed_lengths_in_local_data_files_are_errors() {
    if let Some(outcome) = isolated(
        module_path!(),
        "claimed_lengths_in_local_data_files_are_errors",
    ) {
        return outcome.unwrap();
    }
    runtime().block_on(async {
        for claim in CLAIMS {
            let tmp = tempfile::tempdir().unwrap();
            let t = table_with_claim(tmp.path(), claim, CLAIM_MAX).unwrap();
            let table = Table::open(&t.uri()).await.unwrap();
            check_table(&table, claim).await;
        }
        // Row groups whose field header says boolean: parquet reads field
        // 4 as a list whatever the header says (260 million row groups).
        let tmp = tempfile::tempdir().unwrap();
        let bytes = disguised_row_groups(&base_file().unwrap()).unwrap();
        let t = table_with_file(tmp.path(), &bytes).unwrap();
        let table = Table::open(&t.uri()).await.unwrap();
        let err = scan(&table, None).await.unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("part-0.parquet") && text.contains("field 4 of FileMetaData"),
            "{text}"
        );
        assert_eq!(err.kind(), ErrorKind::CorruptData, "{text}");
    });
}

/// Over S3 a filtered scan takes the page index in the footer's request
/// (parquet decodes both at once): the same refusals.
#[test]
fn claimed_lengths_in_data_files_over_s3_are_errors() {
    if let Some(outcome) = isolated(
        module_path!(),
        "claimed_lengths_in_data_files_over_s3_are_errors",
    ) {
        return outcome.unwrap();
    }
    runtime().block_on(async {
        let server = dar_io::testing::S3Server::start().await.unwrap();
        server.create_bucket("claims").await.unwrap();
        for (i, claim) in CLAIMS.iter().enumerate() {
            let tmp = tempfile::tempdir().unwrap();
            table_with_claim(tmp.path(), claim, CLAIM_MAX).unwrap();
            let prefix = format!("t{i}");
            server.upload_dir(tmp.path(), "claims", &prefix).unwrap();
            let store = dar_io::TableStore::builder(format!("s3://claims/{prefix}"))
                .with_env(Vec::new())
                .with_options(server.storage_options())
                .build()
                .unwrap();
            let table = Table::from_store(store, TableOptions::new()).await.unwrap();
            check_table(&table, claim).await;
        }
    });
}

/// A two-commit table at `dir/t` with a checkpoint (V2 with sidecars when
/// `sidecars > 0`).
async fn checkpointed(dir: &Path, sidecars: usize) {
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
    let batch = base_batch().unwrap();
    let mut w = TableWriter::builder(store, "t".into(), batch.schema())
        .with_v2_checkpoints(sidecars > 0)
        .create()
        .await
        .unwrap();
    w.append(&batch).await.unwrap();
    w.append(&batch).await.unwrap();
    let options = CheckpointOptions::default().with_sidecars(sidecars);
    w.checkpoint_with(&options).await.unwrap();
}

/// The files of `dir` whose names contain `part`.
fn files_named(dir: &Path, part: &str) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().contains(part))
        .collect();
    out.sort();
    out
}

/// `file` with `claim` planted; false when the file has no such value
/// (a checkpoint column without statistics, say).
fn plant(file: &Path, claim: &Claim) -> bool {
    let bytes = std::fs::read(file).unwrap();
    match with_claim(&bytes, claim, CLAIM_MAX) {
        Ok(hostile) => {
            std::fs::write(file, hostile).unwrap();
            true
        }
        Err(_) => false,
    }
}

/// Opening the table at `dir` fails naming one of `files`.
async fn open_refused(dir: &Path, files: &[std::path::PathBuf], claim: &Claim) {
    let result = Table::open(dir.to_str().unwrap()).await.map(|_| ());
    let err = match result {
        Ok(()) => panic!("{}: the table opened", claim.name),
        Err(e) => e,
    };
    let text = err.to_string();
    let named = files
        .iter()
        .any(|f| text.contains(f.file_name().unwrap().to_str().unwrap()));
    assert!(named && text.contains("claims"), "{}: {text}", claim.name);
    assert_eq!(err.kind(), ErrorKind::CorruptData, "{}: {text}", claim.name);
}

#[test]
fn claimed_lengths_in_checkpoints_are_errors() {
    if let Some(outcome) = isolated(module_path!(), "claimed_lengths_in_checkpoints_are_errors") {
        return outcome.unwrap();
    }
    runtime().block_on(async {
        let footer_claims = CLAIMS.iter().filter(|c| !c.region.is_page_index());
        let mut planted = Vec::new();
        for claim in footer_claims {
            // Classic.
            let tmp = tempfile::tempdir().unwrap();
            checkpointed(tmp.path(), 0).await;
            let log = tmp.path().join("t/_delta_log");
            let classic = files_named(&log, ".checkpoint.parquet");
            assert_eq!(classic.len(), 1);
            if !plant(&classic[0], claim) {
                continue;
            }
            planted.push(claim.name);
            let table = tmp.path().join("t");
            open_refused(&table, &classic, claim).await;

            // Multi-part: the classic checkpoint as two hostile parts.
            let parts: Vec<_> = (1..=2)
                .map(|i| {
                    log.join(format!(
                        "00000000000000000002.checkpoint.{i:010}.0000000002.parquet"
                    ))
                })
                .collect();
            for p in &parts {
                std::fs::copy(&classic[0], p).unwrap();
            }
            std::fs::remove_file(&classic[0]).unwrap();
            std::fs::remove_file(log.join("_last_checkpoint")).unwrap();
            open_refused(&table, &parts, claim).await;

            // V2: the claim in a sidecar.
            let tmp = tempfile::tempdir().unwrap();
            checkpointed(tmp.path(), 1).await;
            let sidecars = files_named(&tmp.path().join("t/_delta_log/_sidecars"), ".parquet");
            assert_eq!(sidecars.len(), 1);
            let before = std::fs::metadata(&sidecars[0]).unwrap().len();
            if !plant(&sidecars[0], claim) {
                continue;
            }
            let after = std::fs::metadata(&sidecars[0]).unwrap().len();
            // The top-level checkpoint names the sidecar's size.
            let top = files_named(&log_of(tmp.path()), ".checkpoint.")
                .into_iter()
                .find(|p| p.extension().is_some_and(|e| e == "json"))
                .unwrap();
            let text = std::fs::read_to_string(&top).unwrap();
            let from = format!("\"sizeInBytes\":{before}");
            assert!(text.contains(&from), "{text}");
            std::fs::write(
                &top,
                text.replace(&from, &format!("\"sizeInBytes\":{after}")),
            )
            .unwrap();
            open_refused(&tmp.path().join("t"), &sidecars, claim).await;
        }
        for needed in [
            "row groups",
            "schema children",
            "schema elements",
            "column chunks",
        ] {
            assert!(
                planted.contains(&needed),
                "{needed} not planted: {planted:?}"
            );
        }
    });
}

fn log_of(dir: &Path) -> std::path::PathBuf {
    dir.join("t/_delta_log")
}
