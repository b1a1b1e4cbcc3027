//! Noticing a closed standard output (`dar scan ... | head`).
//!
//! Some writers (arrow-csv) turn I/O errors into strings, so the error that
//! reaches the top cannot always say it was a broken pipe. [`PipeWatch`]
//! wraps the real writer and raises a shared flag the moment one happens.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A writer that records whether a write or flush failed with
/// [`io::ErrorKind::BrokenPipe`].
#[derive(Debug)]
pub struct PipeWatch<W> {
    inner: W,
    broken: Arc<AtomicBool>,
}

impl<W: Write> PipeWatch<W> {
    /// Wraps `inner`; `broken` is raised on a broken pipe.
    pub fn new(inner: W, broken: Arc<AtomicBool>) -> Self {
        Self { inner, broken }
    }

    fn watch<T>(&self, r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r
            && e.kind() == io::ErrorKind::BrokenPipe
        {
            self.broken.store(true, Ordering::Relaxed);
        }
        r
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.inner.write(buf);
        self.watch(r)
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.inner.flush();
        self.watch(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn raises_flag_on_broken_pipe_only() {
        let flag = Arc::new(AtomicBool::new(false));
        let mut ok = PipeWatch::new(Vec::new(), Arc::clone(&flag));
        ok.write_all(b"x").unwrap();
        assert!(!flag.load(Ordering::Relaxed));
        let mut closed = PipeWatch::new(Closed, Arc::clone(&flag));
        assert!(closed.write_all(b"x").is_err());
        assert!(flag.load(Ordering::Relaxed));
    }
}
