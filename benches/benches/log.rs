//! dar-log: load the 300k-file log-only table (`300k-add-files-100-col-partitioned`)
//! with its full file index, and report peak memory.
//!
//! The table is unpacked from the shared `.tar.zst` into a temp dir with
//! `tar --zstd`. Compare with delta-rs in the same sitting (see the crate
//! README of dar-log for the python command).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "bench"
)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use dar_log::{FileIndexMode, Snapshot};
use object_store::ObjectStore;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

const TABLE: &str = "300k-add-files-100-col-partitioned";

fn unpack() -> Option<(tempfile::TempDir, PathBuf)> {
    let archive = dar_testdata::table(&format!("kernel/{TABLE}.tar.zst"))?;
    let dir = tempfile::tempdir().unwrap();
    let ok = Command::new("tar")
        .arg("--zstd")
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "tar --zstd failed on {}", archive.display());
    let table = dir.path().join(TABLE);
    Some((dir, table))
}

fn store(table: &std::path::Path) -> Arc<dyn ObjectStore> {
    Arc::new(LocalFileSystem::new_with_prefix(table).unwrap())
}

async fn load(table: &std::path::Path, mode: FileIndexMode) -> Snapshot {
    let s = Snapshot::builder(store(table), Path::from(""))
        .with_file_index(mode)
        .build()
        .await
        .unwrap();
    if mode == FileIndexMode::Eager {
        assert_eq!(s.file_index().unwrap().len(), 300_000);
    }
    s
}

fn bench(c: &mut Criterion) {
    let Some((_dir, table)) = unpack() else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();

    // One cold-ish load for the memory figure, before criterion allocates.
    dar_benches::reset_peak_rss();
    let before = dar_benches::peak_rss_bytes().unwrap_or(0);
    let start = Instant::now();
    let snapshot = rt.block_on(load(&table, FileIndexMode::Eager));
    let elapsed = start.elapsed();
    let peak = dar_benches::peak_rss_bytes().unwrap_or(0);
    println!(
        "dar-log {TABLE}: {} files, one load with full file index {:.3} s, peak RSS {:.1} MiB (process baseline {:.1} MiB)",
        snapshot.num_files(),
        elapsed.as_secs_f64(),
        peak as f64 / (1 << 20) as f64,
        before as f64 / (1 << 20) as f64,
    );
    drop(snapshot);

    let mut g = c.benchmark_group("log");
    g.sample_size(10);
    g.bench_function("300k_load_full_file_index", |b| {
        b.iter(|| rt.block_on(load(&table, FileIndexMode::Eager)))
    });
    g.bench_function("300k_replay_lazy_index", |b| {
        b.iter(|| rt.block_on(load(&table, FileIndexMode::Lazy)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
