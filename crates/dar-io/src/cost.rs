//! The I/O cost model: what a request costs on this store, learned as we go.
//!
//! The planner ([`crate::plan_ranges`]) needs three numbers: the fixed cost of
//! a request (time to first byte), the throughput of one request once bytes
//! flow, and how many requests may be in flight. [`CostParams`] holds them;
//! [`CostModel`] starts from per-backend defaults and replaces latency and
//! bandwidth by the **median** of the last observations (a few slow requests,
//! retries or GC pauses do not move a median), clamped to sane bounds.
//! Observations come from the metered store (every ranged GET) and from an
//! optional bounded [`CostModel::probe`] at table open.
//!
//! Requests that run side by side share one link: the model also learns
//! the **aggregate** bandwidth, the bytes of the recent requests over the
//! time during which at least one of them was receiving (the union of
//! their transfer intervals). With it the planner knows that on a
//! bandwidth-bound link a gap's bytes cost time even when lanes are free,
//! so it merges gaps only where requests, not bytes, are the bottleneck.
//!
//! A server that answers one request at a time (a local emulator) costs
//! its service time for every request however many are in flight. The
//! model tells it from the latest run of requests that waited for their
//! first bytes side by side (six are enough: a one-shot scan's first
//! footers), and keeps what it learned while later runs show nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};

use crate::error::{Error, Result};

/// The numbers the range planner works with.
#[derive(Debug, Clone, PartialEq)]
pub struct CostParams {
    /// Fixed cost of one request (time to first byte).
    pub request_latency: Duration,
    /// Throughput of one request once bytes flow, in bytes per second.
    pub bandwidth: f64,
    /// Optional throughput of all requests together (a shared link), bytes/s.
    pub aggregate_bandwidth: Option<f64>,
    /// Requests the planner may assume run in parallel.
    pub max_concurrency: usize,
    /// Cap on fetched bytes / needed bytes when merging over gaps (>= 1.0).
    pub max_amplification: f64,
    /// Never split a request into parts smaller than this.
    pub min_split_bytes: u64,
    /// Server time per request that concurrency does not hide: a server
    /// that handles one request at a time (a local emulator) costs this
    /// for every request however many are in flight. Zero for stores that
    /// serve requests side by side. A plan of `n` requests takes at least
    /// `n` times this, and a gap is merged, past the amplification cap,
    /// when fetching it costs less link time than this.
    pub request_cost: Duration,
}

impl CostParams {
    /// Local disk: a read costs about 50 µs (a blocking-pool hand-off and a
    /// `pread` from the page cache), so the break-even gap is about 100 KiB;
    /// at most 1.25x the needed bytes are read (every byte read is copied
    /// and held in memory while any page of its buffer is).
    pub fn local() -> Self {
        Self {
            request_latency: Duration::from_micros(50),
            bandwidth: 2.0 * 1024.0 * 1024.0 * 1024.0,
            aggregate_bandwidth: None,
            max_concurrency: 10,
            max_amplification: 1.25,
            min_split_bytes: 8 * 1024 * 1024,
            request_cost: Duration::ZERO,
        }
    }

    /// Object storage before any measurement: 50 ms per request, 100 MB/s per
    /// request, 16 in flight, at most 1.25x the needed bytes fetched (a
    /// merged gap is bytes on a link that other requests share).
    pub fn remote() -> Self {
        Self {
            request_latency: Duration::from_millis(50),
            bandwidth: 100e6,
            aggregate_bandwidth: None,
            max_concurrency: 16,
            max_amplification: 1.25,
            min_split_bytes: 1024 * 1024,
            request_cost: Duration::ZERO,
        }
    }

    /// Sets the per-request latency.
    pub fn with_request_latency(mut self, latency: Duration) -> Self {
        self.request_latency = latency;
        self
    }

    /// Sets the per-request bandwidth in bytes per second.
    pub fn with_bandwidth(mut self, bytes_per_sec: f64) -> Self {
        self.bandwidth = bytes_per_sec;
        self
    }

    /// Sets the aggregate bandwidth (bytes per second) of all requests.
    pub fn with_aggregate_bandwidth(mut self, bytes_per_sec: Option<f64>) -> Self {
        self.aggregate_bandwidth = bytes_per_sec;
        self
    }

