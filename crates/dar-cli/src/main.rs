//! The `dar` binary: see the `dar_cli` crate.

/// jemalloc, two arenas and transparent huge pages (`narenas:2,thp:always`,
/// set at its build in `.cargo/config.toml`), also as the process's
/// `malloc` (C code: zstd): a scan decompresses page after page into
/// buffers of about a page each, which glibc's malloc handed back to the
/// kernel and faulted in again (`cargo xtask bench`, W4 and W5 local).
#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    dar_cli::main()
}
