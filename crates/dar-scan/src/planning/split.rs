//! Splitting a scan's tasks into groups of about equal bytes: an engine's
//! partitions, or the workers of a distributed query.

use crate::planning::task::ScanTask;

/// Positions `0..sizes.len()` in at most `n` groups of about equal total
/// size (largest first onto the lightest group), each group ascending.
/// Always at least one group, possibly empty; never more groups than
/// positions. A size of 0 (unknown) counts as 1: it still takes a slot.
pub(crate) fn balance(sizes: &[u64], n: usize) -> Vec<Vec<usize>> {
    let groups = n.min(sizes.len()).max(1);
    if groups == 1 {
        return vec![(0..sizes.len()).collect()];
    }
    let size = |i: usize| sizes[i].max(1);
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    let mut load = vec![0u64; groups];
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); groups];
    for i in order {
        let (g, _) = load
            .iter()
            .enumerate()
            .min_by_key(|(g, l)| (**l, *g))
            .unwrap_or((0, &0));
        load[g] += size(i);
        members[g].push(i);
    }
    for m in &mut members {
        m.sort_unstable();
    }
    members
}

/// The sizes of `tasks` for [`balance`] (unknown: 0).
pub(crate) fn sizes(tasks: &[ScanTask]) -> Vec<u64> {
    tasks.iter().map(|t| t.size.unwrap_or(0)).collect()
}

/// Splits `tasks` into at most `n` groups of about equal bytes (largest
/// file first onto the lightest group), each group in the original file
/// order. Always at least one group, possibly empty; never more groups
/// than tasks.
pub fn split_by_bytes(tasks: Vec<ScanTask>, n: usize) -> Vec<Vec<ScanTask>> {
    let groups = balance(&sizes(&tasks), n);
    let mut slots: Vec<Option<ScanTask>> = tasks.into_iter().map(Some).collect();
    groups
        .into_iter()
        .map(|g| g.into_iter().filter_map(|i| slots[i].take()).collect())
        .collect()
}

/// Like [`split_by_bytes`], but always exactly `n` groups (`n` at least
/// 1): the ones beyond the number of tasks are empty.
pub fn split_by_bytes_exact(tasks: Vec<ScanTask>, n: usize) -> Vec<Vec<ScanTask>> {
    let n = n.max(1);
    let mut groups = split_by_bytes(tasks, n);
    groups.resize_with(n, Vec::new);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, size: u64) -> ScanTask {
        ScanTask {
            object_path: name.into(),
            store_origin: None,
            log_path: name.into(),
            size: Some(size),
            modification_time: None,
            num_records: None,
            partition_values: vec![],
            deletion_vector: None,
            paired_dv: None,
            access: None,
        }
    }

    fn names(g: &[ScanTask]) -> Vec<&str> {
        g.iter().map(|t| t.log_path.as_str()).collect()
    }

    #[test]
    fn groups_are_balanced_and_ordered() {
        let tasks = vec![
            task("a", 100),
            task("b", 10),
            task("c", 60),
            task("d", 50),
            task("e", 5),
        ];
        let g = split_by_bytes(tasks, 2);
        assert_eq!(g.len(), 2);
        // 100 | 60 + 50, then 10 and 5 each onto the lighter side (ties:
        // the first group).
        assert_eq!(names(&g[0]), ["a", "b", "e"]);
        assert_eq!(names(&g[1]), ["c", "d"]);
        let bytes: Vec<u64> = g
            .iter()
            .map(|g| g.iter().filter_map(|t| t.size).sum())
            .collect();
        assert_eq!(bytes, [115, 110]);
    }

    #[test]
    fn never_more_groups_than_files_and_at_least_one() {
        assert_eq!(split_by_bytes(vec![task("a", 1)], 8).len(), 1);
        let empty = split_by_bytes(vec![], 4);
        assert_eq!(empty.len(), 1);
        assert!(empty[0].is_empty());
    }

    #[test]
    fn exact_pads_with_empty_groups() {
        let g = split_by_bytes_exact(vec![task("a", 3), task("b", 2)], 4);
        assert_eq!(g.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 0, 0]);
        assert_eq!(split_by_bytes_exact(vec![task("a", 3)], 0).len(), 1);
    }
}
