//! Feeds arbitrary bytes to every dar-dv decoder: descriptors, Z85 (inline
//! DVs and `u` paths), DV file framing, and (through correctly framed and
//! checksummed records, so the CRC does not hide it) the roaring bitmap
//! parser. Anything decoded is then queried for selections and masks.
//! The only acceptable outcomes are `Ok` or an error blaming the input; a
//! panic is a finding, and so is `DvError::InvalidArgument` (the target
//! hands every decoder input that fits its call: the error would be
//! dar-dv's own).

#![no_main]

use dar_dv::{DeletedRows, DvDescriptor, DvError, decode_file_bytes, decode_inline};
use libfuzzer_sys::fuzz_target;

/// The value, or `None` for an error that blames the input.
fn judged<T>(result: Result<T, DvError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e @ DvError::InvalidArgument { .. }) => panic!("internal error: {e}"),
        Err(_) => None,
    }
}

fn u16_at(data: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([*data.get(at).unwrap_or(&0), *data.get(at + 1).unwrap_or(&0)])
}

/// Exercises the queries a scan makes on decoded rows.
fn query(rows: &DeletedRows, hint: u16) {
    let end = rows.max().map_or(16, |m| m.saturating_add(2));
    let start = end.saturating_sub(u64::from(hint) + 64);
    let selectors = rows.selectors(start..end);
    let covered: u64 = selectors.iter().map(|s| s.row_count as u64).sum();
    assert_eq!(covered, end - start);
    let skipped: u64 = selectors.iter().filter(|s| s.skip).map(|s| s.row_count as u64).sum();
    assert_eq!(skipped, rows.deleted_in(start..end));
    let selection = rows.selection(start..end);
    assert_eq!(selection.row_count() as u64, rows.surviving_in(start..end));
    assert_eq!(selection.skipped_row_count() as u64, skipped);
    if end - start <= 1 << 16 {
        let mask = rows.mask(start..end);
        assert_eq!(mask.len() as u64, end - start);
        assert_eq!(mask.true_count() as u64, rows.surviving_in(start..end));
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let card = i64::from(u16_at(rest, 0));
    let size = i64::from(u16_at(rest, 2));
    let body = rest.get(4..).unwrap_or(&[]);
    match mode % 4 {
        // Inline DV: the body as Z85 text.
        0 => {
            let text = String::from_utf8_lossy(body);
            if let Ok(dv) = DvDescriptor::try_new("i", text, None, size, card) {
                if let Some(rows) = judged(decode_inline(&dv)) {
                    query(&rows, u16_at(rest, 0));
                }
            }
        }
        // Raw DV file bytes with an arbitrary descriptor.
        1 => {
            let offset = i64::from(u16_at(rest, 0) % 64);
            let start = if mode & 0x10 != 0 { offset as u64 } else { 0 };
            if let Ok(dv) = DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", Some(offset), size, card) {
                if let Some(rows) = judged(decode_file_bytes(&dv, "fuzz.bin", start, body)) {
                    query(&rows, u16_at(rest, 2));
                }
            }
        }
        // The body as a bitmap inside a valid frame: reaches the roaring parser.
        2 => {
            let mut file = vec![1_u8];
            file.extend_from_slice(&(body.len() as u32).to_be_bytes());
            file.extend_from_slice(body);
            file.extend_from_slice(&crc32fast::hash(body).to_be_bytes());
            let decode = |card: i64| {
                let dv = DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", Some(1), body.len() as i64, card)?;
                decode_file_bytes(&dv, "fuzz.bin", 0, &file)
            };
            // A wrong cardinality is only reported after the full decode:
            // retry with the decoded one so that the queries run too.
            let rows = match decode(card) {
                Err(DvError::CardinalityMismatch { actual, .. }) => decode(actual as i64),
                other => other,
            };
            if let Some(rows) = judged(rows) {
                query(&rows, u16_at(rest, 2));
            }
        }
        // Descriptor fields and path resolution.
        _ => {
            let text = String::from_utf8_lossy(body);
            let kind = ["u", "p", "i", "r", ""][usize::from(mode >> 4) % 5];
            if let Ok(dv) = DvDescriptor::try_new(kind, text, Some(card - 3), size - 7, card) {
                let _ = dv.unique_id();
                let _ = dv.uuid_and_prefix();
                if let Ok(root) = url::Url::parse("s3://bucket/table") {
                    let _ = dv.file_url(&root);
                }
                let _ = dar_dv::fetch_range(&dv);
            }
        }
    }
});
