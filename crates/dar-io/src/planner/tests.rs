#![allow(
    clippy::single_range_in_vec_init,
    reason = "lists of one range are test data"
)]

use proptest::prelude::*;

use super::*;

const KB: u64 = 1024;
const MB: u64 = 1024 * 1024;

/// 50 ms, 100 MB/s per request, 16 lanes, cap 2.0, no splitting below 1 MiB.
fn remote() -> CostParams {
    CostParams::remote()
}

/// A model where every request runs one after the other (no parallelism), so
/// merging pays whenever the gap is cheaper than a request.
fn serial() -> CostParams {
    CostParams::remote()
        .with_max_concurrency(1)
        .with_min_split_bytes(u64::MAX)
}

fn bytes_of(plan: &RangePlan) -> u64 {
    plan.fetched_bytes()
}

#[test]
fn empty_input_plans_nothing() {
    let p = plan_ranges(&[], &remote()).unwrap();
    assert!(p.fetches.is_empty());
    assert_eq!(p.estimated, Duration::ZERO);
}

#[test]
fn adjacent_ranges_become_one_request() {
    let needed = [0..100, 100..250, 250..1000];
    let p = plan_ranges(&needed, &remote()).unwrap();
    assert_eq!(p.fetches, vec![0..1000]);
    assert_eq!(
        p.slices[1],
        vec![FetchSlice {
            fetch: 0,
            range: 100..250
        }]
    );
}

#[test]
fn small_gaps_are_merged_when_requests_queue() {
    // 40 ranges of 4 KiB, 1 KiB apart: 40 requests on 1 lane cost 2 s; one
    // merged request costs ~52 ms.
    let needed: Vec<_> = (0..40).map(|i| i * 5 * KB..i * 5 * KB + 4 * KB).collect();
    let p = plan_ranges(&needed, &serial()).unwrap();
    assert_eq!(p.fetches, vec![0..39 * 5 * KB + 4 * KB]);
    assert!(p.estimated < Duration::from_millis(60), "{:?}", p.estimated);
}

#[test]
fn large_gaps_are_not_merged() {
    // Break-even gap at 50 ms * 100 MB/s = 5 MB; these gaps are 64 MiB.
    let needed = [0..MB, 65 * MB..66 * MB, 130 * MB..131 * MB];
    let p = plan_ranges(&needed, &serial().with_max_amplification(1000.0)).unwrap();
    assert_eq!(p.fetches, needed.to_vec());
}

#[test]
fn parallel_lanes_make_merging_pointless() {
    // Three small ranges with 1 MiB gaps and 16 lanes: all three run at
    // once, so merging would only add bytes.
    let needed = [0..KB, MB..MB + KB, 2 * MB..2 * MB + KB];
    let p = plan_ranges(&needed, &remote()).unwrap();
    assert_eq!(p.fetches, needed.to_vec());
}

#[test]
fn many_tiny_ranges_are_merged_into_a_few_requests() {
    // 2000 ranges of 100 B every 1 KiB: 2000 requests over 16 lanes would be
    // 125 rounds (6 s); merged they are a couple of MB.
    let needed: Vec<_> = (0..2000).map(|i| i * KB..i * KB + 100).collect();
    let p = plan_ranges(&needed, &remote().with_max_amplification(20.0)).unwrap();
    assert!(p.fetches.len() <= 16, "{} fetches", p.fetches.len());
    assert!(
        p.estimated < Duration::from_millis(120),
        "{:?}",
        p.estimated
    );
    check_cover(&needed, &p);
}

#[test]
fn amplification_cap_limits_merging() {
    // Ranges of 1 KiB with 9 KiB gaps: merging everything would fetch ~10x
    // the needed bytes. With a cap of 2.0 at most 2x may be fetched.
    let needed: Vec<_> = (0..100).map(|i| i * 10 * KB..i * 10 * KB + KB).collect();
    let capped = plan_ranges(&needed, &serial().with_max_amplification(2.0)).unwrap();
    assert!(bytes_of(&capped) <= 2 * 100 * KB, "{}", bytes_of(&capped));
    assert!(capped.fetches.len() < 100);
    let free = plan_ranges(&needed, &serial().with_max_amplification(100.0)).unwrap();
    assert_eq!(free.fetches.len(), 1);
    let none = plan_ranges(&needed, &serial().with_max_amplification(1.0)).unwrap();
    assert_eq!(none.fetches.len(), 100);
}

#[test]
fn unsorted_and_overlapping_input_is_fetched_once() {
    let needed = [500..600, 0..100, 50..150, 550..560, 0..100, 7..7];
    let p = plan_ranges(&needed, &remote()).unwrap();
    assert_eq!(bytes_of(&p), 250);
    assert_eq!(p.needed_bytes, 250);
    assert!(p.slices[5].is_empty());
    check_cover(&needed, &p);
}

