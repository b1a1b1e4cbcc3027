//! The binary's allocator: jemalloc with two arenas, so that a
//! scan's freed page buffers are reused rather than returned to the kernel
//! and faulted in again, in transparent huge pages where the system allows
//! them (see `src/main.rs`).

use crate::{arg, dar, sample};

#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[test]
fn the_binary_allocates_with_jemalloc_two_arenas_and_huge_pages() {
    // jemalloc prints its statistics, options included, at exit when
    // asked through its environment variable. The unprefixed name is read
    // only when jemalloc is the process's malloc (C code's too); glibc's
    // malloc ignores it.
    let out = dar()
        .env("MALLOC_CONF", "stats_print:true")
        .args(["scan", &arg(&sample()), "--format", "null"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stats = String::from_utf8_lossy(&out.stderr);
    assert!(
        stats.contains("opt.narenas: 2\n"),
        "no jemalloc statistics with two arenas: {}",
        &stats[..stats.len().min(2000)]
    );
    // Its extents in transparent huge pages where the system allows them.
    assert!(
        stats.contains("opt.thp: \"always\"\n"),
        "jemalloc without huge pages: {}",
        &stats[..stats.len().min(2000)]
    );
}

/// Under an affinity mask (taskset, a container's cpuset) the allocator
/// prints nothing: jemalloc's per-CPU arenas would warn on stderr there.
#[cfg(target_os = "linux")]
#[test]
fn the_allocator_is_silent_under_an_affinity_mask() {
    let taskset = std::path::Path::new("/usr/bin/taskset");
    if !taskset.exists() {
        eprintln!("SKIPPED: no /usr/bin/taskset to run dar on one CPU");
        return;
    }
    let dar = assert_cmd::cargo::cargo_bin("dar");
    let out = std::process::Command::new(taskset)
        .args(["-c", "0"])
        .arg(dar)
        .args(["scan", &arg(&sample()), "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!out.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
