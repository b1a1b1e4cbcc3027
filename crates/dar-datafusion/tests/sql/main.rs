//! Integration tests of dar-datafusion: the `.slt` suite and the plan,
//! statistics and metrics properties SQL results alone cannot show.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod agree;
mod changes;
mod dat;
mod deep;
mod duplicates;
mod kit;
mod options;
mod partitions;
mod plans;
mod pushdown;
mod remote;
mod slt;
mod trusted_stats;
mod wide;
mod writes;

use std::path::PathBuf;

use tokio::sync::OnceCell;

use slt::Tables;

/// The suite's tables, written once per test process.
pub async fn tables() -> &'static Tables {
    static TABLES: OnceCell<Tables> = OnceCell::const_new();
    TABLES
        .get_or_init(|| async {
            // Rewritten at each run (the writer is deterministic), in the
            // target dir's scratch space rather than a temp dir that the
            // process could not clean up (statics are never dropped).
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dar-datafusion-kit");
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            kit::write_people(&dir).await;
            kit::write_orders(&dir).await;
            Tables {
                sample: dar_testdata::workspace_root().join("examples/data/sample"),
                kit: dir,
                testdata: dar_testdata::root(),
            }
        })
        .await
}

/// Every `tests/slt/*.slt` file, in name order; all failures reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slt_suite() {
    let tables = tables().await;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = slt::run_file(f, tables).await {
            failures.push(format!("{}:\n{e}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
