//! The one tokio runtime of the module, and waiting on it from Python: the
//! GIL released, Ctrl-C honoured.
//!
//! A future runs with [`tokio::runtime::Runtime::block_on`] on the calling
//! thread (dar-scan decodes there; the runtime's workers carry the I/O), in
//! slices of [`SIGNAL_CHECK_INTERVAL`]. Before it starts and between slices
//! the thread takes the GIL back just long enough for `PyErr_CheckSignals`:
//! a pending Ctrl-C raises `KeyboardInterrupt`, and dropping the future
//! cancels the scan (its streams, and with them every request in flight).
//! A slice only ends when the future yields, and decoding a file yields
//! rarely, so scans wait batch by batch: Ctrl-C stops them within a batch.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::errors::InternalError;

/// How long a wait runs before it looks for Ctrl-C again.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The module's multi-thread runtime, started on first use.
pub fn runtime() -> PyResult<&'static Runtime> {
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("dar-io")
            .build()
            .map_err(|e| e.to_string())
    });
    runtime
        .as_ref()
        .map_err(|e| InternalError::new_err(format!("cannot start the async runtime: {e}")))
}

/// Runs the future `make` returns to completion with the GIL released;
/// returns the error of `PyErr_CheckSignals` (a `KeyboardInterrupt` after
/// Ctrl-C) instead if a signal handler raises while it runs, dropping the
/// future. (The future is made and dropped on this thread, so it need not
/// be `Send`: some of dar-scan's are not provably so.)
pub fn wait<M, F>(py: Python<'_>, make: M) -> PyResult<F::Output>
where
    M: FnOnce() -> F + Send,
    F: Future,
    F::Output: Send,
{
    let runtime = runtime()?;
    // A batch usually takes less than a slice: look for Ctrl-C between
    // batches too (it only reads a flag).
    py.check_signals()?;
    py.detach(move || {
        // The timer of each slice belongs to the runtime.
        let _context = runtime.enter();
        let mut future = std::pin::pin!(make());
        loop {
            let slice =
                runtime.block_on(tokio::time::timeout(SIGNAL_CHECK_INTERVAL, future.as_mut()));
            match slice {
                Ok(output) => return Ok(output),
                Err(_elapsed) => Python::attach(|py| py.check_signals())?,
            }
        }
    })
}
