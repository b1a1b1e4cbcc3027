//! Issue 33, item 8 through `dar`: a Parquet footer or page index claiming
//! a length its bytes cannot hold (2^31-1 row groups, schema children,
//! page locations, and every other list, binary and count of
//! [`CLAIMS`]) is one error line naming the file and exit code 1, in data
//! files (`dar scan`, filtered or not, and `dar sql`) and in a checkpoint
//! (`dar info`, `dar files`, `dar scan`). parquet sized vectors by some
//! of these claims and `dar` died of SIGABRT: each run here is bounded to
//! 8 GiB of address space, so that such an abort is a signal on any
//! machine, which the tests tell from an error.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use dar_testkit::child::{CHILD_ADDRESS_SPACE, bounded_command};
use dar_testkit::claims::{
    CLAIM_MAX, CLAIMS, Claim, base_batch, table_with_claim, table_with_file, with_claim,
};
use dar_testkit::{CheckpointOptions, TableWriter};
use object_store::local::LocalFileSystem;

use crate::arg;

/// `dar args` bounded to [`CHILD_ADDRESS_SPACE`].
fn run(args: &[&str]) -> Output {
    let dar = assert_cmd::cargo::cargo_bin("dar");
    bounded_command(&dar, CHILD_ADDRESS_SPACE)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .unwrap()
}

/// `dar args` failed with one error line naming `file` and the claim.
fn refused(args: &[&str], file: &str, claim: &Claim) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}: {args:?} ended with {} (a signal is an abort): {err}",
        claim.name,
        out.status
    );
    assert!(err.starts_with("dar: error: "), "{}: {err}", claim.name);
    assert_eq!(err.lines().count(), 1, "{}: one line: {err}", claim.name);
    assert!(
        err.contains(file) && err.contains("claims"),
        "{}: {err}",
        claim.name
    );
}

/// `dar args` succeeded.
fn reads(args: &[&str], claim: &Claim) {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}: {args:?}: {}",
        claim.name,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn claimed_lengths_in_data_files_are_one_error_line() {
    for claim in CLAIMS {
        let tmp = tempfile::tempdir().unwrap();
        table_with_claim(tmp.path(), claim, CLAIM_MAX).unwrap();
        let t = arg(tmp.path());
        let plain = ["scan", &t, "--format", "null"];
        let filtered = ["scan", &t, "--format", "null", "--filter", "id > 1"];
        // The page index is read only to prune pages for a filter.
        if claim.region.is_page_index() {
            reads(&plain, claim);
        } else {
            refused(&plain, "part-0.parquet", claim);
        }
        refused(&filtered, "part-0.parquet", claim);
        #[cfg(feature = "sql")]
        {
            let table = format!("t={t}");
            let query = "SELECT count(*) FROM t WHERE id > 1";
            refused(&["sql", query, "--table", &table], "part-0.parquet", claim);
        }
    }
}

/// A data file shorter than Parquet's 8-byte trailer is one error line
/// naming it: reading its tail panicked in a decoder task (`its task
/// stopped`), found by the `footer_scan` fuzz target once it stopped
/// hiding panics.
#[test]
fn a_data_file_shorter_than_a_trailer_is_one_error_line() {
    for bytes in [&b";"[..], b"PAR1", b"PAR1PAR"] {
        let tmp = tempfile::tempdir().unwrap();
        table_with_file(tmp.path(), bytes).unwrap();
        let out = run(&["scan", &arg(tmp.path()), "--format", "null"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bytes:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{bytes:?}: {err}");
        assert!(
            err.contains("part-0.parquet") && !err.contains("task stopped"),
            "{bytes:?}: {err}"
        );
    }
}

/// A two-commit table at `dir` with a classic checkpoint.
fn checkpointed(dir: &Path) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = Arc::new(LocalFileSystem::new_with_prefix(dir).unwrap());
        let batch = base_batch().unwrap();
        let mut w = TableWriter::builder(store, "t".into(), batch.schema())
            .create()
            .await
            .unwrap();
        w.append(&batch).await.unwrap();
        w.append(&batch).await.unwrap();
        w.checkpoint_with(&CheckpointOptions::default())
            .await
            .unwrap();
    });
}

#[test]
fn claimed_lengths_in_a_checkpoint_are_one_error_line() {
    let mut planted = 0;
    for claim in CLAIMS.iter().filter(|c| !c.region.is_page_index()) {
        let tmp = tempfile::tempdir().unwrap();
        checkpointed(tmp.path());
        let name = "00000000000000000002.checkpoint.parquet";
        let file = tmp.path().join("t/_delta_log").join(name);
        let Ok(hostile) = with_claim(&std::fs::read(&file).unwrap(), claim, CLAIM_MAX) else {
            continue; // not in this checkpoint (a column without statistics)
        };
        planted += 1;
        std::fs::write(&file, hostile).unwrap();
        let t = arg(&tmp.path().join("t"));
        for cmd in ["info", "files", "scan"] {
            refused(&[cmd, &t], name, claim);
        }
    }
    assert!(planted >= 10, "{planted} claims planted");
}
