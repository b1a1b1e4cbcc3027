//! [`BufferPool`]: the buffers large local reads fill, handed back for the
//! next read when the bytes read into them are dropped.
//!
//! A read into a fresh buffer pays twice before the first byte arrives:
//! the buffer is zeroed (safe Rust reads only into initialized memory) and
//! every page of it is faulted in, because the allocator gave the last
//! one's pages back to the kernel. On a full local scan of 16 files of
//! 15 MiB (W2 of `cargo xtask bench`) that was 60% of the process's page
//! faults under jemalloc and most of its system time. A buffer handed
//! back here is already initialized and mapped: the next read of a
//! similar length goes straight into it.
//!
//! The pool keeps at most [`MAX_RETAINED`] bytes, only of buffers of at
//! least [`MIN_POOLED`] (the allocator's own caches serve smaller ones
//! well), and a buffer serves a read that fills at least three quarters
//! of it. A read never sees an earlier read's bytes: a buffer's bytes
//! are exposed only up to the length the read filled, and a read that
//! comes up short is an error.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use bytes::Bytes;

/// Reads shorter than this are not pooled.
pub(crate) const MIN_POOLED: usize = 64 << 10;

/// Bytes of free buffers a pool keeps at most.
pub(crate) const MAX_RETAINED: usize = 64 << 20;

/// A fresh pooled buffer is a sixteenth longer than its first read
/// ([`BufferPool::capacity_for`]).
const HEADROOM_SHIFT: u32 = 4;

/// Free buffers of a table's local reads (cheap to clone: one pool).
#[derive(Debug, Clone, Default)]
pub(crate) struct BufferPool {
    free: Arc<Mutex<Free>>,
}

#[derive(Debug, Default)]
struct Free {
    /// Initialized buffers (their whole length), in no order.
    buffers: Vec<Vec<u8>>,
    /// Their summed lengths.
    bytes: usize,
}

impl BufferPool {
    /// A free buffer for a read of `len` bytes: the shortest at least
    /// `len` long and at most a third longer, taken out of the pool.
    pub(crate) fn take(&self, len: usize) -> Option<Vec<u8>> {
        if len < MIN_POOLED {
            return None;
        }
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        let limit = len.saturating_add(len / 3);
        let (at, _) = free
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| (len..=limit).contains(&b.len()))
            .min_by_key(|(_, b)| b.len())?;
        let buffer = free.buffers.swap_remove(at);
        free.bytes -= buffer.len();
        Some(buffer)
    }

    /// The capacity to allocate for a fresh read of `len` bytes: a
    /// sixteenth more when it will be pooled, so that the next read of a
    /// file of about the same size fits in it.
    pub(crate) fn capacity_for(len: usize) -> usize {
        if len < MIN_POOLED {
            len
        } else {
            len.saturating_add(len >> HEADROOM_SHIFT)
        }
    }

    /// `buffer`'s first `len` bytes (the ones a read filled) as [`Bytes`]
    /// that give `buffer` back to the pool when the last of them is
    /// dropped; a read too short to pool is plain bytes.
    pub(crate) fn bytes(&self, mut buffer: Vec<u8>, len: usize) -> Bytes {
        debug_assert!(len <= buffer.len());
        if len < MIN_POOLED {
            buffer.truncate(len);
            return Bytes::from(buffer);
        }
        // A fresh buffer's headroom ([`Self::capacity_for`]) is
        // initialized now, within its capacity (no reallocation).
        let capacity = buffer.capacity();
        buffer.resize(capacity, 0);
        Bytes::from_owner(Pooled {
            buffer,
            len,
            pool: Arc::downgrade(&self.free),
        })
    }

    /// Free buffers and their summed length.
    #[cfg(test)]
    pub(crate) fn retained(&self) -> (usize, usize) {
        let free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        (free.buffers.len(), free.bytes)
    }
}

/// A pooled buffer lent out as the bytes of one read.
struct Pooled {
    buffer: Vec<u8>,
    /// The bytes the read filled.
    len: usize,
    /// The pool to hand the buffer back to, if it is still there.
    pool: Weak<Mutex<Free>>,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.buffer[..self.len]
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let Some(pool) = self.pool.upgrade() else {
            return;
        };
        let mut free = pool.lock().unwrap_or_else(PoisonError::into_inner);
        let len = self.buffer.len();
        if free.bytes + len <= MAX_RETAINED {
            free.bytes += len;
            free.buffers.push(std::mem::take(&mut self.buffer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh buffer as a read makes it: `len` bytes filled, within the
    /// capacity the pool asks for.
    fn fresh(len: usize, byte: u8) -> Vec<u8> {
        let mut buffer = Vec::with_capacity(BufferPool::capacity_for(len));
        buffer.resize(len, byte);
        buffer
    }

    #[test]
    fn a_dropped_read_hands_its_buffer_to_the_next_read_of_about_its_length() {
        let pool = BufferPool::default();
        let len = MIN_POOLED * 4;
        let first = pool.bytes(fresh(len, 7), len);
        assert_eq!(first.len(), len);
        assert!(first.iter().all(|b| *b == 7));
        // Lent out: nothing to take.
        assert!(pool.take(len).is_none());
        // A slice keeps the buffer lent out until it is dropped too.
        let slice = first.slice(10..20);
        drop(first);
        assert!(pool.take(len).is_none());
        drop(slice);
        let (count, bytes) = pool.retained();
        assert_eq!(count, 1);
        // With its headroom: a read a sixteenth longer fits.
        assert_eq!(bytes, len + len / 16);
        assert!(
            pool.take(len + len / 3 + len / 16).is_none(),
            "too long a buffer for it"
        );
        let again = pool.take(len + len / 16).expect("the buffer back");
        assert_eq!(again.len(), len + len / 16);
        assert_eq!(pool.retained(), (0, 0));
    }

    #[test]
    fn the_bytes_lent_are_only_those_the_read_filled() {
        let pool = BufferPool::default();
        let len = MIN_POOLED * 2;
        drop(pool.bytes(fresh(len, 1), len));
        let mut buffer = pool.take(len - 100).expect("pooled");
        buffer[..len - 100].fill(2);
        let bytes = pool.bytes(buffer, len - 100);
        assert_eq!(bytes.len(), len - 100);
        assert!(bytes.iter().all(|b| *b == 2));
    }

    #[test]
    fn small_reads_are_not_pooled_and_the_pool_keeps_a_bounded_amount() {
        let pool = BufferPool::default();
        drop(pool.bytes(fresh(1000, 0), 1000));
        assert!(pool.take(1000).is_none());
        assert_eq!(pool.retained(), (0, 0));
        let len = MAX_RETAINED / 3;
        let lent: Vec<Bytes> = (0..4).map(|_| pool.bytes(fresh(len, 0), len)).collect();
        drop(lent);
        let (count, bytes) = pool.retained();
        assert_eq!(count, 2, "two fit under the bound, with their headroom");
        assert!(bytes <= MAX_RETAINED);
    }

    #[test]
    fn a_buffer_outliving_its_pool_is_freed() {
        let pool = BufferPool::default();
        let len = MIN_POOLED;
        let bytes = pool.bytes(fresh(len, 3), len);
        drop(pool);
        assert_eq!(bytes.len(), len);
        drop(bytes);
    }
}
