//! [`Spool`]: rows held until a query has succeeded, so that a failed
//! `dar sql --workers` writes none of them.
//!
//! The formatted output is kept in memory up to [`Spool::MEMORY`] bytes,
//! then in an unnamed temporary file (in `$TMPDIR`, removed by the
//! system when closed, whatever happens). Once the query has succeeded it
//! is copied to standard output; after a failure it is dropped.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

/// Output held back (see the module docs).
#[derive(Debug, Default)]
pub struct Spool {
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
}

impl Spool {
    /// Bytes held in memory before the rest goes to a temporary file.
    pub const MEMORY: usize = 64 * 1024 * 1024;

    /// An empty spool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Copies everything written to `out`, then flushes it.
    pub fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(&self.memory)?;
        if let Some(file) = self.file {
            let mut file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
            file.seek(SeekFrom::Start(0))?;
            io::copy(&mut io::BufReader::new(file), out)?;
        }
        out.flush()
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.len() + buf.len() > Self::MEMORY {
            let mut file = BufWriter::new(tempfile::tempfile()?);
            file.write_all(&self.memory)?;
            self.memory = Vec::new();
            self.file = Some(file);
        }
        match &mut self.file {
            Some(file) => file.write(buf),
            None => {
                self.memory.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_comes_back_in_order_past_the_memory_bound() {
        let mut spool = Spool::new();
        let chunk: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let chunks = Spool::MEMORY / chunk.len() + 3;
        for _ in 0..chunks {
            spool.write_all(&chunk).unwrap();
        }
        assert!(spool.file.is_some(), "never spilled");
        assert!(spool.memory.is_empty());
        let mut out = Vec::new();
        spool.copy_to(&mut out).unwrap();
        assert_eq!(out.len(), chunks * chunk.len());
        assert!(out.chunks(chunk.len()).all(|c| c == chunk.as_slice()));

        let mut small = Spool::new();
        small.write_all(b"id,grp\n1,a\n").unwrap();
        assert!(small.file.is_none());
        let mut out = Vec::new();
        small.copy_to(&mut out).unwrap();
        assert_eq!(out, b"id,grp\n1,a\n");
    }
}