    /// Sets the planner's concurrency (at least 1).
    pub fn with_max_concurrency(mut self, n: usize) -> Self {
        self.max_concurrency = n.max(1);
        self
    }

    /// Sets the byte-amplification cap (at least 1.0).
    pub fn with_max_amplification(mut self, cap: f64) -> Self {
        self.max_amplification = if cap.is_finite() { cap.max(1.0) } else { 1.0 };
        self
    }

    /// Sets the minimum part size when splitting large requests.
    pub fn with_min_split_bytes(mut self, bytes: u64) -> Self {
        self.min_split_bytes = bytes.max(1);
        self
    }

    /// Sets the server time per request that concurrency does not hide.
    pub fn with_request_cost(mut self, cost: Duration) -> Self {
        self.request_cost = cost;
        self
    }

    /// Bytes whose transfer takes less link time than one request's
    /// server time ([`Self::request_cost`]): a gap this small is cheaper
    /// fetched than saved by another request.
    pub fn free_gap_bytes(&self) -> u64 {
        let link = self.aggregate_bandwidth.unwrap_or(self.bandwidth).max(1.0);
        (self.request_cost.as_secs_f64() * link) as u64
    }

    /// Estimated time of one request of `bytes` bytes.
    pub fn request_time(&self, bytes: u64) -> f64 {
        self.request_latency.as_secs_f64() + bytes as f64 / self.bandwidth.max(1.0)
    }
}

/// One observed request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// Body bytes received.
    pub bytes: u64,
    /// Time from issuing the request until the response headers arrived.
    pub ttfb: Duration,
    /// Time from issuing the request until the last body byte arrived.
    pub total: Duration,
}

/// Bounds applied to learned values, so one absurd sample cannot poison a plan.
const MIN_LATENCY: Duration = Duration::from_micros(10);
const MAX_LATENCY: Duration = Duration::from_secs(10);
const MIN_BANDWIDTH: f64 = 1e5;
const MAX_BANDWIDTH: f64 = 1e11;
/// Bodies shorter than this say little about throughput (transfer time is
/// noise next to latency) and are used for latency only.
const MIN_THROUGHPUT_SAMPLE_BYTES: u64 = 64 * 1024;

/// When one observed request was issued and when its first byte came.
#[derive(Debug, Clone, Copy)]
struct Request {
    issued: Instant,
    first_byte: Instant,
}

#[derive(Debug, Default)]
struct Samples {
    ttfb: VecDeque<Duration>,
    throughput: VecDeque<f64>,
    /// Transfer intervals (first byte to last byte) and their bytes.
    transfers: VecDeque<(Instant, Instant, u64)>,
    /// Whole requests.
    requests: VecDeque<Request>,
    /// The time per request of a server the requests showed to answer
    /// one at a time, as the latest run that showed it measured it. Kept
    /// while later runs show nothing: a queue in steady state makes every
    /// request wait about as long as the queue is, which no run tells
    /// from a slow server that answers side by side.
    one_at_a_time: Option<Duration>,
}

impl Samples {
    /// Bytes per second of the recent transfers over the time during which
    /// any of them was receiving; `None` until that time is measurable.
    fn aggregate_bandwidth(&self) -> Option<f64> {
        let mut spans: Vec<(Instant, Instant)> =
            self.transfers.iter().map(|(s, e, _)| (*s, *e)).collect();
        spans.sort_unstable();
        let busy = union_length(&spans);
        let bytes: u64 = self.transfers.iter().map(|(_, _, b)| b).sum();
        (busy >= MIN_BUSY && bytes >= MIN_THROUGHPUT_SAMPLE_BYTES)
            .then(|| bytes as f64 / busy.as_secs_f64())
    }

