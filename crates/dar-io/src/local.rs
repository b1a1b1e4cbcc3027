//! [`LocalFiles`]: the planned reads of a local file in one blocking call.
//!
//! Through `object_store`'s `LocalFileSystem`, every ranged GET is its own
//! round of blocking work: one hop to a blocking thread to open and stat
//! the file, a second to read the range. A selective scan of a wide file
//! asks for thousands of pages, so those hops (thread wake-ups, opens)
//! were a tenth of its CPU on two cores. Here the fetches a plan makes of
//! one file are read in a single blocking call: the file opened once,
//! each fetch one positioned read into a buffer of exactly its length.
//! Each fetch is still metered as a request of its class, so request
//! counts mean the same on every backend; [`IoSnapshot::local_reads`]
//! counts the blocking calls. A large fetch reads into a buffer an
//! earlier one handed back ([`crate::buffer_pool`]) when there is one.
//!
//! [`IoSnapshot::local_reads`]: crate::IoSnapshot::local_reads

use std::io::Read;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use object_store::local::LocalFileSystem;
use object_store::path::Path;

use crate::buffer_pool::BufferPool;
use crate::class::ObjectClass;
use crate::error::{Error, Result};
use crate::metered::IoMetrics;

/// Direct reads of a local table's files, metered into its metrics (see
/// [`crate::TableStore::local_files`]).
#[derive(Debug, Clone)]
pub struct LocalFiles {
    fs: Arc<LocalFileSystem>,
    metrics: IoMetrics,
    /// Buffers of large reads, back for the next read once dropped.
    pool: BufferPool,
}

impl LocalFiles {
    /// Reads of the files `fs` names, counted in `metrics`.
    pub(crate) fn new(fs: Arc<LocalFileSystem>, metrics: IoMetrics) -> Self {
        Self {
            fs,
            metrics,
            pool: BufferPool::default(),
        }
    }

    /// `ranges` of the file at `path` (each non-empty, within a file of
    /// the size the caller knows), one buffer each, in order, read in one
    /// blocking call. A file shorter than a range is [`Error::Truncated`];
    /// a missing or unreadable file the store's error naming it.
    pub(crate) async fn read(
        &self,
        path: &Path,
        ranges: Vec<Range<u64>>,
        class: ObjectClass,
    ) -> Result<Vec<Bytes>> {
        let file_path = self.file_path(path)?;
        let metrics = self.metrics.clone();
        let name = path.to_string();
        let pool = self.pool.clone();
        metrics.count_local_read();
        tokio::task::spawn_blocking(move || {
            read_all(&file_path, &name, &ranges, class, &metrics, &pool, None)
        })
        .await
        .map_err(|e| Error::Store {
            path: path.to_string(),
            source: object_store::Error::JoinError { source: e },
        })?
    }
}

impl LocalFiles {
    /// The file system path of the object `path`.
    fn file_path(&self, path: &Path) -> Result<std::path::PathBuf> {
        self.fs
            .path_to_filesystem(path)
            .map_err(|source| Error::Store {
                path: path.to_string(),
                source,
            })
    }

    /// The [`LocalStamp`] of the file at `path` now.
    pub fn stamp(&self, path: &Path) -> Result<LocalStamp> {
        let meta = std::fs::metadata(self.file_path(path)?).map_err(|e| Error::Store {
            path: path.to_string(),
            source: io_error(path.as_ref(), e),
        })?;
        Ok(LocalStamp::of(&meta))
    }

    /// [`LocalFiles::read`] on the calling thread, of the file at `path`
    /// only while it is the one `stamp` describes: a file rewritten or
    /// replaced since is an error naming it (a precondition failure, as a
    /// GET of an object version that is gone). The check is of the
    /// opened file, so nothing can swap it between the check and the reads.
    pub fn read_now(
        &self,
        path: &Path,
        ranges: &[Range<u64>],
        class: ObjectClass,
        stamp: &LocalStamp,
    ) -> Result<Vec<Bytes>> {
        let file_path = self.file_path(path)?;
        self.metrics.count_local_read();
        read_all(
            &file_path,
            path.as_ref(),
            ranges,
            class,
            &self.metrics,
            &self.pool,
            Some(stamp),
        )
    }
}

