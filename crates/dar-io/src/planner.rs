//! The range planner: which GETs to issue for the byte ranges a decoder needs.
//!
//! A pure function of the needed ranges and a [`CostParams`]; no I/O.
//!
//! Model: a request of `s` bytes takes `latency + s / bandwidth`; up to
//! `max_concurrency` requests run side by side, so a plan's time is the
//! makespan of its requests over that many lanes (longest-first greedy
//! assignment), and, when an aggregate bandwidth is set, at least
//! `latency + total / aggregate_bandwidth`; against a server that serves
//! one request at a time, at least `requests * request_cost`.
//!
//! Algorithm:
//! 1. Drop empty ranges, sort, and union overlapping or touching ones into
//!    disjoint *segments* (an overlap is fetched once).
//! 2. Merging the gap between two neighbouring segments saves a request and
//!    costs the gap's bytes. For a fixed number `k` of merges the cheapest
//!    choice in bytes is the `k` smallest gaps, so the search is over `k`
//!    only: `k` runs from 0 up to the largest value whose fetched bytes stay
//!    within `max_amplification * needed` (gaps smaller than
//!    [`CostParams::free_gap_bytes`] not counted: fetching them costs less
//!    than one more request of a one-at-a-time server; coarse-to-fine when
//!    there are many gaps), and the `k` with the least estimated time wins
//!    (ties go to fewer bytes).
//! 3. While lanes are idle, the request with the largest per-part size is
//!    split into one more equal part (never below `min_split_bytes`) as long
//!    as that lowers the estimate: one 8 MB GET at 20 MB/s is slower than
//!    four 2 MB GETs side by side.
//! 4. Every needed range (input order, duplicates and overlaps allowed) maps
//!    to the slices of fetched buffers that hold its bytes, in order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use crate::cost::CostParams;
use crate::error::{Error, Result};

/// A part of one fetched buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchSlice {
    /// Index into [`RangePlan::fetches`].
    pub fetch: usize,
    /// Byte range within that fetch's buffer.
    pub range: Range<usize>,
}

/// The requests to issue and how to cut the needed ranges out of them.
#[derive(Debug, Clone, PartialEq)]
pub struct RangePlan {
    /// Disjoint byte ranges to GET, sorted by start.
    pub fetches: Vec<Range<u64>>,
    /// For each needed range (input order), the slices that form it, in order.
    pub slices: Vec<Vec<FetchSlice>>,
    /// Estimated time of the plan under the cost model.
    pub estimated: Duration,
    /// Bytes the needed ranges cover (overlaps counted once).
    pub needed_bytes: u64,
}

impl RangePlan {
    /// Total bytes fetched.
    pub fn fetched_bytes(&self) -> u64 {
        self.fetches.iter().map(|r| r.end - r.start).sum()
    }

    /// Cuts the needed ranges out of the fetched buffers (one per fetch, in
    /// order). Zero-copy when a range lies in one buffer. A buffer whose
    /// length differs from its fetch is an error, never silently short data.
    pub fn assemble(&self, buffers: &[Bytes]) -> Result<Vec<Bytes>> {
        if buffers.len() != self.fetches.len() {
            return Err(Error::InvalidRange {
                path: String::new(),
                range: 0..buffers.len() as u64,
                size: Some(self.fetches.len() as u64),
            });
        }
        for (f, b) in self.fetches.iter().zip(buffers) {
            if b.len() as u64 != f.end - f.start {
                return Err(Error::Truncated {
                    path: String::new(),
                    range: f.clone(),
                    expected: f.end - f.start,
                    actual: b.len() as u64,
                });
            }
        }
        Ok(self
            .slices
            .iter()
            .map(|parts| match parts.as_slice() {
                [] => Bytes::new(),
                [one] => buffers[one.fetch].slice(one.range.clone()),
                many => {
                    let len = many.iter().map(|p| p.range.len()).sum();
                    let mut out = BytesMut::with_capacity(len);
                    for p in many {
                        out.extend_from_slice(&buffers[p.fetch][p.range.clone()]);
                    }
                    out.freeze()
                }
            })
            .collect())
    }
}