    /// The time per request of a server that answers one request at a
    /// time, when the latest run of requests shows one.
    ///
    /// A request *waits* from its issue to its first byte. A run is a
    /// stretch of time during which some request was always waiting; the
    /// latest run of at least [`SERIAL_RUN`] requests is tested. Its
    /// requests must have waited side by side, on average at least
    /// [`SERIAL_CONCURRENCY`] at once, and yet the second quickest must
    /// have waited at most [`SERIAL_SPREAD`] times the run's length per
    /// request. A server that answers one at a time answers the first of a
    /// queue in one service time, the second in two, and the run lasts a
    /// service time per request: the ratio is 2. A server that answers side
    /// by side answers each wave of requests in about one latency: the run
    /// lasts a latency per wave, and the ratio is the requests per wave,
    /// the run's concurrency. The second, not the first: a run's first
    /// request also pays for what starts with it (connections, threads).
    /// Waits, not whole requests: on a link that bytes keep busy,
    /// responses end one after another while their first bytes came
    /// together, and that is bandwidth, which the model learns apart.
    fn serial_request_cost(&self) -> Option<Duration> {
        let mut waits: Vec<(Instant, Instant)> = self
            .requests
            .iter()
            .map(|r| (r.issued, r.first_byte))
            .collect();
        waits.sort_unstable();
        let (run, busy) = latest_run(&waits, SERIAL_RUN)?;
        let mut durations: Vec<Duration> = run.iter().map(|(s, e)| *e - *s).collect();
        let summed: Duration = durations.iter().sum();
        durations.sort_unstable();
        let second = durations[1];
        let per_request = busy / u32::try_from(run.len()).unwrap_or(u32::MAX);
        let (conc_num, conc_den) = SERIAL_CONCURRENCY;
        let (spread_num, spread_den) = SERIAL_SPREAD;
        let side_by_side = summed * conc_den >= busy * conc_num;
        (side_by_side && !busy.is_zero() && per_request * spread_num >= second * spread_den)
            .then(|| per_request.clamp(MIN_LATENCY, MAX_LATENCY))
    }
}

/// Requests a run must hold before it can show a one-at-a-time server.
const SERIAL_RUN: usize = 6;
/// Requests a run must have had waiting at once, on average (7/2): a burst
/// of [`SERIAL_RUN`] queued at a one-at-a-time server waits 3.5 at once.
const SERIAL_CONCURRENCY: (u32, u32) = (7, 2);
/// The second quickest wait over the run's length per request, at most
/// (11/4): above the 2 of a one-at-a-time server, below the 3.5 a side by
/// side server's waves show at [`SERIAL_CONCURRENCY`] (the least seen
/// over s3-slow's runs, 200 ms away, was 3.4).
const SERIAL_SPREAD: (u32, u32) = (11, 4);

/// The latest run of at least `min` of `spans` (sorted by start) whose
/// union has no gap: the spans of that run and the length of their union
/// (its last end less its first start), or `None` when no run is that
/// long.
fn latest_run(
    spans: &[(Instant, Instant)],
    min: usize,
) -> Option<(&[(Instant, Instant)], Duration)> {
    let mut latest = None;
    let mut start = 0;
    let mut end: Option<Instant> = None;
    for i in 0..=spans.len() {
        match (spans.get(i), end) {
            (Some(&(s, e)), Some(ce)) if s <= ce => end = Some(ce.max(e)),
            (next, _) => {
                if let Some(ce) = end
                    && i - start >= min
                {
                    latest = Some((&spans[start..i], ce - spans[start].0));
                }
                start = i;
                end = next.map(|&(_, e)| e);
            }
        }
    }
    latest
}

/// The length of the union of `spans` (sorted by start).
fn union_length(spans: &[(Instant, Instant)]) -> Duration {
    let mut busy = Duration::ZERO;
    let mut current: Option<(Instant, Instant)> = None;
    for &(s, e) in spans {
        match &mut current {
            Some((_, ce)) if s <= *ce => *ce = (*ce).max(e),
            _ => {
                if let Some((cs, ce)) = current {
                    busy += ce - cs;
                }
                current = Some((s, e));
            }
        }
    }
    if let Some((cs, ce)) = current {
        busy += ce - cs;
    }
    busy
}

/// Receiving time below which an aggregate bandwidth is not trusted.
const MIN_BUSY: Duration = Duration::from_millis(1);

/// A cost model that starts from defaults and learns from observations.
/// Shared (`Arc`) between the metered store that feeds it and the readers
/// that plan with it.
#[derive(Debug)]
pub struct CostModel {
    defaults: CostParams,
    window: usize,
    min_samples: usize,
    samples: Mutex<Samples>,
}

impl CostModel {
    /// A model with these defaults, a window of 32 samples, and at least 3
    /// samples before a learned value replaces a default.
    pub fn new(defaults: CostParams) -> Self {
        Self {
            defaults,
            window: 32,
            min_samples: 3,
            samples: Mutex::new(Samples::default()),
        }
    }

