//! One cache entry on disk: its name, its header and its checked blocks.
//!
//! ```text
//! name:   <start:016x>-<len:016x>-<xxh64(tag):016x>
//! header: "DARCACHE" | format u32 | header length u32
//!         | identity length u32 | identity | tag length u32 | tag
//!         | start u64 | length u64 | block size u32 | block count u32
//!         | xxh64 of each block (seeded with its index) u64 ...
//!         | xxh64 of the header so far u64
//! data:   `length` bytes
//! ```
//!
//! The header's checksum covers the object identity, the store's tag, the
//! extent's start and length and every block's checksum, so a renamed or
//! swapped entry, or one of another object or version, never passes. A
//! ranged read reads and checks only the blocks that hold the range.

use std::fs::File;
use std::hash::Hasher;
use std::ops::Range;
use std::os::unix::fs::FileExt;

use bytes::Bytes;
use twox_hash::XxHash64;

/// First bytes of every entry.
pub(super) const MAGIC: &[u8; 8] = b"DARCACHE";
/// The entry format this code writes and reads.
const FORMAT: u32 = 2;
/// Bytes per checked block.
const BLOCK: u64 = 64 * 1024;
/// The largest header read: identity and tag are short, and a block sum
/// costs 8 bytes per 64 KiB (an 8 GiB extent: 1 MiB).
const MAX_HEADER: u32 = 2 << 20;
/// Fixed bytes before the identity: magic, format, header length.
const PREFIX: usize = 16;

/// An entry's file name: the extent it holds and a hash of the tag it was
/// fetched under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EntryName {
    /// First byte of the extent in the object.
    pub start: u64,
    /// Bytes in the extent.
    pub len: u64,
    /// [`tag_hash`] of the store's tag for those bytes.
    pub tag: u64,
}

impl EntryName {
    /// The name of a file this code writes, if `name` is one.
    pub(super) fn parse(name: &str) -> Option<Self> {
        let mut parts = name.split('-');
        let mut field = || {
            let p = parts.next()?;
            (p.len() == 16 && p.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| u64::from_str_radix(p, 16).ok())
                .flatten()
        };
        let (start, len, tag) = (field()?, field()?, field()?);
        if parts.next().is_some() || len == 0 {
            return None;
        }
        start.checked_add(len)?;
        Some(Self { start, len, tag })
    }

    /// The file name.
    pub(super) fn render(&self) -> String {
        format!("{:016x}-{:016x}-{:016x}", self.start, self.len, self.tag)
    }

    /// Whether the extent holds all of `range`.
    pub(super) fn covers(&self, range: &Range<u64>) -> bool {
        self.start <= range.start && range.end <= self.start + self.len
    }
}

/// The hash of a store tag that entry names carry.
pub(super) fn tag_hash(tag: &str) -> u64 {
    XxHash64::oneshot(0x0074_6167, tag.as_bytes())
}

