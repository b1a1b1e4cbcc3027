//! Shared helpers for dar's criterion benchmarks (the `benches/` targets).
//!
//! ```
//! // Peak resident memory of this process so far, where the OS reports it.
//! let _ = dar_benches::peak_rss_bytes();
//! ```

/// Peak resident set size of the current process in bytes (`VmHWM` from
/// `/proc/self/status`), or `None` where the OS does not report it.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Resets the peak-RSS watermark (Linux `clear_refs` 5) so a following
/// [`peak_rss_bytes`] measures one phase; returns false where unsupported.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