    /// Sets the number of recent samples the medians are taken over.
    pub fn with_window(mut self, window: usize) -> Self {
        self.window = window.max(1);
        self
    }

    /// Sets how many samples are needed before learned values are used.
    pub fn with_min_samples(mut self, n: usize) -> Self {
        self.min_samples = n.max(1);
        self
    }

    /// The defaults this model started from.
    pub fn defaults(&self) -> &CostParams {
        &self.defaults
    }

    /// Records one observed request.
    pub fn observe(&self, obs: Observation) {
        self.observe_ending(obs, Instant::now());
    }

    /// Records a request whose first byte has just arrived, `ttfb` after
    /// it was issued, and whose body may never be read (a whole-object
    /// GET): its wait teaches latency and the server's queue, not
    /// bandwidth.
    pub fn observe_first_byte(&self, ttfb: Duration) {
        let Ok(mut s) = self.samples.lock() else {
            return;
        };
        let now = Instant::now();
        let issued = now.checked_sub(ttfb).unwrap_or(now);
        self.note_wait(&mut s, issued, now);
    }

    /// Notes a request issued at `issued` whose first byte came at
    /// `first_byte`.
    fn note_wait(&self, s: &mut Samples, issued: Instant, first_byte: Instant) {
        push_bounded(&mut s.ttfb, first_byte - issued, self.window);
        push_bounded(&mut s.requests, Request { issued, first_byte }, self.window);
        if let Some(cost) = s.serial_request_cost() {
            s.one_at_a_time = Some(cost);
        }
    }

    /// Records one observed request whose last byte arrived at `end`.
    fn observe_ending(&self, obs: Observation, end: Instant) {
        let Ok(mut s) = self.samples.lock() else {
            return;
        };
        let issued = end.checked_sub(obs.total).unwrap_or(end);
        let first_byte = (issued + obs.ttfb).min(end);
        self.note_wait(&mut s, issued, first_byte);
        let receiving = obs.total.saturating_sub(obs.ttfb);
        let start = end.checked_sub(receiving).unwrap_or(end);
        push_bounded(&mut s.transfers, (start, end, obs.bytes), self.window);
        let transfer = receiving.as_secs_f64();
        if obs.bytes >= MIN_THROUGHPUT_SAMPLE_BYTES && transfer > 0.0 {
            push_bounded(&mut s.throughput, obs.bytes as f64 / transfer, self.window);
        }
    }

    /// Current parameters: defaults with learned latency / bandwidth where
    /// enough samples exist.
    pub fn params(&self) -> CostParams {
        let mut p = self.defaults.clone();
        let Ok(s) = self.samples.lock() else {
            return p;
        };
        if s.ttfb.len() >= self.min_samples {
            let mut v: Vec<Duration> = s.ttfb.iter().copied().collect();
            v.sort_unstable();
            p.request_latency = v[v.len() / 2].clamp(MIN_LATENCY, MAX_LATENCY);
        }
        if let Some(cost) = s.one_at_a_time {
            // Queued behind each other, requests' times to first byte
            // are mostly the queue: one alone waits one service time.
            p.request_cost = p.request_cost.max(cost);
            p.request_latency = p.request_latency.min(cost);
        }
        if s.throughput.len() >= self.min_samples {
            let mut v: Vec<f64> = s.throughput.iter().copied().collect();
            v.sort_unstable_by(f64::total_cmp);
            p.bandwidth = v[v.len() / 2].clamp(MIN_BANDWIDTH, MAX_BANDWIDTH);
            if let Some(aggregate) = s.aggregate_bandwidth() {
                // Never below one request's own throughput.
                let aggregate = aggregate
                    .clamp(MIN_BANDWIDTH, MAX_BANDWIDTH)
                    .max(p.bandwidth);
                p.aggregate_bandwidth = Some(match self.defaults.aggregate_bandwidth {
                    Some(set) => set.min(aggregate),
                    None => aggregate,
                });
            }
        }
        p
    }

    /// Number of (latency, throughput) samples currently held.
    pub fn sample_counts(&self) -> (usize, usize) {
        self.samples
            .lock()
            .map(|s| (s.ttfb.len(), s.throughput.len()))
            .unwrap_or((0, 0))
    }