fn block_sum(index: u64, block: &[u8]) -> u64 {
    XxHash64::oneshot(index, block)
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&u32::try_from(s.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The whole file of an entry: header, then `data`.
pub(super) fn encode(identity: &str, tag: &str, start: u64, data: &[u8]) -> Vec<u8> {
    let blocks: Vec<u64> = data
        .chunks(BLOCK as usize)
        .enumerate()
        .map(|(i, b)| block_sum(i as u64, b))
        .collect();
    let header_len =
        PREFIX + 4 + identity.len() + 4 + tag.len() + 8 + 8 + 4 + 4 + 8 * blocks.len() + 8;
    let mut out = Vec::with_capacity(header_len + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&u32::try_from(header_len).unwrap_or(u32::MAX).to_le_bytes());
    put_str(&mut out, identity);
    put_str(&mut out, tag);
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&(BLOCK as u32).to_le_bytes());
    out.extend_from_slice(
        &u32::try_from(blocks.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    for b in &blocks {
        out.extend_from_slice(&b.to_le_bytes());
    }
    let mut h = XxHash64::with_seed(0);
    h.write(&out);
    out.extend_from_slice(&h.finish().to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// A parsed header whose checksum holds.
#[derive(Debug)]
pub(super) struct Header {
    /// Bytes before the data.
    pub len: u64,
    /// The object identity the entry was written for.
    pub identity: String,
    /// The store's tag of the bytes.
    pub tag: String,
    /// First byte of the extent in the object.
    pub start: u64,
    /// Bytes of data.
    pub data_len: u64,
    block: u64,
    sums: Vec<u64>,
}

/// Reads a little-endian integer of `N` bytes at `*at`, moving past it.
fn take<const N: usize>(buf: &[u8], at: &mut usize) -> Option<[u8; N]> {
    let bytes = buf.get(*at..at.checked_add(N)?)?;
    *at += N;
    bytes.try_into().ok()
}

fn take_u32(buf: &[u8], at: &mut usize) -> Option<u32> {
    take::<4>(buf, at).map(u32::from_le_bytes)
}

fn take_u64(buf: &[u8], at: &mut usize) -> Option<u64> {
    take::<8>(buf, at).map(u64::from_le_bytes)
}

fn take_str(buf: &[u8], at: &mut usize) -> Option<String> {
    let len = usize::try_from(take_u32(buf, at)?).ok()?;
    let s = buf.get(*at..at.checked_add(len)?)?;
    *at += len;
    String::from_utf8(s.to_vec()).ok()
}

/// Whether `file` starts with the entry magic: a file this code wrote,
/// whatever happened to it since.
pub(super) fn has_magic(file: &File) -> bool {
    let mut magic = [0u8; 8];
    file.read_exact_at(&mut magic, 0).is_ok() && &magic == MAGIC
}

/// The header of `file` (`file_len` bytes long), if it parses, its
/// checksum holds and the file is exactly header plus data long. Reads
/// only the header.
pub(super) fn read_header(file: &File, file_len: u64) -> Option<Header> {
    let mut prefix = [0u8; PREFIX];
    file.read_exact_at(&mut prefix, 0).ok()?;
    let mut at = 8;
    if &prefix[..8] != MAGIC || take_u32(&prefix, &mut at)? != FORMAT {
        return None;
    }
    let len = take_u32(&prefix, &mut at)?;
    if len > MAX_HEADER || u64::from(len) > file_len || (len as usize) < PREFIX + 8 {
        return None;
    }
    let mut buf = vec![0u8; len as usize];
    file.read_exact_at(&mut buf, 0).ok()?;
    let (body, sum) = buf.split_at(buf.len() - 8);
    let mut h = XxHash64::with_seed(0);
    h.write(body);
    if h.finish().to_le_bytes() != sum {
        return None;
    }
    let mut at = PREFIX;
    let identity = take_str(body, &mut at)?;
    let tag = take_str(body, &mut at)?;
    let start = take_u64(body, &mut at)?;
    let data_len = take_u64(body, &mut at)?;
    let block = u64::from(take_u32(body, &mut at)?);
    let count = usize::try_from(take_u32(body, &mut at)?).ok()?;
    if block == 0 || data_len.div_ceil(block) != count as u64 {
        return None;
    }
    let sums = (0..count)
        .map(|_| take_u64(body, &mut at))
        .collect::<Option<Vec<u64>>>()?;
    if at != body.len() || u64::from(len).checked_add(data_len)? != file_len {
        return None;
    }
    Some(Header {
        len: u64::from(len),
        identity,
        tag,
        start,
        data_len,
        block,
        sums,
    })
}

impl Header {
    /// Whether the entry is the one its name and the reader's key say:
    /// this identity, this tag, this extent.
    pub(super) fn is(&self, identity: &str, tag: &str, name: &EntryName) -> bool {
        self.identity == identity
            && self.tag == tag
            && self.start == name.start
            && self.data_len == name.len
            && tag_hash(&self.tag) == name.tag
    }

    /// `range` (inside the extent) from `file`, reading and checking only
    /// the blocks that hold it; `None` when a block fails its check.
    pub(super) fn read_range(&self, file: &File, range: &Range<u64>) -> Option<Bytes> {
        let from = range.start.checked_sub(self.start)?;
        let to = range.end.checked_sub(self.start)?;
        if to > self.data_len || from > to {
            return None;
        }
        if from == to {
            return Some(Bytes::new());
        }
        let first = from / self.block;
        let last = (to - 1) / self.block;
        let begin = first * self.block;
        let end = ((last + 1) * self.block).min(self.data_len);
        let mut buf = vec![0u8; usize::try_from(end - begin).ok()?];
        file.read_exact_at(&mut buf, self.len + begin).ok()?;
        for (i, block) in buf.chunks(self.block as usize).enumerate() {
            let index = first + i as u64;
            if block_sum(index, block) != *self.sums.get(usize::try_from(index).ok()?)? {
                return None;
            }
        }
        let out = Bytes::from(buf);
        Some(out.slice(usize::try_from(from - begin).ok()?..usize::try_from(to - begin).ok()?))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file_of(bytes: &[u8]) -> (tempfile::NamedTempFile, u64) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        (f, bytes.len() as u64)
    }

    #[test]
    fn names_round_trip_and_foreign_names_do_not_parse() {
        let n = EntryName {
            start: 5,
            len: 10,
            tag: tag_hash("etag:x"),
        };
        assert_eq!(EntryName::parse(&n.render()), Some(n));
        for bad in [
            "notes.txt",
            "0000000000000005-000000000000000a",
            "0000000000000005-0000000000000000-0000000000000000",
            "ffffffffffffffff-0000000000000002-0000000000000000",
            "0000000000000005-000000000000000a-000000000000000g",
            "0000000000000005-000000000000000a-0000000000000000-x",
        ] {
            assert_eq!(EntryName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ranged_reads_check_only_their_blocks_and_every_damage_fails() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let bytes = encode("id", "etag:a", 1_000, &data);
        let name = EntryName {
            start: 1_000,
            len: data.len() as u64,
            tag: tag_hash("etag:a"),
        };
        let (f, len) = file_of(&bytes);
        let h = read_header(f.as_file(), len).unwrap();
        assert!(h.is("id", "etag:a", &name));
        assert!(!h.is("id", "etag:b", &name));
        assert!(!h.is("id2", "etag:a", &name));
        let moved = EntryName { start: 0, ..name };
        assert!(!h.is("id", "etag:a", &moved));
        let got = h
            .read_range(f.as_file(), &(1_000 + 70_000..1_000 + 70_100))
            .unwrap();
        assert_eq!(&got[..], &data[70_000..70_100]);
        assert_eq!(h.read_range(f.as_file(), &(0..10)), None);

        // A flipped byte in the header or in a block read fails; one in a
        // block not read does not matter to that read.
        let header_len = h.len as usize;
        for (at, read, fails) in [
            (20, 70_000..70_100, true),
            (header_len + 70_050, 70_000..70_100, true),
            (header_len + 150_000, 70_000..70_100, false),
        ] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            let (f, len) = file_of(&bad);
            let got = read_header(f.as_file(), len)
                .and_then(|h| h.read_range(f.as_file(), &(1_000 + read.start..1_000 + read.end)));
            assert_eq!(got.is_none(), fails, "damage at {at}");
        }
        // Truncated or extended: the length no longer matches.
        let (f, len) = file_of(&bytes[..bytes.len() - 1]);
        assert!(read_header(f.as_file(), len).is_none());
        let mut longer = bytes.clone();
        longer.push(0);
        let (f, len) = file_of(&longer);
        assert!(read_header(f.as_file(), len).is_none());
    }
}
