//! Work side by side on the process's decoding threads: the checkpoint
//! parts and sidecars of an open, the row-range pieces of each, the
//! checkpoint files whose stats a query parses, the shares of a
//! uniqueness check.
//!
//! The threads are one pool for the process ([rayon]), one per core, made
//! at the first use and kept. A decoding task ([`spawn`]) waits for a free
//! thread, so at most one per core decodes at once however many parts and
//! sidecars are in flight; [`run_parallel`] splits its items over the same
//! threads (from a decoding task, by work stealing: a nested call never
//! takes more threads). So nested or concurrent calls share the cores, and
//! the allocations of decoding happen on a fixed few threads: glibc's
//! malloc keeps an arena per thread that allocated, with the pages freed
//! in it, and threads made per call spread a million-file open's
//! short-lived pages over a dozen of them (W8 sidecars: a third more peak
//! memory than with two).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use rayon::prelude::*;

/// The cores of the machine (at least 1).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The decoding threads; `None` when they could not be made (the work then
/// runs on the calling thread).
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores())
            .thread_name(|i| format!("dar-decode-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Runs `work` on a decoding thread once one is free; its result comes
/// through the future, `None` if it panicked. Without decoding threads it
/// runs at once, here.
pub(crate) fn spawn<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> impl Future<Output = Option<T>> + Send + 'static {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job = move || {
        // The receiver may be gone (the load was dropped): nothing to do.
        let _ = tx.send(catch_unwind(AssertUnwindSafe(work)).ok());
    };
    match pool() {
        Some(p) => p.spawn(job),
        None => job(),
    }
    async move { rx.await.ok().flatten() }
}

/// `work` of every item, results in item order, split over the decoding
/// threads (the calling thread waits, unless it is one of them: then it
/// works too). An item whose work panicked yields `panicked(item)`.
pub(crate) fn run_parallel<I: Sync, T: Send, E: Send>(
    items: &[I],
    work: impl Fn(&I) -> Result<T, E> + Sync,
    panicked: impl Fn(&I) -> E + Sync,
) -> Vec<Result<T, E>> {
    let one =
        |i: &I| catch_unwind(AssertUnwindSafe(|| work(i))).unwrap_or_else(|_| Err(panicked(i)));
    match pool() {
        Some(p) if items.len() > 1 => {
            p.install(|| items.par_iter().with_max_len(1).map(one).collect())
        }
        _ => items.iter().map(one).collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Barrier;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Busy threads at once across concurrent and nested calls, at most,
    /// and the threads that did the work.
    fn peak_of(calls: usize, items: usize, nested: usize) -> (usize, usize) {
        let busy = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let threads = Mutex::new(HashSet::new());
        let work = |_: &usize| -> Result<(), ()> {
            let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            threads.lock().unwrap().insert(std::thread::current().id());
            std::thread::sleep(Duration::from_millis(20));
            busy.fetch_sub(1, Ordering::SeqCst);
            Ok(())
        };
        let start = Barrier::new(calls);
        std::thread::scope(|s| {
            for _ in 0..calls {
                s.spawn(|| {
                    start.wait();
                    let inner: Vec<usize> = (0..nested).collect();
                    let outer: Vec<usize> = (0..items).collect();
                    // Each item of the outer call runs a call of its own.
                    let r = run_parallel(
                        &outer,
                        |_| {
                            run_parallel(&inner, work, |_| ())
                                .into_iter()
                                .collect::<Result<Vec<_>, ()>>()
                        },
                        |_| (),
                    );
                    assert!(r.iter().all(Result::is_ok));
                });
            }
        });
        let threads = threads.lock().unwrap().len();
        (peak.into_inner(), threads)
    }

    /// Nested and concurrent calls share the decoding threads: busy
    /// threads never exceed one per core, and the work runs on those
    /// threads only, however many calls made it (before the pool, each
    /// call added threads of its own).
    #[test]
    fn concurrent_and_nested_calls_share_one_thread_per_core() {
        let calls = 3;
        let (peak, threads) = peak_of(calls, 4, 4);
        assert!(
            peak <= cores(),
            "{peak} threads busy at once, for {calls} callers on {} cores",
            cores()
        );
        assert!(threads <= cores(), "{threads} threads did the work");
        assert!(peak >= 1);
    }

    /// Results come back in item order; a panicking item is its own error,
    /// and the others still run.
    #[test]
    fn results_in_order_and_panics_as_errors() {
        let items: Vec<usize> = (0..50).collect();
        let out = run_parallel(
            &items,
            |&i| {
                if i == 7 || i == 0 {
                    panic!("item {i}");
                }
                Ok::<usize, String>(i * 2)
            },
            |&i| format!("panicked {i}"),
        );
        for (i, r) in out.iter().enumerate() {
            match r {
                Ok(v) => assert_eq!(*v, i * 2),
                Err(e) => assert!(
                    (i == 0 || i == 7) && *e == format!("panicked {i}"),
                    "{i}: {e}"
                ),
            }
        }
        assert!(out[0].is_err() && out[7].is_err());
    }

    /// A spawned task's result comes back; a panic is `None`, and the
    /// threads stay usable.
    #[test]
    fn spawned_work_returns_its_result_or_none_on_a_panic() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            assert_eq!(spawn(|| 6 * 7).await, Some(42));
            let name = spawn(|| std::thread::current().name().map(String::from)).await;
            assert!(name.flatten().is_some_and(|n| n.starts_with("dar-decode-")));
            assert_eq!(spawn(|| -> u8 { panic!("decoding") }).await, None);
            assert_eq!(spawn(|| 1).await, Some(1));
        });
    }
}