    /// Primes the model with a bounded probe of one object of known `size`:
    /// `budget.latency_requests` GETs of 4 KiB spread over the object, then
    /// one GET of up to `budget.throughput_bytes` from its start. Never more
    /// than 8 requests and never a range beyond the object.
    pub async fn probe(
        &self,
        store: &dyn ObjectStore,
        path: &Path,
        size: u64,
        budget: ProbeBudget,
    ) -> Result<Vec<Observation>> {
        let mut out = Vec::new();
        if size == 0 {
            return Ok(out);
        }
        let n = budget.latency_requests.min(7) as u64;
        let small = 4096.min(size);
        for i in 0..n {
            let start = (size - small) * i / n.max(1);
            out.push(timed_get(store, path, start..start + small).await?);
        }
        if budget.throughput_bytes > 0 {
            let len = budget.throughput_bytes.min(size);
            out.push(timed_get(store, path, 0..len).await?);
        }
        for o in &out {
            self.observe(*o);
        }
        Ok(out)
    }
}

/// How much a [`CostModel::probe`] may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeBudget {
    /// Small GETs for latency (at most 7).
    pub latency_requests: usize,
    /// Size of the one throughput GET (0 to skip).
    pub throughput_bytes: u64,
}

impl Default for ProbeBudget {
    fn default() -> Self {
        Self {
            latency_requests: 3,
            throughput_bytes: 1024 * 1024,
        }
    }
}

fn push_bounded<T>(q: &mut VecDeque<T>, v: T, cap: usize) {
    if q.len() >= cap {
        q.pop_front();
    }
    q.push_back(v);
}

async fn timed_get(
    store: &dyn ObjectStore,
    path: &Path,
    range: std::ops::Range<u64>,
) -> Result<Observation> {
    let start = Instant::now();
    let opts = GetOptions::new().with_range(Some(GetRange::Bounded(range.clone())));
    let res = store
        .get_opts(path, opts)
        .await
        .map_err(|source| Error::Store {
            path: path.to_string(),
            source,
        })?;
    let ttfb = start.elapsed();
    let bytes = res.bytes().await.map_err(|source| Error::Store {
        path: path.to_string(),
        source,
    })?;
    let expected = range.end - range.start;
    if bytes.len() as u64 != expected {
        return Err(Error::Truncated {
            path: path.to_string(),
            range,
            expected,
            actual: bytes.len() as u64,
        });
    }
    Ok(Observation {
        bytes: expected,
        ttfb,
        total: start.elapsed(),
    })
}

