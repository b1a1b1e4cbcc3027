//! The on-disk tier: fetched extents as files under a directory, so that
//! later processes reuse them.
//!
//! ```text
//! <dir>/<xxh64(key):016x>/<start:016x>-<len:016x>
//!   header: "DARCACHE" | format u32 | key length u32 | key | tag length u32 | tag
//!           | data length u64 | xxh64(header so far, data) u64
//!   data
//! ```
//!
//! The key (store URL, path, size, version) is written in full and compared
//! on read, so a hash collision is a miss. Every read checks the header, the
//! length and the checksum: a truncated or corrupt file is deleted and
//! reported as corrupt, and the range is fetched again, never returned.
//! Files are written to a temporary name and renamed, so readers in other
//! processes never see half a file. The directory is bounded by a byte
//! budget: when an insert takes it over, the oldest files (by modification
//! time) go until it is at 80% of the budget.

use std::fs;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use twox_hash::XxHash64;

use super::ObjectKey;

const MAGIC: &[u8; 8] = b"DARCACHE";
const FORMAT: u32 = 1;

/// What a disk lookup found.
#[derive(Debug)]
pub(super) enum DiskRead {
    /// The range, from a valid file.
    Hit(Bytes),
    /// No file covers the range.
    Miss,
    /// A covering file failed its checks and was deleted.
    Corrupt,
}

/// The disk tier of one cache directory.
#[derive(Debug)]
pub(super) struct DiskTier {
    dir: PathBuf,
    budget: u64,
    bytes: AtomicU64,
}

fn key_text(key: &ObjectKey) -> String {
    format!(
        "{}\n{}\n{}\n{}",
        key.store,
        key.path,
        key.size.map_or(String::from("-"), |s| s.to_string()),
        key.version.as_deref().unwrap_or("-")
    )
}

/// Every cache file under `dir` (one folder per object) with its metadata.
fn cache_files(dir: &Path) -> impl Iterator<Item = (fs::Metadata, PathBuf)> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|o| fs::read_dir(o.path()).ok())
        .flat_map(|files| files.flatten())
        .filter_map(|f| Some((f.metadata().ok()?, f.path())))
}

fn dir_size(dir: &Path) -> u64 {
    cache_files(dir).map(|(m, _)| m.len()).sum()
}

fn parse_name(name: &str) -> Option<Range<u64>> {
    let (start, len) = name.split_once('-')?;
    if start.len() != 16 || len.len() != 16 {
        return None;
    }
    let start = u64::from_str_radix(start, 16).ok()?;
    let len = u64::from_str_radix(len, 16).ok()?;
    Some(start..start.checked_add(len)?)
}

/// Reads a little-endian integer of `N` bytes at `*at`, moving past it.
fn take<const N: usize>(buf: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let bytes = buf.get(*at..*at + N)?;
    *at += N;
    bytes.try_into().ok()
}

fn take_str<'a>(buf: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(u32::from_le_bytes(take::<4>(buf, at)?)).ok()?;
    let s = buf.get(*at..*at + len)?;
    *at += len;
    Some(s)
}

/// The checksum of a file: its header up to the checksum, then its data.
fn checksum(header: &[u8], data: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = XxHash64::with_seed(0);
    h.write(header);
    h.write(data);
    h.finish()
}

/// The data of a cache file for `key`, if its header, length and checksum
/// hold.
fn decode(file: &[u8], key: &str) -> Option<Bytes> {
    let mut at = 0;
    if take::<8>(file, &mut at)? != *MAGIC || u32::from_le_bytes(take(file, &mut at)?) != FORMAT {
        return None;
    }
    if take_str(file, &mut at)? != key.as_bytes() {
        return None;
    }
    take_str(file, &mut at)?;
    let len = usize::try_from(u64::from_le_bytes(take(file, &mut at)?)).ok()?;
    let header_end = at;
    let sum = u64::from_le_bytes(take(file, &mut at)?);
    let data = file.get(at..)?;
    (data.len() == len && checksum(&file[..header_end], data) == sum)
        .then(|| Bytes::copy_from_slice(data))
}