#[test]
fn large_range_is_split_over_idle_lanes() {
    // 16 MiB at 100 MB/s is ~168 ms + 50 ms; in 16 parts ~60 ms.
    let needed = [0..16 * MB];
    let p = plan_ranges(&needed, &remote()).unwrap();
    assert_eq!(p.fetches.len(), 16);
    assert_eq!(bytes_of(&p), 16 * MB);
    assert_eq!(p.slices[0].len(), 16);
    check_cover(&needed, &p);
    // Never below min_split_bytes.
    let q = plan_ranges(&needed, &remote().with_min_split_bytes(8 * MB)).unwrap();
    assert_eq!(q.fetches.len(), 2);
}

#[test]
fn reversed_range_is_an_error() {
    #[allow(clippy::reversed_empty_ranges, reason = "the bad input under test")]
    let bad = [10..5];
    let err = plan_ranges(&bad, &remote()).unwrap_err();
    assert!(matches!(err, Error::InvalidRange { .. }), "{err}");
}

#[test]
fn assemble_rejects_short_buffers() {
    let p = plan_ranges(&[0..10], &remote()).unwrap();
    let err = p.assemble(&[Bytes::from_static(b"short")]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Truncated {
                expected: 10,
                actual: 5,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn estimate_time_counts_rounds() {
    let p = serial();
    let one = estimate_time(&[0], &p);
    let three = estimate_time(&[0, 0, 0], &p);
    assert_eq!(one, Duration::from_millis(50));
    assert_eq!(three, Duration::from_millis(150));
    let agg = remote().with_aggregate_bandwidth(Some(1e6));
    assert!(estimate_time(&[1_000_000, 1_000_000], &agg) >= Duration::from_secs(2));
}

/// Every needed byte appears exactly once, in order, in its slices; fetches
/// are sorted and disjoint; assembling real buffers yields the right bytes.
fn check_cover(needed: &[Range<u64>], p: &RangePlan) {
    assert_eq!(p.slices.len(), needed.len());
    for w in p.fetches.windows(2) {
        assert!(
            w[0].end <= w[1].start,
            "overlapping fetches {:?}",
            p.fetches
        );
    }
    for (r, parts) in needed.iter().zip(&p.slices) {
        let mut pos = r.start;
        for s in parts {
            let f = &p.fetches[s.fetch];
            assert!(s.range.start < s.range.end, "empty slice");
            assert!(s.range.end as u64 <= f.end - f.start);
            assert_eq!(
                f.start + s.range.start as u64,
                pos,
                "gap or overlap in {r:?}"
            );
            pos = f.start + s.range.end as u64;
        }
        if r.start < r.end {
            assert_eq!(pos, r.end, "{r:?} not fully covered");
        } else {
            assert!(parts.is_empty());
        }
    }
    // Materialise: byte value = offset mod 251.
    let buffers: Vec<Bytes> = p
        .fetches
        .iter()
        .map(|f| {
            (f.start..f.end)
                .map(|o| (o % 251) as u8)
                .collect::<Vec<_>>()
                .into()
        })
        .collect();
    let out = p.assemble(&buffers).unwrap();
    for (r, b) in needed.iter().zip(out) {
        let want: Vec<u8> = (r.start..r.end).map(|o| (o % 251) as u8).collect();
        assert_eq!(&b[..], &want[..], "{r:?}");
    }
}

fn arb_params() -> impl Strategy<Value = CostParams> {
    (
        0u64..200,
        1u64..1000,
        1usize..32,
        1.0f64..8.0,
        1u64..100_000,
    )
        .prop_map(|(lat_ms, mbps, conc, cap, split)| {
            CostParams::remote()
                .with_request_latency(Duration::from_millis(lat_ms))
                .with_bandwidth(mbps as f64 * 1e6)
                .with_max_concurrency(conc)
                .with_max_amplification(cap)
                .with_min_split_bytes(split)
        })
}

proptest! {
    #[test]
    fn plan_covers_every_needed_byte_exactly_once(
        raw in prop::collection::vec((0u64..200_000, 0u64..20_000), 0..60),
        params in arb_params(),
    ) {
        let needed: Vec<Range<u64>> = raw.iter().map(|&(s, l)| s..s + l).collect();
        let p = plan_ranges(&needed, &params).unwrap();
        check_cover(&needed, &p);
        let cap = (p.needed_bytes as f64 * params.max_amplification).floor() as u64;
        prop_assert!(p.fetched_bytes() <= cap.max(p.needed_bytes),
            "fetched {} > cap {}", p.fetched_bytes(), cap);
        prop_assert!(p.fetched_bytes() >= p.needed_bytes);
    }
}

/// 200 ms per request, 16 lanes, one 18.75 MB/s link (150 Mbit/s) that the
/// requests in flight share: each of 16 gets a sixteenth.
fn shared_slow_link() -> CostParams {
    CostParams::remote()
        .with_request_latency(Duration::from_millis(200))
        .with_bandwidth(18.75e6 / 16.0)
        .with_aggregate_bandwidth(Some(18.75e6))
}

#[test]
fn with_free_lanes_on_a_bandwidth_bound_link_no_gap_is_fetched() {
    // 12 column chunks of 100 KiB, 60 KiB apart: as many requests as there
    // are free lanes cost one round; every merged gap costs link time.
    let needed: Vec<_> = (0..12)
        .map(|i| i * 160 * KB..i * 160 * KB + 100 * KB)
        .collect();
    let p = plan_ranges(&needed, &shared_slow_link()).unwrap();
    assert_eq!(p.fetches.len(), 12, "{:?}", p.fetches);
    assert_eq!(bytes_of(&p), 12 * 100 * KB);
}

#[test]
fn in_the_latency_bound_regime_gaps_are_merged() {
    // The same ranges on one lane with a fast link: requests queue, and a
    // 60 KiB gap costs less than a 200 ms request (within a 2x byte cap).
    let params = shared_slow_link()
        .with_max_amplification(2.0)
        .with_max_concurrency(1)
        .with_bandwidth(1e9)
        .with_aggregate_bandwidth(Some(1e9));
    let needed: Vec<_> = (0..12)
        .map(|i| i * 160 * KB..i * 160 * KB + 100 * KB)
        .collect();
    let p = plan_ranges(&needed, &params).unwrap();
    assert_eq!(p.fetches.len(), 1, "{:?}", p.fetches);
}

#[test]
fn gaps_cheaper_than_a_serial_servers_request_are_merged_past_the_cap() {
    // Ten 10 kB pages 40 kB apart: merging every gap reads 4.6x the needed
    // bytes, far past the 1.25x cap.
    let needed: Vec<Range<u64>> = (0..10)
        .map(|i| i * 50 * KB..i * 50 * KB + 10 * KB)
        .collect();
    let fast_link = CostParams::remote()
        .with_request_latency(Duration::from_millis(1))
        .with_bandwidth(500e6)
        .with_max_concurrency(64);
    // A server that serves requests side by side: ten requests at once.
    let p = plan_ranges(&needed, &fast_link).unwrap();
    assert_eq!(p.fetches.len(), 10);
    // One that serves one at a time, 1 ms each: a 40 kB gap costs 0.08 ms
    // of link, a request 1 ms: one request.
    let serial = fast_link.with_request_cost(Duration::from_millis(1));
    let p = plan_ranges(&needed, &serial).unwrap();
    assert_eq!(p.fetches, vec![0..460 * KB]);
    assert!(p.estimated >= Duration::from_millis(1));
    // Gaps dearer than a request stay within the cap.
    let slow_link = serial.with_bandwidth(10e6);
    let p = plan_ranges(&needed, &slow_link).unwrap();
    assert!(bytes_of(&p) as f64 <= 100.0 * KB as f64 * 1.25, "{p:?}");
}

proptest! {
    /// Whatever the request cost, every needed byte is in the plan and
    /// the cap holds for every gap dearer than a request.
    #[test]
    fn plans_with_a_request_cost_cover_the_needed_bytes(
        starts in proptest::collection::vec(0u64..1_000_000, 1..40),
        len in 1u64..20_000,
        cost_us in 0u64..5_000,
    ) {
        let needed: Vec<Range<u64>> = starts.iter().map(|&s| s..s + len).collect();
        let params = CostParams::remote()
            .with_request_latency(Duration::from_millis(1))
            .with_bandwidth(200e6)
            .with_max_concurrency(32)
            .with_request_cost(Duration::from_micros(cost_us));
        let plan = plan_ranges(&needed, &params).unwrap();
        let buffers: Vec<Bytes> = plan
            .fetches
            .iter()
            .map(|f| Bytes::from((f.start..f.end).map(|b| (b % 251) as u8).collect::<Vec<u8>>()))
            .collect();
        let got = plan.assemble(&buffers).unwrap();
        for (r, b) in needed.iter().zip(&got) {
            let want: Vec<u8> = (r.start..r.end).map(|b| (b % 251) as u8).collect();
            prop_assert_eq!(b.as_ref(), &want[..]);
        }
        // What is fetched past the needed bytes is merged gaps: those
        // cheaper than a request in full, the others within the cap.
        let free = params.free_gap_bytes();
        let unioned = union(&needed);
        let needed_bytes: u64 = unioned.iter().map(|r| r.end - r.start).sum();
        let free_gaps: u64 = unioned
            .windows(2)
            .map(|w| w[1].start - w[0].end)
            .filter(|&g| g <= free)
            .sum();
        let cap = (needed_bytes as f64 * params.max_amplification).floor() as u64;
        prop_assert!(plan.fetched_bytes() <= cap + free_gaps, "{plan:?}");
    }
}
