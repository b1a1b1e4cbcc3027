use arrow_array::{Array, StringArray};

use super::take_paths;
use crate::add_columns::{AddColumns, AddColumnsBuilder, AddRow};
use crate::commit::PartitionEntries;

/// A batch of `n` adds whose paths are then `paths` (of length `n`).
fn batch(paths: StringArray) -> AddColumns {
    let mut b = AddColumnsBuilder::default();
    for i in 0..paths.len() {
        b.append(AddRow {
            path: &format!("f{i}"),
            partition_values: PartitionEntries(None),
            size: Some(1),
            modification_time: Some(1),
            stats: None,
            dv: None,
            plain_path: false,
        })
        .unwrap();
    }
    let mut a = b.finish();
    a.path = paths;
    a
}

/// The batches' paths come out as their concatenation (nulls and sliced
/// batches, whose offsets do not start at 0, included), and no batch
/// keeps its own array: each was released once copied.
#[test]
fn take_paths_concatenates_and_releases_every_batch() {
    let sliced = StringArray::from(vec![Some("skipped"), Some("b/1"), None, Some("b/3")]);
    let mut adds = vec![
        batch(StringArray::from(vec!["a/1", "a/2"])),
        batch(sliced.slice(1, 3)),
        batch(StringArray::from(Vec::<&str>::new())),
        batch(StringArray::from(vec![Some("c/1"), None])),
    ];
    let refs: Vec<&dyn Array> = adds.iter().map(|a| &a.path as &dyn Array).collect();
    let expected = arrow_select::concat::concat(&refs).unwrap();
    let got = take_paths(&mut adds).unwrap();
    assert_eq!(&got as &dyn Array, expected.as_ref());
    assert_eq!(got.null_count(), 2);
    assert_eq!(got.value(4), "b/3");
    for a in &adds {
        assert_eq!(a.path.len(), 0, "a batch kept its paths");
        assert_eq!(a.path.value_data().len(), 0);
    }
}

/// No batches: an empty array.
#[test]
fn take_paths_of_nothing_is_empty() {
    assert_eq!(take_paths(&mut []).unwrap().len(), 0);
}