/// One version of a local file: its device and inode, size and
/// modification time. A file rewritten or replaced under its name has
/// another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalStamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl LocalStamp {
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// The blocking half of [`LocalFiles::read`] and [`LocalFiles::read_now`]
/// (which checks the file is still the one `stamp` describes).
fn read_all(
    file_path: &std::path::Path,
    name: &str,
    ranges: &[Range<u64>],
    class: ObjectClass,
    metrics: &IoMetrics,
    pool: &BufferPool,
    stamp: Option<&LocalStamp>,
) -> Result<Vec<Bytes>> {
    let open_err = |e| Error::Store {
        path: name.to_string(),
        source: io_error(name, e),
    };
    let file = std::fs::File::open(file_path).map_err(open_err)?;
    if let Some(stamp) = stamp
        && LocalStamp::of(&file.metadata().map_err(open_err)?) != *stamp
    {
        return Err(Error::Store {
            path: name.to_string(),
            source: object_store::Error::Precondition {
                path: name.to_string(),
                source: "the file was rewritten or replaced since it was first read".into(),
            },
        });
    }
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        if r.start >= r.end {
            out.push(Bytes::new());
            continue;
        }
        metrics.start_request(class);
        let start = Instant::now();
        let read = read_range(&file, r, pool, metrics);
        let elapsed = start.elapsed();
        let body = match read {
            Ok(b) => b,
            Err(e) => {
                metrics.finish(class, 0, elapsed, elapsed);
                metrics.error(class);
                return Err(Error::Store {
                    path: name.to_string(),
                    source: io_error(name, e),
                });
            }
        };
        metrics.finish(class, body.len() as u64, elapsed, elapsed);
        let expected = r.end - r.start;
        if body.len() as u64 != expected {
            return Err(Error::Truncated {
                path: name.to_string(),
                range: r.clone(),
                expected,
                actual: body.len() as u64,
            });
        }
        out.push(body);
    }
    Ok(out)
}

/// `range` of `file` (shorter at the end of the file) by positioned
/// reads: into a buffer an earlier read handed back to `pool` when there
/// is one of about its length (no zeroing, no fresh pages; counted in
/// `metrics`), else into a fresh buffer of its length, which the pool
/// takes back once the bytes are dropped. A fresh buffer is filled by
/// `read_to_end`, which zeroes and reads it in chunks doubling from 8
/// KiB. Measured, not kept: one `pread` into a buffer zeroed whole first
/// cost the `dar` binary (jemalloc) a quarter more time on W4; reading
/// through the file's own handle (no zeroing, same chunks) changed
/// nothing beyond the noise (docs/benchmarks.md, "Issue 36, fifth
/// session").
fn read_range(
    file: &std::fs::File,
    range: &Range<u64>,
    pool: &BufferPool,
    metrics: &IoMetrics,
) -> std::io::Result<Bytes> {
    let len = usize::try_from(range.end - range.start).map_err(std::io::Error::other)?;
    if let Some(mut buffer) = pool.take(len) {
        metrics.count_local_buffer_reused();
        let filled = read_into(file, range.start, &mut buffer[..len])?;
        return Ok(pool.bytes(buffer, filled));
    }
    let mut buffer = Vec::with_capacity(BufferPool::capacity_for(len));
    let mut at = Positioned {
        file,
        offset: range.start,
    };
    (&mut at).take(len as u64).read_to_end(&mut buffer)?;
    let filled = buffer.len();
    Ok(pool.bytes(buffer, filled))
}

/// Fills `buf` from `file` at `offset` by positioned reads, up to the end
/// of the file: the bytes read.
fn read_into(file: &std::fs::File, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A reader of `file` from `offset` by `pread`, leaving the shared file
/// position alone.
struct Positioned<'a> {
    file: &'a std::fs::File,
    offset: u64,
}