/// Shared handle to a cost model.
pub type SharedCostModel = Arc<CostModel>;

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(bytes: u64, ttfb_ms: u64, total_ms: u64) -> Observation {
        Observation {
            bytes,
            ttfb: Duration::from_millis(ttfb_ms),
            total: Duration::from_millis(total_ms),
        }
    }

    #[test]
    fn defaults_until_enough_samples() {
        let m = CostModel::new(CostParams::remote());
        m.observe(obs(1_000_000, 10, 20));
        m.observe(obs(1_000_000, 10, 20));
        assert_eq!(m.params(), CostParams::remote());
        m.observe(obs(1_000_000, 10, 20));
        let p = m.params();
        assert_eq!(p.request_latency, Duration::from_millis(10));
        // 1 MB in 10 ms of transfer = 100 MB/s.
        assert!((p.bandwidth - 1e8).abs() < 1.0, "{}", p.bandwidth);
    }

    #[test]
    fn median_ignores_outliers() {
        let m = CostModel::new(CostParams::remote());
        for _ in 0..5 {
            m.observe(obs(2_000_000, 20, 40));
        }
        // Two pathological requests: a 30 s stall and a zero-time response.
        m.observe(obs(2_000_000, 30_000, 60_000));
        m.observe(obs(2_000_000, 0, 0));
        let p = m.params();
        assert_eq!(p.request_latency, Duration::from_millis(20));
        assert!((p.bandwidth - 1e8).abs() < 1.0, "{}", p.bandwidth);
    }

    #[test]
    fn small_bodies_feed_latency_only_and_values_are_clamped() {
        let m = CostModel::new(CostParams::remote()).with_min_samples(1);
        m.observe(Observation {
            bytes: 100,
            ttfb: Duration::from_nanos(1),
            total: Duration::from_millis(5),
        });
        let p = m.params();
        assert_eq!(p.request_latency, MIN_LATENCY);
        assert_eq!(p.bandwidth, CostParams::remote().bandwidth);
        assert_eq!(m.sample_counts(), (1, 0));
    }

    #[test]
    fn requests_side_by_side_give_the_links_aggregate_bandwidth() {
        let m = CostModel::new(CostParams::remote());
        // Four 1 MB bodies received over the same 100 ms: each request saw
        // 10 MB/s, the link carried 40 MB/s.
        for _ in 0..4 {
            m.observe(obs(1_000_000, 5, 105));
        }
        let p = m.params();
        assert!((p.bandwidth - 1e7).abs() < 1.0, "{}", p.bandwidth);
        let aggregate = p.aggregate_bandwidth.unwrap();
        assert!((36e6..44e6).contains(&aggregate), "{aggregate}");
    }

    #[test]
    fn window_forgets_old_samples() {
        let m = CostModel::new(CostParams::remote()).with_window(4);
        for _ in 0..4 {
            m.observe(obs(0, 100, 100));
        }
        for _ in 0..4 {
            m.observe(obs(0, 5, 5));
        }
        assert_eq!(m.params().request_latency, Duration::from_millis(5));
        assert_eq!(m.sample_counts(), (4, 0));
    }

    #[tokio::test]
    async fn probe_is_bounded_and_feeds_the_model() {
        use object_store::memory::InMemory;
        use object_store::{ObjectStoreExt, PutPayload};
        let store = InMemory::new();
        let path = Path::from("data/x.parquet");
        store
            .put(&path, PutPayload::from(vec![7u8; 10_000]))
            .await
            .unwrap();
        let m = CostModel::new(CostParams::remote());
        let got = m
            .probe(
                &store,
                &path,
                10_000,
                ProbeBudget {
                    latency_requests: 50,
                    throughput_bytes: 1 << 30,
                },
            )
            .await
            .unwrap();
        // 7 latency GETs at most, plus one throughput GET clamped to the object.
        assert_eq!(got.len(), 8);
        assert_eq!(got[7].bytes, 10_000);
        assert_eq!(m.sample_counts().0, 8);
    }

    /// `n` requests all issued at `t0`, request `i` ending at
    /// `t0 + ends(i)`, fed as observed then.
    fn feed(m: &CostModel, n: u32, ends: impl Fn(u32) -> Duration) {
        let t0 = Instant::now();
        for i in 0..n {
            let total = ends(i);
            m.observe_ending(
                Observation {
                    bytes: 4096,
                    ttfb: total,
                    total,
                },
                t0 + total,
            );
        }
    }

    #[test]
    fn a_server_that_serves_one_request_at_a_time_shows_its_request_cost() {
        // 32 requests in flight at once, answered one after another, 1 ms
        // each (a local emulator): every request waits for those before it.
        let m = CostModel::new(CostParams::remote());
        feed(&m, 32, |i| Duration::from_millis(u64::from(i) + 1));
        let p = m.params();
        assert_eq!(p.request_cost, Duration::from_millis(1), "{p:?}");
        // Not the queue's median wait: one request alone waits 1 ms.
        assert_eq!(p.request_latency, Duration::from_millis(1), "{p:?}");
        // At 100 MB/s per request a gap under 100 kB is cheaper fetched.
        assert_eq!(p.free_gap_bytes(), 100_000);
    }

    /// Feeds one request issued at `t0 + issued_ms`, its first byte
    /// `ttfb_ms` and its last `total_ms` later.
    fn request(
        m: &CostModel,
        t0: Instant,
        issued_ms: u64,
        ttfb_ms: u64,
        total_ms: u64,
        bytes: u64,
    ) {
        let ms = Duration::from_millis;
        m.observe_ending(
            Observation {
                bytes,
                ttfb: ms(ttfb_ms),
                total: ms(total_ms),
            },
            t0 + ms(issued_ms + total_ms),
        );
    }

    #[test]
    fn a_first_burst_of_eight_shows_a_one_at_a_time_servers_cost() {
        // A table's open: seven requests one after another, 2 ms each.
        // Then the footers of eight files, asked for at once and answered
        // one after another, 2 ms each: the first burst a scan sends.
        let m = CostModel::new(CostParams::remote());
        let t0 = Instant::now();
        for i in 0..7 {
            request(&m, t0, 3 * i, 2, 2, 4096);
        }
        assert_eq!(m.params().request_cost, Duration::ZERO);
        for i in 0..8 {
            let waited = 2 * (i + 1);
            request(&m, t0, 30, waited, waited, 65536);
        }
        let p = m.params();
        assert_eq!(p.request_cost, Duration::from_millis(2), "{p:?}");
        // Five are too few: one at a time or side by side, a burst of five
        // waits on average three at once.
        let m = CostModel::new(CostParams::remote());
        for i in 0..5 {
            request(&m, t0, 30, 2 * (i + 1), 2 * (i + 1), 65536);
        }
        assert_eq!(m.params().request_cost, Duration::ZERO);
    }

    #[test]
    fn a_queue_in_steady_state_keeps_the_cost_a_burst_showed() {
        let m = CostModel::new(CostParams::remote());
        let t0 = Instant::now();
        for i in 0..8 {
            request(&m, t0, 0, i + 1, i + 1, 4096);
        }
        assert_eq!(m.params().request_cost, Duration::from_millis(1));
        // Then its eight callers keep the queue eight long: each asks
        // again when answered, every request waits 8 ms, one is answered
        // each 1 ms, and the burst leaves the window.
        for i in 0..64 {
            request(&m, t0, 1 + i, 8, 8, 4096);
        }
        // Kept (a run that holds the burst's last requests and the queue
        // shows a little more: 17 ms over 16 requests).
        let kept = m.params().request_cost;
        assert!(
            (Duration::from_millis(1)..=Duration::from_micros(1100)).contains(&kept),
            "{kept:?}"
        );
    }

    #[test]
    fn waves_of_requests_answered_side_by_side_show_no_request_cost() {
        // A scan over a far store (200 ms): four footers at once, and as
        // their first bytes come, four page reads. The run lasts two
        // latencies for eight requests, a quarter of a latency each, and
        // its second quickest waited one latency: four times that, where
        // a one-at-a-time server's second waits twice.
        let m = CostModel::new(CostParams::remote());
        let t0 = Instant::now();
        for i in 0..4 {
            request(&m, t0, i, 200 + i, 205 + i, 61_000);
        }
        for i in 0..4 {
            request(&m, t0, 199 + i, 200 + i, 201 + i, 5_000);
        }
        assert_eq!(m.params().request_cost, Duration::ZERO);
    }

    #[test]
    fn responses_ending_one_after_another_on_a_busy_link_show_no_request_cost() {
        // Eight 1 MB reads asked for at once from a server that answers
        // side by side (first bytes after 50 ms), their bodies queued on
        // a link that carries one at a time (80 ms each): they end one
        // after another as a one-at-a-time server's would, but that is
        // the link's bandwidth.
        let m = CostModel::new(CostParams::remote());
        let t0 = Instant::now();
        for i in 0..8 {
            request(&m, t0, 0, 50 + i % 2, 50 + 80 * (i + 1), 1_000_000);
        }
        let p = m.params();
        assert_eq!(p.request_cost, Duration::ZERO, "{p:?}");
        assert_eq!(p.free_gap_bytes(), 0);
    }

    #[test]
    fn servers_that_serve_requests_side_by_side_or_one_caller_show_none() {
        // 32 requests in flight, all answered in about 50 ms: side by side.
        let m = CostModel::new(CostParams::remote());
        feed(&m, 32, |i| Duration::from_millis(50 + u64::from(i % 3)));
        assert_eq!(m.params().request_cost, Duration::ZERO);
        // Requests one after another (never two in flight): their time is
        // latency, which the lanes already model.
        let m = CostModel::new(CostParams::remote());
        let t0 = Instant::now();
        for i in 0..8u32 {
            let total = Duration::from_millis(5);
            m.observe_ending(
                Observation {
                    bytes: 4096,
                    ttfb: total,
                    total,
                },
                t0 + total * (i + 1),
            );
        }
        assert_eq!(m.params().request_cost, Duration::ZERO);
        assert_eq!(m.params().free_gap_bytes(), 0);
    }
}
