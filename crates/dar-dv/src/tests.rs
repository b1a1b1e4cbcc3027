//! Unit tests: the protocol digest's appendix vectors and every bad input.

use parquet::arrow::arrow_reader::RowSelector;

use crate::*;

/// Appendix A: kernel-rs `table-with-dv-small`'s 45-byte DV file.
const FILE_A: [u8; 45] = [
    0x01, // version
    0x00, 0x00, 0x00, 0x24, // dataSize 36
    0xd1, 0xd3, 0x39, 0x64, // magic
    0x01, 0, 0, 0, 0, 0, 0, 0, // numBuckets 1
    0, 0, 0, 0, // key 0
    0x3a, 0x30, 0, 0, // cookie 12346
    0x01, 0, 0, 0, // 1 container
    0, 0, 0x01, 0, // key 0, cardinality - 1 = 1
    0x10, 0, 0, 0, // offset header
    0, 0, 0x09, 0, // values 0, 9
    0x2a, 0x67, 0x18, 0x46, // CRC-32
];

fn descriptor_a() -> DvDescriptor {
    DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", Some(1), 36, 2).unwrap()
}

const INLINE_B: &str = "^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L";

fn rows(deleted: &DeletedRows) -> Vec<u64> {
    deleted.iter().collect()
}

#[test]
fn vector_a_file() {
    let dv = descriptor_a();
    assert_eq!(dv.unique_id(), "uvBn[lx{q8@P<9BNH/isA@1");
    let root = url::Url::parse("file:///tables/t/").unwrap();
    assert_eq!(
        dv.file_url(&root).unwrap().unwrap().as_str(),
        "file:///tables/t/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
    );
    // Whole file, the exact fetch range (same here), and the bare record.
    assert_eq!(fetch_range(&dv), 0..45);
    assert_eq!(record_range(&dv), 1..45);
    assert_eq!(
        rows(&decode_file_bytes(&dv, "a.bin", 0, &FILE_A).unwrap()),
        [0, 9]
    );
    assert_eq!(
        rows(&decode_file_bytes(&dv, "a.bin", 1, &FILE_A[1..]).unwrap()),
        [0, 9]
    );
    // The encoder reproduces the file byte for byte.
    let mut writer = DvFileWriter::new();
    let record = writer.add(&DeletedRows::from_iter([0, 9])).unwrap();
    assert_eq!(
        record,
        DvRecord {
            offset: 1,
            size_in_bytes: 36,
            cardinality: 2
        }
    );
    assert_eq!(writer.finish(), FILE_A);
}

#[test]
fn vector_b_inline() {
    let dv = DvDescriptor::try_new("i", INLINE_B, None, 44, 6).unwrap();
    assert_eq!(dv.unique_id(), format!("i{INLINE_B}"));
    assert_eq!(
        dv.file_url(&url::Url::parse("s3://b/t").unwrap()).unwrap(),
        None
    );
    let deleted = decode_inline(&dv).unwrap();
    assert_eq!(rows(&deleted), [3, 4, 7, 11, 18, 29]);
    // Our encoder writes the same bytes, hence the same Z85 text.
    let again = DvDescriptor::inline(&deleted).unwrap();
    assert_eq!(again.path_or_inline_dv(), INLINE_B);
    assert_eq!((again.size_in_bytes(), again.cardinality()), (44, 6));
}