impl Read for Positioned<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// The store error `object_store` gives for `e` on the file `name`.
fn io_error(name: &str, e: std::io::Error) -> object_store::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        object_store::Error::NotFound {
            path: name.to_string(),
            source: Box::new(e),
        }
    } else {
        object_store::Error::Generic {
            store: "LocalFileSystem",
            source: Box::new(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &std::path::Path) -> (LocalFiles, IoMetrics, Path) {
        let metrics = IoMetrics::new();
        let fs = Arc::new(LocalFileSystem::new());
        let path = Path::from_filesystem_path(dir.join("data.bin")).unwrap();
        (LocalFiles::new(fs, metrics.clone()), metrics, path)
    }

    #[tokio::test]
    async fn ranges_of_one_file_are_read_in_one_call_and_each_metered() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.path().join("data.bin"), &data).unwrap();
        let (local, metrics, path) = files(dir.path());
        let ranges = vec![0..10, 5000..9000, 9990..10_000, 3..4];
        let got = local
            .read(&path, ranges.clone(), ObjectClass::PageData)
            .await
            .unwrap();
        for (r, b) in ranges.iter().zip(&got) {
            assert_eq!(b.as_ref(), &data[r.start as usize..r.end as usize]);
        }
        let s = metrics.snapshot();
        assert_eq!(s.local_reads, 1);
        assert_eq!(s.class(ObjectClass::PageData).requests, 4);
        assert_eq!(s.class(ObjectClass::PageData).bytes, 10 + 4000 + 10 + 1);
    }

    /// A large read's buffer is handed back when its bytes are dropped
    /// and the next read of about its length goes into it (counted): the
    /// bytes are the file's, never the earlier read's, and a read the
    /// file is too short for is an error, not the earlier bytes.
    #[tokio::test]
    async fn a_large_read_reuses_the_buffer_an_earlier_read_handed_back() {
        let dir = tempfile::tempdir().unwrap();
        let len = 300_000usize;
        let data: Vec<u8> = (0..len as u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(dir.path().join("data.bin"), &data).unwrap();
        let (local, metrics, path) = files(dir.path());
        // The file from `start` to its end, as one read.
        let read_from = |start: u64| {
            let (local, path) = (&local, &path);
            async move {
                let ranges = std::iter::once(start..len as u64).collect();
                let mut got = local.read(path, ranges, ObjectClass::PageData).await?;
                Ok::<Bytes, Error>(got.remove(0))
            }
        };
        let first = read_from(0).await.unwrap();
        assert_eq!(first.as_ref(), &data[..]);
        // Lent out while the bytes live: the next read takes a fresh buffer.
        let second = read_from(1000).await.unwrap();
        assert_eq!(second.as_ref(), &data[1000..]);
        assert_eq!(metrics.snapshot().local_buffers_reused, 0);
        drop(first);
        drop(second);
        let third = read_from(50_000).await.unwrap();
        assert_eq!(third.as_ref(), &data[50_000..]);
        assert_eq!(metrics.snapshot().local_buffers_reused, 1);
        drop(third);
        // The file shrinks: a reused buffer's old bytes are never read.
        std::fs::write(dir.path().join("data.bin"), &data[..len / 2]).unwrap();
        let err = read_from(0).await.unwrap_err();
        assert!(
            matches!(&err, Error::Truncated { actual, .. } if *actual == (len / 2) as u64),
            "{err}"
        );
        assert_eq!(metrics.snapshot().local_buffers_reused, 2);
        // Small reads are the allocator's: never pooled.
        for _ in 0..2 {
            let small = local
                .read(
                    &path,
                    std::iter::once(0..100).collect(),
                    ObjectClass::PageData,
                )
                .await
                .unwrap();
            assert_eq!(small[0].as_ref(), &data[..100]);
        }
        assert_eq!(metrics.snapshot().local_buffers_reused, 2);
    }

    #[tokio::test]
    async fn a_short_or_missing_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("data.bin"), [7u8; 100]).unwrap();
        let (local, metrics, path) = files(dir.path());
        let err = local
            .read(&path, vec![0..10, 90..150], ObjectClass::PageData)
            .await
            .unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Truncated {
                    expected: 60,
                    actual: 10,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("data.bin"), "{err}");
        std::fs::remove_file(dir.path().join("data.bin")).unwrap();
        let err = local
            .read(&path, vec![0..10, 20..30], ObjectClass::PageData)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("data.bin"), "{err}");
        assert!(
            matches!(
                &err,
                Error::Store {
                    source: object_store::Error::NotFound { .. },
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(metrics.snapshot().class(ObjectClass::PageData).errors, 0);
    }

    /// A read on the calling thread checks the file is the one its stamp
    /// was taken of: the same file reads (each range metered), a file
    /// rewritten or replaced since is a precondition error naming it,
    /// never its new bytes.
    #[test]
    fn a_read_now_reads_only_the_file_its_stamp_describes() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("data.bin");
        std::fs::write(&file, [1u8; 100]).unwrap();
        let (local, metrics, path) = files(dir.path());
        let stamp = local.stamp(&path).unwrap();
        let got = local
            .read_now(&path, &[0..4, 50..60], ObjectClass::Checkpoint, &stamp)
            .unwrap();
        assert_eq!(got[1].as_ref(), &[1u8; 10]);
        let s = metrics.snapshot();
        assert_eq!(
            (s.local_reads, s.class(ObjectClass::Checkpoint).requests),
            (1, 2)
        );

        let precondition = |err: &Error| {
            matches!(
                err,
                Error::Store {
                    source: object_store::Error::Precondition { .. },
                    ..
                }
            ) && err.to_string().contains("data.bin")
        };
        // Replaced by another file of the same size (another inode).
        let other = dir.path().join("other.bin");
        std::fs::write(&other, [2u8; 100]).unwrap();
        std::fs::rename(&other, &file).unwrap();
        let err = local
            .read_now(&path, &[0..4, 10..12], ObjectClass::Checkpoint, &stamp)
            .unwrap_err();
        assert!(precondition(&err), "{err}");
        // Rewritten in place, longer.
        let stamp = local.stamp(&path).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"more"))
            .unwrap();
        let err = local
            .read_now(&path, &[0..4, 10..12], ObjectClass::Checkpoint, &stamp)
            .unwrap_err();
        assert!(precondition(&err), "{err}");
    }
}
