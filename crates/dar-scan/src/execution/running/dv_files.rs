//! [`DvFiles`]: the DVs that a scan's files keep in one DV file, read by
//! one planned read of that file. Delta writes the DVs of one commit into
//! one file, so a scan of 200 files with DVs costs one request, not 200.
//!
//! The registry only holds byte ranges per DV file; which file and range a
//! task's DV is, and how the bytes are fetched, is the DV stage's business
//! (`stages::dv`).

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use object_store::path::Path;
use tokio::sync::OnceCell;

/// DV bytes of one file held for a scan at most; a DV file with more is
/// read DV by DV.
const MAX_SHARED_READ_BYTES: u64 = 16 * 1024 * 1024;

/// The DVs of one DV file that a scan's files need, read together once.
#[derive(Debug, Default)]
pub(crate) struct SharedRead {
    /// The ranges to read, in the order noted.
    pub ranges: Vec<Range<u64>>,
    /// `ranges` as a set: a plan and its subsets note the same DVs.
    noted: HashSet<(u64, u64)>,
    bytes: u64,
    /// The ranges' bytes, once the first file that needs one fetched them.
    pub fetched: OnceCell<Vec<(Range<u64>, Bytes)>>,
}

impl SharedRead {
    /// The bytes of `range` from the fetched ranges, if one covers it.
    pub(crate) fn slice(fetched: &[(Range<u64>, Bytes)], range: &Range<u64>) -> Option<Bytes> {
        let (r, b) = fetched
            .iter()
            .find(|(r, _)| r.start <= range.start && range.end <= r.end)?;
        let from = usize::try_from(range.start - r.start).ok()?;
        let len = usize::try_from(range.end - range.start).ok()?;
        b.get(from..from + len).map(|_| b.slice(from..from + len))
    }
}

/// One planned read per DV file for all the files of a scan that need it.
#[derive(Debug, Default)]
pub(crate) struct DvFiles {
    files: Mutex<HashMap<Path, Arc<SharedRead>>>,
}

impl DvFiles {
    /// Notes `dvs` (DV file, byte range), so that the first file to need a
    /// DV of a DV file fetches those of all of them at once. A range noted
    /// twice is read once; a DV file already being read takes no more.
    pub(crate) fn note(&self, dvs: impl IntoIterator<Item = (Path, Range<u64>)>) {
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        for (location, range) in dvs {
            let read = files.entry(location).or_default();
            let Some(read) = Arc::get_mut(read).filter(|r| !r.fetched.initialized()) else {
                continue;
            };
            let len = range.end - range.start;
            if read.bytes + len <= MAX_SHARED_READ_BYTES
                && read.noted.insert((range.start, range.end))
            {
                read.bytes += len;
                read.ranges.push(range);
            }
        }
    }

    /// The shared read of the DV file at `location`, if any DV was noted.
    pub(crate) fn shared(&self, location: &Path) -> Option<Arc<SharedRead>> {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files
            .get(location)
            .filter(|r| !r.ranges.is_empty())
            .cloned()
    }
}
