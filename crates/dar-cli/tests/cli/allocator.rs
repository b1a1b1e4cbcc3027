//! The binary's allocator: jemalloc with one arena per CPU, so that a
//! scan's freed page buffers are reused rather than returned to the kernel
//! and faulted in again (see `src/main.rs`).

use crate::{arg, dar, sample};

#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[test]
fn the_binary_allocates_with_jemalloc_one_arena_per_cpu() {
    // jemalloc prints its statistics, options included, at exit when
    // asked through its (prefixed) environment variable; glibc's malloc
    // ignores it.
    let out = dar()
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .args(["scan", &arg(&sample()), "--format", "null"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stats = String::from_utf8_lossy(&out.stderr);
    assert!(
        stats.contains("opt.percpu_arena: \"percpu\""),
        "no jemalloc statistics with one arena per CPU: {}",
        &stats[..stats.len().min(2000)]
    );
}
