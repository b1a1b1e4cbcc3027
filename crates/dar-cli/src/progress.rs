//! The progress bar of long scans written to a file.
//!
//! Shown on standard error only when it is a terminal, only when rows go to
//! a file (`--output`), and only once the scan has run for
//! [`SHOW_AFTER`] (or `DAR_PROGRESS_AFTER_MS` milliseconds, when set): short
//! scans and pipelines never see it.

use std::time::{Duration, Instant};

use dar_scan::MetricsSnapshot;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::commands::human_bytes;

/// How long a scan runs before its bar appears.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Environment variable overriding [`SHOW_AFTER`], in milliseconds (tests
/// set it to 0 to see the bar on short scans).
pub const SHOW_AFTER_ENV: &str = "DAR_PROGRESS_AFTER_MS";

fn show_after() -> Duration {
    std::env::var(SHOW_AFTER_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(SHOW_AFTER, Duration::from_millis)
}

/// A progress bar that appears late, if at all.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    start: Instant,
    show_after: Duration,
    files: usize,
    /// Expected rows, when known (no filter, no limit, `numRecords` present).
    expected_rows: Option<u64>,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress tracker; `enabled` is false when nothing may be drawn.
    pub fn new(enabled: bool, files: usize, expected_rows: Option<u64>) -> Self {
        Self {
            enabled,
            start: Instant::now(),
            show_after: show_after(),
            files,
            expected_rows,
            bar: None,
        }
    }

    /// The bar's style: a bar when the row total is known, else a spinner.
    pub fn style(with_total: bool) -> ProgressStyle {
        let template = if with_total {
            "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} rows  {msg}"
        } else {
            "{spinner} {elapsed_precise} {pos} rows  {msg}"
        };
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
    }

    /// Whether the bar is on screen.
    pub fn is_visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Updates the bar from the scan's metrics (creating it once the scan
    /// has run long enough).
    pub fn update(&mut self, m: &MetricsSnapshot) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.start.elapsed() >= self.show_after {
            let bar = match self.expected_rows {
                Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr())
                    .with_style(Self::style(true)),
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                    .with_style(Self::style(false)),
            };
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(m.rows_output);
            // Files found as the scan goes (a change feed) count as they come.
            let files = if self.files == 0 {
                m.files_total.saturating_sub(m.files_pruned)
            } else {
                self.files as u64
            };
            bar.set_message(format!(
                "files {}/{}  {} read",
                m.files_read,
                files,
                human_bytes(m.io.bytes())
            ));
        }
    }

    /// Removes the bar from the screen.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_never_draws() {
        let mut p = Progress::new(false, 3, Some(10));
        p.start -= Duration::from_secs(5);
        p.update(&MetricsSnapshot::default());
        assert!(!p.is_visible());
    }

    #[test]
    fn appears_only_after_delay() {
        let mut p = Progress::new(true, 3, None);
        p.show_after = SHOW_AFTER;
        p.update(&MetricsSnapshot::default());
        assert!(!p.is_visible(), "a short scan shows nothing");
        p.start -= SHOW_AFTER;
        p.update(&MetricsSnapshot::default());
        assert!(p.is_visible());
        p.finish();
        assert!(!p.is_visible());
    }

    #[test]
    fn templates_parse() {
        // with_template fails on a bad template; style() would fall back.
        assert!(
            ProgressStyle::with_template(
                "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} rows  {msg}"
            )
            .is_ok()
        );
        assert!(
            ProgressStyle::with_template("{spinner} {elapsed_precise} {pos} rows  {msg}").is_ok()
        );
    }
}
