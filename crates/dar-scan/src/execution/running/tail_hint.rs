//! [`TailHint`]: how many bytes from the end of a file hold its footer and
//! page index, learned over the files of a scan so that one request on a
//! remote store brings both; before the first, guessed from the file's
//! size and what a round trip to the store costs.

use std::sync::atomic::{AtomicU64, Ordering};

use dar_io::CostParams;
use parquet::file::metadata::ParquetMetaData;

/// Bytes to read from the end of a file to get its footer and page index
/// in one request: the largest tail seen in the scan, an eighth more.
#[derive(Debug, Default)]
pub(crate) struct TailHint {
    learned: AtomicU64,
}

impl TailHint {
    /// Smallest and largest guess made from a file's size alone.
    const GUESS: (u64, u64) = (64 * 1024, 1024 * 1024);

    /// A file's share of bytes a guess may take to spare a round trip.
    const MAX_SHARE: u64 = 32;

    /// The tail to read of a file of `size` bytes from a store that
    /// `params` describe. Before a file of the scan taught a tail, a 256th
    /// of the file, or, where more, the bytes that take one file's share of
    /// the link (its bandwidth over the requests in flight) less time than
    /// a round trip, up to a 32nd of the file: a guess short of the tail
    /// costs a second request, one latency more.
    pub(crate) fn for_file(&self, size: u64, params: &CostParams) -> usize {
        let learned = self.learned.load(Ordering::Relaxed);
        let hint = if learned > 0 {
            learned
        } else {
            let link = params.aggregate_bandwidth.unwrap_or(params.bandwidth);
            let share = link / params.max_concurrency.max(1) as f64;
            let round_trip = (params.request_latency.as_secs_f64() * share) as u64;
            (size / 256)
                .max(round_trip.min(size / Self::MAX_SHARE))
                .clamp(Self::GUESS.0, Self::GUESS.1)
        };
        usize::try_from(hint.min(size)).unwrap_or(usize::MAX)
    }

    /// Notes the tail of a file of `size` bytes whose `metadata` was read
    /// with its page index: from the first page-index byte to the end.
    pub(crate) fn learn(&self, metadata: &ParquetMetaData, size: u64) {
        let start = metadata
            .row_groups()
            .iter()
            .flat_map(|rg| rg.columns())
            .flat_map(|c| [c.column_index_offset(), c.offset_index_offset()])
            .flatten()
            .filter_map(|o| u64::try_from(o).ok())
            .min();
        if let Some(start) = start.filter(|s| *s < size) {
            let tail = size - start;
            self.learned
                .fetch_max(tail + tail / 8 + 8, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_far_store_gets_a_longer_first_guess_within_a_share_of_the_file() {
        let hint = TailHint::default();
        let near = CostParams::remote()
            .with_max_concurrency(64)
            .with_request_latency(Duration::from_millis(1));
        let far = near
            .clone()
            .with_request_latency(Duration::from_millis(200));
        let mib = 1024 * 1024;
        // Near: a 256th of a 9 MiB file is under the 64 KiB floor.
        assert_eq!(hint.for_file(9 * mib, &near), 64 * 1024);
        // Far: 200 ms of a 64th of 100 MB/s is 312 kB; a 32nd of the file
        // is less.
        assert_eq!(hint.for_file(9 * mib, &far), 9 * mib as usize / 32);
        assert_eq!(hint.for_file(50 * mib, &far), 312_500);
        // Large files: a 256th, at most 1 MiB, whatever the latency.
        assert_eq!(hint.for_file(1024 * mib, &far), mib as usize);
        // Never past the file.
        assert_eq!(hint.for_file(1000, &far), 1000);
        // A learned tail wins.
        hint.learned.store(200_000, Ordering::Relaxed);
        assert_eq!(hint.for_file(9 * mib, &near), 200_000);
    }
}
