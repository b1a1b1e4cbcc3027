//! Work side by side on scoped threads: the row-range pieces of a
//! checkpoint file, and the checkpoint files whose stats a query parses.

/// `work` of every item, on at most one scoped thread per core (items
/// split into contiguous groups), results in item order. A thread that
/// panicked yields `panicked(item)` for each of its items.
pub(crate) fn run_parallel<I: Sync, T: Send, E: Send>(
    items: &[I],
    work: impl Fn(&I) -> Result<T, E> + Sync,
    panicked: impl Fn(&I) -> E + Sync,
) -> Vec<Result<T, E>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if items.len() <= 1 || threads <= 1 {
        return items.iter().map(work).collect();
    }
    let per = items.len().div_ceil(threads);
    let (work, panicked) = (&work, &panicked);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(per)
            .map(|group| {
                (
                    group,
                    scope.spawn(move || group.iter().map(work).collect::<Vec<_>>()),
                )
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(group, h)| {
                h.join()
                    .unwrap_or_else(|_| group.iter().map(|i| Err(panicked(i))).collect())
            })
            .collect()
    })
}
