//! Randomized equivalence: selections, masks and counts against brute
//! force; encode/decode round trips.

use std::collections::BTreeSet;

use dar_dv::{
    DeletedRows, DvDescriptor, DvError, DvFileWriter, decode_file_bytes, decode_inline, fetch_range,
};
use parquet::arrow::arrow_reader::RowSelector;
use proptest::prelude::*;

fn brute_selectors(set: &BTreeSet<u64>, start: u64, end: u64) -> Vec<RowSelector> {
    let mut out: Vec<RowSelector> = Vec::new();
    for row in start..end {
        let skip = set.contains(&row);
        match out.last_mut() {
            Some(last) if last.skip == skip => last.row_count += 1,
            _ => out.push(if skip {
                RowSelector::skip(1)
            } else {
                RowSelector::select(1)
            }),
        }
    }
    out
}

/// Row sets clustered near a base (so ranges hit them), sometimes beyond
/// u32::MAX, sometimes empty.
fn row_sets() -> impl Strategy<Value = (u64, BTreeSet<u64>)> {
    let base = prop_oneof![
        Just(0_u64),
        Just(u64::from(u32::MAX) - 100),
        Just(1_u64 << 40)
    ];
    (base, proptest::collection::btree_set(0_u64..600, 0..200))
        .prop_map(|(base, offsets)| (base, offsets.into_iter().map(|o| base + o).collect()))
}

proptest! {
    #[test]
    fn selections_masks_and_counts_match_brute_force(
        (base, set) in row_sets(),
        a in 0_u64..700,
        len in 0_u64..700,
    ) {
        let deleted: DeletedRows = set.iter().copied().collect();
        let (start, end) = (base + a, base + a + len);
        let want = brute_selectors(&set, start, end);
        prop_assert_eq!(&deleted.selectors(start..end), &want);
        let selection: Vec<RowSelector> = deleted.selection(start..end).into();
        prop_assert_eq!(&selection, &want);
        let mask: Vec<bool> = deleted.mask(start..end).iter().map(Option::unwrap).collect();
        let want_mask: Vec<bool> = (start..end).map(|r| !set.contains(&r)).collect();
        prop_assert_eq!(mask, want_mask);
        let in_range = set.range(start..end).count() as u64;
        prop_assert_eq!(deleted.deleted_in(start..end), in_range);
        prop_assert_eq!(deleted.surviving_in(start..end), len - in_range);
        // Consecutive ranges concatenate.
        let mid = start + len / 2;
        let mut joined = deleted.selectors(start..mid);
        joined.extend(deleted.selectors(mid..end));
        let joined: Vec<RowSelector> = parquet::arrow::arrow_reader::RowSelection::from(joined).into();
        prop_assert_eq!(joined, want);
    }

    #[test]
    fn encode_decode_round_trips(
        sets in proptest::collection::vec(
            prop_oneof![
                Just(BTreeSet::new()),
                row_sets().prop_map(|(_, s)| s),
                proptest::collection::btree_set(any::<u64>().prop_map(|r| r >> 1), 0..50),
            ],
            1..4,
        )
    ) {
        // Several DVs in one file, each read back from the whole file and
        // from its exact fetch range; and each as an inline DV.
        let mut writer = DvFileWriter::new();
        let records: Vec<_> = sets
            .iter()
            .map(|s| writer.add(&s.iter().copied().collect()).unwrap())
            .collect();
        let file = writer.finish();
        for (set, record) in sets.iter().zip(&records) {
            let want: Vec<u64> = set.iter().copied().collect();
            let dv = DvDescriptor::uuid_file("", uuid::Uuid::nil(), record);
            prop_assert_eq!(dv.cardinality(), set.len() as u64);
            let whole = decode_file_bytes(&dv, "f", 0, &file).unwrap();
            prop_assert_eq!(whole.iter().collect::<Vec<_>>(), want.clone());
            let range = fetch_range(&dv);
            let part = &file[range.start as usize..range.end as usize];
            let exact = decode_file_bytes(&dv, "f", range.start, part).unwrap();
            prop_assert_eq!(exact.iter().collect::<Vec<_>>(), want.clone());
            let inline = DvDescriptor::inline(&set.iter().copied().collect()).unwrap();
            let again = DvDescriptor::try_new(
                "i",
                inline.path_or_inline_dv(),
                None,
                i64::from(inline.size_in_bytes()),
                inline.cardinality() as i64,
            ).unwrap();
            prop_assert_eq!(decode_inline(&again).unwrap().iter().collect::<Vec<_>>(), want);
        }
    }
}

#[test]
fn rows_above_2_pow_63_cannot_be_encoded() {
    let err = DvFileWriter::new()
        .add(&DeletedRows::from_iter([1 << 63]))
        .unwrap_err();
    assert!(matches!(err, DvError::RowIndexOutOfRange { row, .. } if row == 1 << 63));
}