#[test]
fn vector_c_uuid_path_and_unique_id() {
    let dv = DvDescriptor::try_new("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(4), 36, 2).unwrap();
    assert_eq!(dv.unique_id(), "uab^-aqEH.-t@S}K{vb[*k^@4");
    let (uuid, prefix) = dv.uuid_and_prefix().unwrap().unwrap();
    assert_eq!(
        (uuid.to_string().as_str(), prefix),
        ("d2c639aa-8816-431a-aaf6-d3fe2512ff61", "ab")
    );
    for root in ["s3://bucket/table", "s3://bucket/table/"] {
        let root = url::Url::parse(root).unwrap();
        assert_eq!(
            dv.file_url(&root).unwrap().unwrap().as_str(),
            "s3://bucket/table/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
        );
    }
}

#[test]
fn absent_offset_means_first_record() {
    let dv = DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", None, 36, 2).unwrap();
    assert_eq!(dv.unique_id(), "uvBn[lx{q8@P<9BNH/isA");
    assert_eq!(dv.effective_offset(), 1);
    assert_eq!(
        rows(&decode_file_bytes(&dv, "a.bin", 0, &FILE_A).unwrap()),
        [0, 9]
    );
}

#[test]
fn p_paths_are_absolute_uris() {
    let dv = DvDescriptor::try_new("p", "s3://other/dir/my%20dv.bin", Some(1), 36, 2).unwrap();
    let root = url::Url::parse("s3://bucket/table").unwrap();
    let url = dv.file_url(&root).unwrap().unwrap();
    assert_eq!(url.as_str(), "s3://other/dir/my%20dv.bin");
    // A DV on another bucket cannot be read through the table's store.
    assert!(matches!(
        store_path(&dv, &root, &url),
        Err(DvError::InvalidPath { .. })
    ));
    let same = url::Url::parse("s3://bucket/dir/my%20dv.bin").unwrap();
    assert_eq!(
        store_path(&dv, &root, &same).unwrap().as_ref(),
        "dir/my dv.bin"
    );
    let bad = DvDescriptor::try_new("p", "not a uri", Some(1), 36, 2).unwrap();
    assert!(matches!(
        bad.file_url(&root),
        Err(DvError::InvalidPath { .. })
    ));
}

#[test]
fn empty_descriptor_decodes_to_nothing() {
    let dv = DvDescriptor::try_new("i", "", None, 0, 0).unwrap();
    assert!(dv.is_empty());
    assert!(decode_inline(&dv).unwrap().is_empty());
    assert_eq!(DvDescriptor::inline(&DeletedRows::default()).unwrap(), dv);
}

#[test]
fn bad_descriptors() {
    let err = DvDescriptor::try_new("r", "x", None, 1, 1).unwrap_err();
    assert!(
        matches!(&err, DvError::UnknownStorageType { storage_type, .. } if storage_type == "r")
    );
    assert!(err.to_string().contains("\"r\""), "{err}");
    for (offset, size, card, field) in [
        (Some(-1), 36, 2, "offset"),
        (Some(1), -36, 2, "sizeInBytes"),
        (Some(1), 1 << 40, 2, "sizeInBytes"),
        (Some(1), 36, -2, "cardinality"),
    ] {
        let err =
            DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", offset, size, card).unwrap_err();
        assert!(
            matches!(err, DvError::InvalidDescriptor { field: f, .. } if f == field),
            "{err}"
        );
    }
    // A `u` path too short to hold a UUID, or with a non-Z85 UUID.
    let short = DvDescriptor::try_new("u", "abc", Some(1), 36, 2).unwrap();
    assert!(matches!(
        short.uuid_and_prefix(),
        Err(DvError::InvalidPath { .. })
    ));
    let bad = DvDescriptor::try_new("u", "ab~Bn[lx{q8@P<9BNH/isA", Some(1), 36, 2).unwrap();
    let err = bad.uuid_and_prefix().unwrap_err();
    assert!(
        matches!(err, DvError::InvalidZ85 { position: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("uab~Bn[lx"), "{err}");
}

#[test]
fn bad_inline_payloads() {
    type Case = (&'static str, i64, i64, fn(&DvError) -> bool);
    let cases: [Case; 5] = [
        // Not a multiple of 5 characters.
        (&INLINE_B[..54], 44, 6, |e| {
            matches!(e, DvError::InvalidZ85 { position: 54, .. })
        }),
        // A character outside the alphabet.
        (
            "~Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
            44,
            6,
            |e| matches!(e, DvError::InvalidZ85 { position: 0, .. }),
        ),
        // sizeInBytes larger than the payload.
        (INLINE_B, 48, 6, |e| {
            matches!(
                e,
                DvError::Truncated {
                    expected: 48,
                    actual: 44,
                    ..
                }
            )
        }),
        // Payload longer than sizeInBytes plus padding: trailing bytes.
        (INLINE_B, 40, 6, |e| {
            matches!(e, DvError::TrailingBytes { extra: 4, .. })
        }),
        // Cardinality disagrees.
        (INLINE_B, 44, 7, |e| {
            matches!(
                e,
                DvError::CardinalityMismatch {
                    expected: 7,
                    actual: 6,
                    ..
                }
            )
        }),
    ];
    for (payload, size, card, check) in cases {
        let dv = DvDescriptor::try_new("i", payload, None, size, card).unwrap();
        let err = decode_inline(&dv).unwrap_err();
        assert!(check(&err), "{payload} {size} {card}: {err:?}");
        assert!(matches!(err.dv(), DvSource::Inline { .. }));
        assert!(
            err.to_string().starts_with("inline DV i^Bg9")
                || err.to_string().starts_with("inline DV i~"),
            "{err}"
        );
    }
    // Row index bound from the caller (the file's numRecords).
    let dv = DvDescriptor::try_new("i", INLINE_B, None, 44, 6)
        .unwrap()
        .with_row_count(29);
    let err = decode_inline(&dv).unwrap_err();
    assert!(
        matches!(
            err,
            DvError::RowIndexOutOfRange {
                row: 29,
                row_count: 29,
                ..
            }
        ),
        "{err}"
    );
    let ok = DvDescriptor::try_new("i", INLINE_B, None, 44, 6)
        .unwrap()
        .with_row_count(30);
    assert_eq!(decode_inline(&ok).unwrap().len(), 6);
}

/// Re-frames a corrupted bitmap with a correct size and checksum, so that
/// the bitmap decoder (not the framing) must catch it.
fn framed(bitmap: &[u8]) -> Vec<u8> {
    let mut file = vec![1];
    file.extend_from_slice(&(bitmap.len() as u32).to_be_bytes());
    file.extend_from_slice(bitmap);
    file.extend_from_slice(&crc32fast::hash(bitmap).to_be_bytes());
    file
}

fn decode_a_like(file: &[u8], size: i64, card: i64) -> Result<DeletedRows> {
    let dv = DvDescriptor::try_new("u", "vBn[lx{q8@P<9BNH/isA", Some(1), size, card).unwrap();
    decode_file_bytes(&dv, "dv/a.bin", 0, file)
}

#[test]
fn wrong_decoder_for_the_storage_type() {
    let inline = DvDescriptor::try_new("i", INLINE_B, None, 44, 6).unwrap();
    let err = decode_file_bytes(&inline, "x.bin", 0, &FILE_A).unwrap_err();
    assert!(matches!(err, DvError::InvalidArgument { .. }), "{err:?}");
    let err = decode_inline(&descriptor_a()).unwrap_err();
    assert!(matches!(err, DvError::InvalidArgument { .. }), "{err:?}");
    // Bytes that start after the record cannot hold it.
    let err = decode_file_bytes(&descriptor_a(), "a.bin", 2, &FILE_A[2..]).unwrap_err();
    assert!(matches!(err, DvError::InvalidArgument { .. }), "{err:?}");
}

/// Regression (issue 10, item 6): a cardinality of 0 is not a licence to
/// skip a DV whose bitmap deletes rows; the mismatch is an error.
#[test]
fn cardinality_zero_with_deletions_is_an_error() {
    let zero = DvDescriptor::try_new("i", INLINE_B, None, 44, 0).unwrap();
    assert!(!zero.is_empty());
    let err = decode_inline(&zero).unwrap_err();
    assert!(
        matches!(err, DvError::CardinalityMismatch { .. }),
        "{err:?}"
    );
    let zero_file = DvDescriptor::try_new("u", "ab0000000000000000000", Some(1), 36, 0).unwrap();
    assert!(!zero_file.is_empty());
}

#[test]
fn bad_file_framing() {
    let mut version = FILE_A;
    version[0] = 2;
    assert!(matches!(
        decode_a_like(&version, 36, 2),
        Err(DvError::BadVersion { found: 2, .. })
    ));
    let mut size = FILE_A;
    size[4] = 0x23;
    assert!(matches!(
        decode_a_like(&size, 36, 2),
        Err(DvError::SizeMismatch {
            in_file: 35,
            in_descriptor: 36,
            ..
        })
    ));
    let mut crc = FILE_A;
    crc[44] ^= 1;
    assert!(matches!(
        decode_a_like(&crc, 36, 2),
        Err(DvError::ChecksumMismatch { .. })
    ));
    let mut flipped = FILE_A;
    flipped[40] = 8; // value 9 -> 8: checksum catches it
    assert!(matches!(
        decode_a_like(&flipped, 36, 2),
        Err(DvError::ChecksumMismatch { .. })
    ));
    for cut in [0, 1, 5, 44] {
        let err = decode_a_like(&FILE_A[..cut], 36, 2).unwrap_err();
        assert!(
            matches!(err, DvError::Truncated { .. }),
            "cut {cut}: {err:?}"
        );
    }
    // The exact record range with a byte too many is trailing garbage (from
    // byte 0, longer input is a whole file whose next record follows).
    let mut long = FILE_A.to_vec();
    long.push(0);
    let dv = descriptor_a();
    assert_eq!(decode_file_bytes(&dv, "a.bin", 0, &long).unwrap().len(), 2);
    let err = decode_file_bytes(&dv, "a.bin", 1, &long[1..]).unwrap_err();
    assert!(
        matches!(err, DvError::TrailingBytes { extra: 1, .. }),
        "{err:?}"
    );
    let err = decode_a_like(&FILE_A, 36, 3).unwrap_err();
    assert!(matches!(
        err,
        DvError::CardinalityMismatch {
            expected: 3,
            actual: 2,
            ..
        }
    ));
    // Every file error names the file and the offset.
    assert!(
        err.to_string().starts_with("DV file dv/a.bin at offset 1:"),
        "{err}"
    );
}

#[test]
fn bad_bitmaps() {
    let bitmap = &FILE_A[5..41];
    let mut magic = bitmap.to_vec();
    magic[0] = 0xd0; // the native-format magic
    let err = decode_a_like(&framed(&magic), 36, 2).unwrap_err();
    assert!(
        matches!(
            err,
            DvError::BadMagic {
                found: 1_681_511_376,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("native"), "{err}");
    // Trailing bytes after the roaring array (inside a correctly framed record).
    let mut trailing = bitmap.to_vec();
    trailing.extend_from_slice(&[0, 0]);
    let err = decode_a_like(&framed(&trailing), 38, 2).unwrap_err();
    assert!(
        matches!(err, DvError::TrailingBytes { extra: 2, .. }),
        "{err:?}"
    );
    // Too few buckets' bytes for the declared count.
    let mut two_buckets = bitmap.to_vec();
    two_buckets[4] = 2;
    let err = decode_a_like(&framed(&two_buckets), 36, 2).unwrap_err();
    assert!(
        matches!(
            err,
            DvError::Truncated {
                what: "bucket key",
                ..
            }
        ),
        "{err:?}"
    );
    // A bad roaring cookie.
    let mut cookie = bitmap.to_vec();
    cookie[16] = 0x99;
    let err = decode_a_like(&framed(&cookie), 36, 2).unwrap_err();
    assert!(matches!(err, DvError::Bitmap { index: 0, .. }), "{err:?}");
    // A bucket key at or above 2^31, and a repeated key.
    let mut key = bitmap.to_vec();
    key[15] = 0x80;
    let err = decode_a_like(&framed(&key), 36, 2).unwrap_err();
    assert!(
        matches!(
            err,
            DvError::BadBucketKey {
                key: 0x8000_0000,
                ..
            }
        ),
        "{err:?}"
    );
    let mut repeated = bitmap.to_vec();
    repeated[4] = 2;
    repeated.extend_from_slice(&bitmap[12..]);
    let err = decode_a_like(&framed(&repeated), 60, 2).unwrap_err();
    assert!(
        matches!(
            err,
            DvError::BadBucketKey {
                index: 1,
                key: 0,
                ..
            }
        ),
        "{err:?}"
    );
    // Too short to hold a magic number.
    let err = decode_a_like(&framed(&bitmap[..3]), 3, 2).unwrap_err();
    assert!(
        matches!(
            err,
            DvError::Truncated {
                what: "bitmap magic",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn several_records_in_one_file() {
    let sets: [&[u64]; 3] = [&[0, 9], &[], &[1, u64::from(u32::MAX) + 7, 1 << 33]];
    let mut writer = DvFileWriter::new();
    let records: Vec<_> = sets
        .iter()
        .map(|set| writer.add(&set.iter().copied().collect()).unwrap())
        .collect();
    let file = writer.finish();
    for (set, record) in sets.iter().zip(&records) {
        let dv = DvDescriptor::uuid_file("xy", uuid::Uuid::nil(), record);
        let from_file = decode_file_bytes(&dv, "f.bin", 0, &file).unwrap();
        let range = fetch_range(&dv);
        let from_range = decode_file_bytes(
            &dv,
            "f.bin",
            range.start,
            &file[range.start as usize..range.end as usize],
        )
        .unwrap();
        assert_eq!(rows(&from_file), *set);
        assert_eq!(rows(&from_range), *set);
    }
    assert_eq!(
        records[1].offset,
        records[0].offset + 8 + u64::from(records[0].size_in_bytes)
    );
}

#[test]
fn selections_and_masks() {
    let deleted = DeletedRows::from_iter([0, 1, 2, 5, 9]);
    let selectors: Vec<RowSelector> = deleted.selection(0..10).into();
    assert_eq!(
        selectors,
        [
            RowSelector::skip(3),
            RowSelector::select(2),
            RowSelector::skip(1),
            RowSelector::select(3),
            RowSelector::skip(1)
        ]
    );
    assert_eq!(deleted.selectors(3..5), [RowSelector::select(2)]);
    assert!(deleted.selectors(4..4).is_empty());
    assert_eq!(deleted.deleted_in(1..6), 3);
    assert_eq!(deleted.surviving_in(1..6), 2);
    let mask: Vec<_> = deleted.mask(4..10).iter().map(Option::unwrap).collect();
    assert_eq!(mask, [true, false, true, true, true, false]);
    assert_eq!(deleted.mask(0..0).len(), 0);
}

#[test]
fn descriptor_serializes_as_the_log_writes_it_and_validates_on_the_way_back() {
    let dv = descriptor_a();
    let json = serde_json::to_string(&dv).unwrap();
    assert_eq!(
        json,
        r#"{"storageType":"u","pathOrInlineDv":"vBn[lx{q8@P<9BNH/isA","offset":1,"sizeInBytes":36,"cardinality":2}"#
    );
    let back: DvDescriptor = serde_json::from_str(&json).unwrap();
    assert_eq!(back, dv);
    assert_eq!(
        back.unique_id(),
        unique_id("u", "vBn[lx{q8@P<9BNH/isA", Some(1))
    );
    let inline = DvDescriptor::try_new("i", INLINE_B, None, 44, 6).unwrap();
    let json = serde_json::to_string(&inline).unwrap();
    assert!(!json.contains("offset"), "{json}");
    assert_eq!(serde_json::from_str::<DvDescriptor>(&json).unwrap(), inline);
    // What try_new refuses, deserialization refuses, naming the field.
    let bad = r#"{"storageType":"x","pathOrInlineDv":"a","sizeInBytes":1,"cardinality":1}"#;
    let err = serde_json::from_str::<DvDescriptor>(bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("storage type") || err.contains("'x'"), "{err}");
    let bad = r#"{"storageType":"u","pathOrInlineDv":"a","sizeInBytes":-1,"cardinality":1}"#;
    let err = serde_json::from_str::<DvDescriptor>(bad)
        .unwrap_err()
        .to_string();
    assert!(err.contains("sizeInBytes"), "{err}");
}

#[test]
fn unique_id_of_raw_fields() {
    // Protocol digest appendix C.
    assert_eq!(
        unique_id("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(4)),
        "uab^-aqEH.-t@S}K{vb[*k^@4"
    );
    assert_eq!(unique_id("i", "xyz", None), "ixyz");
}

/// A replaced DV: the rows the new one deletes and the old did not are
/// read (all others skipped), and the other way round.
#[test]
fn all_but_difference_reads_only_the_changed_rows() {
    let old = DeletedRows::from_iter([1, 2, 5]);
    let new = DeletedRows::from_iter([2, 5, 7, 9]);
    let newly_deleted = DeletedRows::all_but_difference(&new, Some(&old), 10);
    assert_eq!(rows(&newly_deleted), [0, 1, 2, 3, 4, 5, 6, 8]);
    assert_eq!(newly_deleted.surviving_in(0..10), 2);
    let restored = DeletedRows::all_but_difference(&old, Some(&new), 10);
    assert_eq!(restored.surviving_in(0..10), 1);
    assert!(!restored.contains(1));
    // Without an old DV, every row the new one deletes.
    let first = DeletedRows::all_but_difference(&new, None, 10);
    assert_eq!(first.surviving_in(0..10), 4);
    // Indexes at or past the file's rows are never read.
    let past = DeletedRows::all_but_difference(&DeletedRows::from_iter([3, 12]), None, 10);
    assert_eq!(past.surviving_in(0..10), 1);
}
