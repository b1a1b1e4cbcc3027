//! [`Slots`]: each column's statistics, parsed once by whichever query
//! asks first and then shared.
//!
//! No lock is held while a column is parsed. A load claims the columns
//! nobody holds or parses (a short critical section), parses them, then
//! publishes each in its own `OnceLock` and releases the claims:
//!
//! ```text
//! load(wanted):
//!   parsed already        -> returned, no lock taken
//!   nobody parses it      -> claimed here, parsed (no lock), published
//!   another load parses it -> wait for that load to publish or give up
//!                             (then claim it here)
//! ```
//!
//! So concurrent queries on one table parse different columns side by
//! side, one column is parsed once however many queries want it, and a
//! load waits only for a parse of a column it needs.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use crate::error::Result;
use crate::stats::ColumnStats;

/// The statistics of each column, parsed or not yet.
#[derive(Debug)]
pub(super) struct Slots {
    parsed: Vec<OnceLock<Arc<ColumnStats>>>,
    /// Columns a load is parsing now.
    claims: Mutex<Vec<bool>>,
    /// Signalled when claims are released.
    released: Condvar,
}

/// The claims of one load, released (and waiters woken) when dropped:
/// after the columns are published, or on an error or a panic.
struct Claimed<'a> {
    slots: &'a Slots,
    columns: &'a [usize],
}

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        let mut claims = self.slots.lock();
        for &i in self.columns {
            claims[i] = false;
        }
        drop(claims);
        self.slots.released.notify_all();
    }
}

impl Slots {
    /// `n` columns, none parsed.
    pub(super) fn new(n: usize) -> Self {
        Self {
            parsed: (0..n).map(|_| OnceLock::new()).collect(),
            claims: Mutex::new(vec![false; n]),
            released: Condvar::new(),
        }
    }

    /// The same parsed columns, no claims.
    pub(super) fn snapshot(&self) -> Self {
        Self {
            parsed: self
                .parsed
                .iter()
                .map(|p| p.get().cloned().map_or_else(OnceLock::new, OnceLock::from))
                .collect(),
            claims: Mutex::new(vec![false; self.parsed.len()]),
            released: Condvar::new(),
        }
    }

    /// The columns parsed so far.
    pub(super) fn parsed(&self) -> impl Iterator<Item = &Arc<ColumnStats>> {
        self.parsed.iter().filter_map(OnceLock::get)
    }

    fn lock(&self) -> MutexGuard<'_, Vec<bool>> {
        // Claims are plain flags, released by a guard even on a panic.
        self.claims.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The statistics of columns `wanted` (positions), in order: those not
    /// parsed yet are parsed by `parse` (given positions, returning their
    /// statistics in that order) unless another load is parsing them, in
    /// which case this one waits for it. An error of `parse` is returned;
    /// the columns stay unparsed for the next load to try.
    pub(super) fn load(
        &self,
        wanted: &[usize],
        parse: impl Fn(&[usize]) -> Result<Vec<ColumnStats>>,
    ) -> Result<Vec<Arc<ColumnStats>>> {
        loop {
            let missing: Vec<usize> = wanted
                .iter()
                .copied()
                .filter(|&i| self.parsed[i].get().is_none())
                .collect();
            if missing.is_empty() {
                return Ok(wanted
                    .iter()
                    .filter_map(|&i| self.parsed[i].get().cloned())
                    .collect());
            }
            let mut mine = Vec::new();
            {
                let mut claims = self.lock();
                for &i in &missing {
                    if !claims[i] && self.parsed[i].get().is_none() {
                        claims[i] = true;
                        mine.push(i);
                    }
                }
            }
            if mine.is_empty() {
                // Other loads parse all of them: wait until they publish
                // (or fail, releasing their claims).
                let claims = self.lock();
                let _waited = self
                    .released
                    .wait_while(claims, |c| {
                        missing
                            .iter()
                            .any(|&i| c[i] && self.parsed[i].get().is_none())
                    })
                    .unwrap_or_else(|e| e.into_inner());
                continue;
            }
            let claimed = Claimed {
                slots: self,
                columns: &mine,
            };
            let stats = parse(&mine)?;
            if stats.len() != mine.len() {
                return Err(crate::error::LogError::arrow(
                    "parsing column statistics",
                    arrow_schema::ArrowError::ComputeError(format!(
                        "{} columns parsed of {}",
                        stats.len(),
                        mine.len()
                    )),
                ));
            }
            for (&i, c) in mine.iter().zip(stats) {
                // Claimed here: no other load sets it.
                let _ = self.parsed[i].set(Arc::new(c));
            }
            drop(claimed);
        }
    }
}
