//! Work side by side on threads, within one budget for the process: the
//! row-range pieces of a checkpoint file, the checkpoint files whose
//! stats a query parses, the shares of a uniqueness check.
//!
//! The budget holds one thread per core. A checkpoint's decoding tasks
//! each take one ([`thread`], awaited, so at most one per core decodes at
//! once however many parts and sidecars are in flight); [`run_parallel`]
//! adds helper threads only while the budget has some free, and the
//! calling thread works too. So nested or concurrent calls (every part of
//! a checkpoint splitting its rows, two queries parsing statistics) share
//! the cores instead of each starting one thread per core.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Semaphore, SemaphorePermit};

/// The cores of the machine (at least 1).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The process's decoding threads: one per core.
fn budget() -> &'static Semaphore {
    static BUDGET: OnceLock<Semaphore> = OnceLock::new();
    BUDGET.get_or_init(|| Semaphore::new(cores()))
}

/// One thread of the budget, for a decoding task to hold while it runs;
/// waits until one is free. `None` only if the budget were closed (it
/// never is): the caller then runs without one.
pub(crate) async fn thread() -> Option<SemaphorePermit<'static>> {
    budget().acquire().await.ok()
}

/// `work` of every item, results in item order: on the calling thread and
/// on helper threads, each taking the next item not yet taken. Before each
/// item it takes, the calling thread adds a helper for the items left
/// beyond the threads at work, while the budget has a thread free (none
/// free: all on the calling thread; one freed later, by a decoding task
/// that ends, joins in). An item whose work panicked yields
/// `panicked(item)`.
pub(crate) fn run_parallel<I: Sync, T: Send, E: Send>(
    items: &[I],
    work: impl Fn(&I) -> Result<T, E> + Sync,
    panicked: impl Fn(&I) -> E + Sync,
) -> Vec<Result<T, E>> {
    let one =
        |i: &I| catch_unwind(AssertUnwindSafe(|| work(i))).unwrap_or_else(|_| Err(panicked(i)));
    if items.len() <= 1 {
        return items.iter().map(one).collect();
    }
    let next = AtomicUsize::new(0);
    let run = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, one(item)));
        }
    };
    let run = &run;
    let mut results: Vec<Option<Result<T, E>>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let mut helpers = Vec::new();
        let mut mine = Vec::new();
        loop {
            let left = items.len().saturating_sub(next.load(Ordering::Relaxed));
            if left > helpers.len() + 1
                && let Ok(permit) = budget().try_acquire()
            {
                helpers.push(scope.spawn(move || {
                    let _permit = permit;
                    run()
                }));
                continue;
            }
            // The calling thread works too. Each item's panic is caught
            // where it runs: no thread ends early.
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                break;
            };
            mine.push((i, one(item)));
        }
        let theirs = helpers
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default());
        for (i, r) in mine.into_iter().chain(theirs) {
            results[i] = Some(r);
        }
    });
    results
        .into_iter()
        .zip(items)
        .map(|(r, i)| r.unwrap_or_else(|| Err(panicked(i))))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;
    use std::time::Duration;

    use super::*;

    /// Busy threads at once across concurrent and nested calls, at most.
    fn peak_of(calls: usize, items: usize, nested: usize) -> usize {
        let busy = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let work = |_: &usize| -> Result<(), ()> {
            let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
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
        peak.into_inner()
    }

    /// Nested and concurrent calls share the budget: busy threads never
    /// exceed the callers plus one helper per core (before the budget,
    /// each call took one thread per core: callers x items x cores).
    #[test]
    fn concurrent_and_nested_calls_stay_within_the_budget() {
        let calls = 3;
        let peak = peak_of(calls, 4, 4);
        assert!(
            peak <= calls + cores(),
            "{peak} threads busy at once, for {calls} callers on {} cores",
            cores()
        );
    }

    /// Results come back in item order; a panicking item is its own error,
    /// on a helper or on the calling thread, and the others still run.
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
}
