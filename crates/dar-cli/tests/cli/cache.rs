//! `--cache-dir` from outside: the cache keeps to a namespace of its own,
//! never deletes or reads what it did not write, refuses unsafe folders
//! and folders inside a table, and serves no other object's bytes.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::{arg, dar, sample, sample_copy, write_table};

/// Every file under `dir` (links not followed) with its bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    dar_io::testing::files_under(dir)
        .into_iter()
        .filter(|p| !p.starts_with(dir.join(dar_io::RangeCache::NAMESPACE)))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect()
}

fn stderr(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(out.get_output().stderr.clone()).unwrap()
}

fn scan(table: &str, cache: &Path, mib: &str) -> assert_cmd::assert::Assert {
    dar()
        .args(["scan", table, "--format", "csv", "--cache-dir"])
        .arg(cache)
        .args(["--cache-dir-mib", mib])
        .assert()
}

#[test]
fn a_cache_dir_inside_the_table_is_refused_and_the_table_kept() {
    let copy = sample_copy();
    let table = copy.path();
    let before = contents(table);
    for cache in [
        table.to_path_buf(),
        table.join("_delta_log"),
        table.join("new/sub"),
    ] {
        let out = scan(&arg(table), &cache, "1").failure();
        let err = stderr(&out);
        assert!(err.contains("inside the table being read"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        let out = dar()
            .args(["files", &arg(table), "--cache-dir"])
            .arg(&cache)
            .assert()
            .failure();
        assert!(stderr(&out).contains("inside the table being read"));
        #[cfg(feature = "sql")]
        {
            let out = dar()
                .args(["sql", "SELECT count(*) FROM t", "--table"])
                .arg(format!("t={}", arg(table)))
                .arg("--cache-dir")
                .arg(&cache)
                .assert()
                .failure();
            assert!(
                stderr(&out).contains("inside the table being read"),
                "{}",
                stderr(&out)
            );
        }
    }
    assert_eq!(contents(table), before, "the table's files changed");
    assert!(!table.join(dar_io::RangeCache::NAMESPACE).exists());
}

#[test]
fn trimming_never_touches_what_the_cache_did_not_write() {
    let tables = tempfile::tempdir().unwrap();
    // About 8 MiB of pages over a 1 MiB budget: the cache trims many times.
    let table = write_table(tables.path(), 8, 125_000);
    let cache = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), b"outside").unwrap();
    std::fs::write(cache.path().join("notes.txt"), b"mine").unwrap();
    std::fs::create_dir(cache.path().join("old")).unwrap();
    std::fs::write(
        cache
            .path()
            .join("old")
            .join("0000000000000000-0000000000000001"),
        b"x",
    )
    .unwrap();
    // A linked folder planted beside (and, after the first run, inside)
    // the cache's namespace.
    std::os::unix::fs::symlink(outside.path(), cache.path().join("ab")).unwrap();
    let before = contents(cache.path());
    let outside_before = contents(outside.path());
    let first = scan(&table, cache.path(), "1").success();
    // At a fan-out name (two hex digits) the first run did not take.
    let namespace = cache.path().join(dar_io::RangeCache::NAMESPACE);
    let free = (0..=255u8)
        .map(|b| namespace.join(format!("{b:02x}")))
        .find(|p| !p.exists())
        .unwrap();
    std::os::unix::fs::symlink(outside.path(), free).unwrap();
    for _ in 0..2 {
        let again = scan(&table, cache.path(), "1").success();
        assert_eq!(again.get_output().stdout, first.get_output().stdout);
    }
    assert_eq!(contents(cache.path()), before);
    assert_eq!(contents(outside.path()), outside_before);
    let held: u64 = dar_io::testing::files_under(&cache.path().join(dar_io::RangeCache::NAMESPACE))
        .iter()
        .filter(|p| std::fs::read(p).is_ok_and(|b| b.starts_with(b"DARCACHE")))
        .map(|p| p.metadata().unwrap().len())
        .sum();
    assert!(held > 0 && held <= 1 << 20, "{held} bytes held");
}

#[test]
fn folders_others_can_write_or_own_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = scan(&arg(&sample()), dir.path(), "8").failure();
    let err = stderr(&out);
    assert!(
        err.contains("refusing cache directory") && err.contains("writable by everyone"),
        "{err}"
    );
    assert!(!dir.path().join(dar_io::RangeCache::NAMESPACE).exists());
    // /tmp itself: shared with every user of the machine.
    let err = stderr(&scan(&arg(&sample()), Path::new("/tmp"), "8").failure());
    assert!(err.contains("refusing cache directory '/tmp'"), "{err}");
    // A namespace folder someone else made.
    let planted = tempfile::tempdir().unwrap();
    std::fs::create_dir(planted.path().join(dar_io::RangeCache::NAMESPACE)).unwrap();
    std::fs::write(
        planted.path().join(dar_io::RangeCache::NAMESPACE).join("x"),
        b"x",
    )
    .unwrap();
    let err = stderr(&scan(&arg(&sample()), planted.path(), "8").failure());
    assert!(err.contains("not created by dar"), "{err}");
    #[cfg(feature = "distributed")]
    {
        let out = dar()
            .args(["worker", "--listen", "127.0.0.1:0", "--cache-dir"])
            .arg(dir.path())
            .assert()
            .failure();
        assert!(
            stderr(&out).contains("writable by everyone"),
            "{}",
            stderr(&out)
        );
    }
    // A missing folder is made private to the user.
    let fresh = tempfile::tempdir().unwrap().path().join("dcache");
    scan(&arg(&sample()), &fresh, "8").success();
    assert_eq!(
        fresh.metadata().unwrap().permissions().mode() & 0o777,
        0o700
    );
}