fn encode(key: &str, tag: Option<&str>, data: &[u8]) -> Vec<u8> {
    let tag = tag.unwrap_or("");
    let mut out = Vec::with_capacity(40 + key.len() + tag.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    for s in [key, tag] {
        out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let sum = checksum(&out, data);
    out.extend_from_slice(&sum.to_le_bytes());
    out.extend_from_slice(data);
    out
}

impl DiskTier {
    /// The tier over `dir` (created if missing), holding at most `budget`
    /// bytes of files.
    pub(super) fn open(dir: &Path, budget: u64) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            budget,
            bytes: AtomicU64::new(dir_size(dir)),
        })
    }

    /// The directory.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes of cache files, as this process counts them.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    fn object_dir(&self, key: &str) -> PathBuf {
        self.dir
            .join(format!("{:016x}", XxHash64::oneshot(0, key.as_bytes())))
    }

    /// `range` of `key` from a file that covers it. Blocking.
    pub(super) fn get(&self, key: &ObjectKey, range: &Range<u64>) -> DiskRead {
        let text = key_text(key);
        let dir = self.object_dir(&text);
        let Ok(files) = fs::read_dir(&dir) else {
            return DiskRead::Miss;
        };
        let covering = files.flatten().find_map(|f| {
            let name = f.file_name();
            let held = parse_name(name.to_str()?)?;
            (held.start <= range.start && range.end <= held.end).then(|| (f.path(), held))
        });
        let Some((path, held)) = covering else {
            return DiskRead::Miss;
        };
        let Ok(file) = fs::read(&path) else {
            return DiskRead::Miss;
        };
        match decode(&file, &text).filter(|d| d.len() as u64 == held.end - held.start) {
            Some(data) => {
                let from = (range.start - held.start) as usize;
                let to = (range.end - held.start) as usize;
                DiskRead::Hit(data.slice(from..to))
            }
            None => {
                if fs::remove_file(&path).is_ok() {
                    self.bytes
                        .fetch_sub((file.len() as u64).min(self.bytes()), Ordering::Relaxed);
                }
                DiskRead::Corrupt
            }
        }
    }

    /// Writes `data`, the bytes of `key` from `start`. Blocking; failures
    /// (a full disk, a read-only directory) only mean the bytes are not
    /// kept.
    pub(super) fn insert(&self, key: &ObjectKey, start: u64, data: &[u8], tag: Option<&str>) {
        if data.is_empty() || data.len() as u64 > self.budget {
            return;
        }
        let text = key_text(key);
        let dir = self.object_dir(&text);
        let name = format!("{start:016x}-{:016x}", data.len());
        let path = dir.join(&name);
        if path.exists() {
            return;
        }
        let encoded = encode(&text, tag, data);
        // Written aside and renamed into place: readers in other processes
        // never see half a file.
        let written = (|| -> io::Result<()> {
            fs::create_dir_all(&dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
            tmp.write_all(&encoded)?;
            tmp.persist(&path).map_err(|e| e.error)?;
            Ok(())
        })();
        if written.is_ok() {
            let total = self
                .bytes
                .fetch_add(encoded.len() as u64, Ordering::Relaxed)
                + encoded.len() as u64;
            if total > self.budget {
                self.trim();
            }
        }
    }

    /// Deletes the oldest files until the directory holds at most 80% of
    /// the budget.
    fn trim(&self) {
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = cache_files(&self.dir)
            .filter_map(|(m, path)| Some((m.modified().ok()?, m.len(), path)))
            .collect();
        files.sort();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        let target = self.budget / 5 * 4;
        for (_, len, path) in files {
            if total <= target {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
        self.bytes.store(total, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ObjectKey {
        ObjectKey {
            store: "s3://b".into(),
            path: "t/a.parquet".into(),
            size: Some(100),
            version: None,
        }
    }

    #[test]
    fn roundtrip_and_every_damage_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let tier = DiskTier::open(dir.path(), 1 << 20).unwrap();
        let data: Vec<u8> = (0..100u8).collect();
        tier.insert(&key(), 10, &data, Some("e1"));
        let DiskRead::Hit(b) = tier.get(&key(), &(20..30)) else {
            panic!("expected a hit");
        };
        assert_eq!(&b[..], &data[10..20]);
        assert!(matches!(tier.get(&key(), &(5..30)), DiskRead::Miss));
        let other = ObjectKey {
            size: Some(101),
            ..key()
        };
        assert!(matches!(tier.get(&other, &(20..30)), DiskRead::Miss));

        // Every truncation and every flipped byte is a corrupt read, and the
        // file is gone afterwards.
        let file = fs::read_dir(tier.object_dir(&key_text(&key())))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let good = fs::read(&file).unwrap();
        for damage in 0..good.len() + 1 {
            let bad = if damage == good.len() {
                good[..good.len() - 1].to_vec()
            } else {
                let mut b = good.clone();
                b[damage] ^= 0x40;
                b
            };
            fs::write(&file, &bad).unwrap();
            let got = tier.get(&key(), &(20..30));
            assert!(
                matches!(got, DiskRead::Corrupt),
                "damage at {damage}: {got:?}"
            );
            assert!(!file.exists());
        }
    }

    #[test]
    fn the_budget_trims_oldest_files() {
        let dir = tempfile::tempdir().unwrap();
        let tier = DiskTier::open(dir.path(), 10_000).unwrap();
        for i in 0..20u64 {
            tier.insert(&key(), i * 1000, &[7u8; 1000], None);
            assert!(dir_size(dir.path()) <= 10_000 + 1100);
        }
        assert!(tier.bytes() <= 10_000);
        assert_eq!(tier.bytes(), dir_size(dir.path()));
        // The newest survives.
        assert!(matches!(
            tier.get(&key(), &(19_000..19_010)),
            DiskRead::Hit(_)
        ));
    }
}