/// Plans the GETs for `needed` under `params`. Fails only on a range whose
/// start is after its end.
pub fn plan_ranges(needed: &[Range<u64>], params: &CostParams) -> Result<RangePlan> {
    if let Some(bad) = needed.iter().find(|r| r.start > r.end) {
        return Err(Error::InvalidRange {
            path: String::new(),
            range: bad.clone(),
            size: None,
        });
    }
    let segments = union(needed);
    let needed_bytes: u64 = segments.iter().map(|r| r.end - r.start).sum();
    let (groups, parts, time) = choose(&segments, needed_bytes, params);
    let fetches = split_groups(&groups, &parts);
    let slices = needed.iter().map(|r| slices_for(r, &fetches)).collect();
    Ok(RangePlan {
        fetches,
        slices,
        estimated: Duration::from_secs_f64(time.max(0.0)),
        needed_bytes,
    })
}

/// Estimated time of issuing requests of these sizes under `params`.
pub fn estimate_time(sizes: &[u64], params: &CostParams) -> Duration {
    Duration::from_secs_f64(makespan(sizes.iter().map(|&s| (s, 1)), params).max(0.0))
}

fn union(needed: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut v: Vec<Range<u64>> = needed.iter().filter(|r| r.start < r.end).cloned().collect();
    v.sort_unstable_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Groups (merged segments), parts per group, estimated seconds.
type Choice = (Vec<Range<u64>>, Vec<u64>, f64);

fn choose(segments: &[Range<u64>], needed: u64, params: &CostParams) -> Choice {
    if segments.is_empty() {
        return (Vec::new(), Vec::new(), 0.0);
    }
    let gaps: Vec<u64> = segments.windows(2).map(|w| w[1].start - w[0].end).collect();
    let mut order: Vec<usize> = (0..gaps.len()).collect();
    order.sort_unstable_by_key(|&i| (gaps[i], i));
    let cap = params.max_amplification.max(1.0);
    let budget = ((needed as f64) * cap).floor() as u64;
    // Gaps cheaper to fetch than a request of a server that serves one at
    // a time costs are not held to the cap (they come first: smallest).
    let free = params.free_gap_bytes();
    let mut kmax = 0;
    let mut fetched = needed;
    for &i in &order {
        if gaps[i] > free {
            fetched = fetched.saturating_add(gaps[i]);
            if fetched > budget {
                break;
            }
        }
        kmax += 1;
    }

    let eval = |k: usize| -> Choice {
        let mut merge = vec![false; gaps.len()];
        for &i in &order[..k] {
            merge[i] = true;
        }
        let mut groups: Vec<Range<u64>> = Vec::with_capacity(segments.len() - k);
        for (i, s) in segments.iter().enumerate() {
            match groups.last_mut() {
                Some(last) if i > 0 && merge[i - 1] => last.end = s.end,
                _ => groups.push(s.clone()),
            }
        }
        let (parts, time) = split_parts(&groups, params);
        (groups, parts, time)
    };

    // Coarse-to-fine search over k in [lo, hi].
    let (mut lo, mut hi) = (0usize, kmax);
    let mut best: Option<(usize, Choice)> = None;
    loop {
        let ks: Vec<usize> = if hi - lo <= 128 {
            (lo..=hi).collect()
        } else {
            (0..=64).map(|j| lo + (hi - lo) * j / 64).collect()
        };
        for &k in &ks {
            if best.as_ref().is_some_and(|(bk, _)| *bk == k) {
                continue;
            }
            let c = eval(k);
            let better = match &best {
                None => true,
                // Strictly faster wins; equal time prefers fewer merges (bytes).
                Some((bk, b)) => c.2 < b.2 * (1.0 - 1e-9) || (c.2 <= b.2 && k < *bk),
            };
            if better {
                best = Some((k, c));
            }
        }
        if hi - lo <= 128 {
            break;
        }
        let bk = best.as_ref().map_or(lo, |(k, _)| *k);
        let step = (hi - lo).div_ceil(64);
        lo = bk.saturating_sub(step).max(lo);
        hi = (bk + step).min(hi);
    }
    match best {
        Some((_, c)) => c,
        None => eval(0),
    }
}

/// Number of parts per group, and the resulting estimate.
fn split_parts(groups: &[Range<u64>], params: &CostParams) -> (Vec<u64>, f64) {
    let sizes: Vec<u64> = groups.iter().map(|g| g.end - g.start).collect();
    let mut parts = vec![1u64; sizes.len()];
    let lanes = params.max_concurrency.max(1) as u64;
    let mut time = makespan(sizes.iter().copied().zip(parts.iter().copied()), params);
    let min_part = params.min_split_bytes.max(1);
    while parts.iter().sum::<u64>() < lanes {
        // The group whose parts are largest.
        let Some(j) = (0..sizes.len()).max_by_key(|&j| sizes[j] / parts[j]) else {
            break;
        };
        if sizes[j] / (parts[j] + 1) < min_part {
            break;
        }
        parts[j] += 1;
        let t = makespan(sizes.iter().copied().zip(parts.iter().copied()), params);
        if t < time {
            time = t;
        } else {
            parts[j] -= 1;
            break;
        }
    }
    (parts, time)
}

/// Makespan of (size, parts) requests over `max_concurrency` lanes.
fn makespan(reqs: impl Iterator<Item = (u64, u64)>, params: &CostParams) -> f64 {
    let mut times: Vec<f64> = Vec::new();
    let mut total = 0u64;
    for (size, parts) in reqs {
        total += size;
        let parts = parts.max(1);
        for i in 0..parts {
            let part = size * (i + 1) / parts - size * i / parts;
            times.push(params.request_time(part));
        }
    }
    if times.is_empty() {
        return 0.0;
    }
    let times_len = times.len();
    let lanes = params.max_concurrency.max(1);
    let span = if times.len() <= lanes {
        times.iter().copied().fold(0.0, f64::max)
    } else {
        times.sort_unstable_by(|a, b| b.total_cmp(a));
        // Lane loads in integer nanoseconds so they order in a heap.
        let mut heap: BinaryHeap<Reverse<u64>> = (0..lanes).map(|_| Reverse(0)).collect();
        for t in times {
            let Reverse(load) = heap.pop().unwrap_or(Reverse(0));
            heap.push(Reverse(load + (t * 1e9) as u64));
        }
        heap.into_iter().map(|Reverse(l)| l).max().unwrap_or(0) as f64 / 1e9
    };
    // A server that serves one request at a time spends its request cost
    // on each, whatever the lanes.
    let served = times_len as f64 * params.request_cost.as_secs_f64();
    let span = span.max(served);
    match params.aggregate_bandwidth {
        Some(bw) if bw > 0.0 => span.max(params.request_latency.as_secs_f64() + total as f64 / bw),
        _ => span,
    }
}

fn split_groups(groups: &[Range<u64>], parts: &[u64]) -> Vec<Range<u64>> {
    let mut out = Vec::with_capacity(parts.iter().sum::<u64>() as usize);
    for (g, &p) in groups.iter().zip(parts) {
        let len = g.end - g.start;
        let p = p.max(1);
        for i in 0..p {
            out.push(g.start + len * i / p..g.start + len * (i + 1) / p);
        }
    }
    out
}

fn slices_for(r: &Range<u64>, fetches: &[Range<u64>]) -> Vec<FetchSlice> {
    if r.start >= r.end {
        return Vec::new();
    }
    let first = fetches.partition_point(|f| f.end <= r.start);
    fetches[first..]
        .iter()
        .enumerate()
        .take_while(|(_, f)| f.start < r.end)
        .map(|(i, f)| {
            let s = r.start.max(f.start) - f.start;
            let e = r.end.min(f.end) - f.start;
            FetchSlice {
                fetch: first + i,
                range: s as usize..e as usize,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