/// Writes table `t` under `dir`: `id` (Int64) from `offset`, two files of
/// 1000 rows, uncompressed and without dictionaries, so that any offset
/// gives files of the same names and sizes (the writer is deterministic:
/// the same log too, but for the statistics' digits).
fn write_ids(dir: &Path, offset: i64) -> String {
    use dar_testkit::{Codec, ParquetOptions};
    let options = ParquetOptions::default()
        .with_codec(Codec::Uncompressed)
        .with_dictionary(false);
    crate::write_id_table(dir, 2, 1000, offset, Some(options))
}

fn data_files(table: &Path) -> Vec<(PathBuf, u64)> {
    dar_io::testing::files_under(table)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .map(|p| {
            let len = p.metadata().unwrap().len();
            (p, len)
        })
        .collect()
}

/// A table dropped and recreated at one place by a deterministic writer
/// (same file names and sizes), then a file rewritten in place with the
/// same size: each later run with the cache returns what an uncached run
/// returns.
#[test]
fn a_recreated_table_and_a_rewritten_file_are_not_served_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let table = write_ids(dir.path(), 0);
    let t = Path::new(&table);
    let files = data_files(t);
    let first = scan(&table, cache.path(), "64").success();
    let same_as_uncached = |what: &str| {
        let uncached = dar()
            .args(["scan", &table, "--format", "csv"])
            .assert()
            .success();
        let cached = scan(&table, cache.path(), "64").success();
        assert_eq!(
            String::from_utf8_lossy(&cached.get_output().stdout),
            String::from_utf8_lossy(&uncached.get_output().stdout),
            "{what}: the cached run differs from an uncached one"
        );
        cached.get_output().stdout.clone()
    };
    // Dropped and recreated with other values, the same names and sizes.
    std::fs::remove_dir_all(t).unwrap();
    write_ids(dir.path(), 1_000_000);
    assert_eq!(data_files(t), files, "names and sizes must repeat");
    let recreated = same_as_uncached("recreated table");
    assert_ne!(recreated, first.get_output().stdout);
    // One file rewritten in place (same size, other values).
    let other = tempfile::tempdir().unwrap();
    write_ids(other.path(), 5_000_000);
    let (victim, _) = &files[0];
    let rel = victim.strip_prefix(t).unwrap();
    std::fs::write(
        victim,
        std::fs::read(other.path().join("t").join(rel)).unwrap(),
    )
    .unwrap();
    let rewritten = same_as_uncached("file rewritten in place");
    assert_ne!(rewritten, recreated);
}

/// Issue 33 item 3 through `dar`: cache entries replaced by a FIFO, a link
/// to `/dev/zero` or a huge sparse file are skipped and fetched again,
/// never waited on nor read whole: the run returns the uncached rows.
#[test]
fn fifos_links_and_sparse_files_in_the_cache_are_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let table = write_ids(dir.path(), 0);
    let uncached = dar()
        .args(["scan", &table, "--format", "csv"])
        .assert()
        .success();
    for kind in ["fifo", "link to /dev/zero", "sparse"] {
        let cache = tempfile::tempdir().unwrap();
        scan(&table, cache.path(), "64").success();
        let namespace = cache.path().join(dar_io::RangeCache::NAMESPACE);
        // Entries live in the namespace's object folders (its own files,
        // the marker, lock and usage record, at its top).
        let entries: Vec<PathBuf> = dar_io::testing::files_under(&namespace)
            .into_iter()
            .filter(|p| p.parent() != Some(namespace.as_path()))
            .collect();
        assert!(!entries.is_empty(), "{kind}: the first run cached nothing");
        for entry in &entries {
            match kind {
                "fifo" => {
                    std::fs::remove_file(entry).unwrap();
                    let made = std::process::Command::new("mkfifo")
                        .arg(entry)
                        .status()
                        .unwrap();
                    assert!(made.success());
                }
                "sparse" => std::fs::OpenOptions::new()
                    .write(true)
                    .open(entry)
                    .unwrap()
                    .set_len(1 << 40)
                    .unwrap(),
                _ => {
                    std::fs::remove_file(entry).unwrap();
                    std::os::unix::fs::symlink("/dev/zero", entry).unwrap();
                }
            }
        }
        let cached = dar()
            .args(["scan", &table, "--format", "csv", "--cache-dir"])
            .arg(cache.path())
            .timeout(std::time::Duration::from_secs(300))
            .assert()
            .success();
        assert_eq!(
            String::from_utf8_lossy(&cached.get_output().stdout),
            String::from_utf8_lossy(&uncached.get_output().stdout),
            "{kind}"
        );
    }
}
