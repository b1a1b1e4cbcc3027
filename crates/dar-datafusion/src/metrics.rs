//! dar's scan metrics as DataFusion metrics (shown by `EXPLAIN ANALYZE`).
//!
//! One dar scan serves every partition of the plan, so its counters are
//! plan-wide metrics (no partition): files, row groups and pages kept and
//! pruned, rows removed by deletion vectors and by the predicate, and the
//! data requests and bytes since the scan was planned.

use std::borrow::Cow;
use std::sync::Arc;

use dar_scan::{MetricsSnapshot, Stage};
use datafusion::physical_plan::metrics::{Count, Metric, MetricValue, MetricsSet, Time};

fn count(name: &'static str, value: u64) -> Arc<Metric> {
    let c = Count::new();
    c.add(usize::try_from(value).unwrap_or(usize::MAX));
    Arc::new(Metric::new(
        MetricValue::Count {
            name: Cow::Borrowed(name),
            count: c,
        },
        None,
    ))
}

fn time(name: String, value: std::time::Duration) -> Arc<Metric> {
    let t = Time::new();
    t.add_duration(value);
    Arc::new(Metric::new(
        MetricValue::Time {
            name: Cow::Owned(name),
            time: t,
        },
        None,
    ))
}

/// Adds the figures of `m` to `set`.
pub(crate) fn add_scan_metrics(set: &mut MetricsSet, m: &MetricsSnapshot) {
    let io = [
        ("requests", m.io.requests()),
        ("bytes_scanned", m.io.bytes()),
    ];
    // DataFusion counts the rows and batches a plan outputs itself.
    let counts = m
        .counters()
        .into_iter()
        .filter(|(name, _)| !name.ends_with("_output"))
        .chain(io)
        .chain(m.io.cache.named());
    for (name, value) in counts {
        set.push(count(name, value));
    }
    for stage in Stage::ALL {
        let d = m.time(stage);
        if !d.is_zero() {
            set.push(time(format!("time_{}", stage.name()), d));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_become_named_metrics() {
        let mut m = MetricsSnapshot::default();
        m.files_total = 4;
        m.files_pruned = 3;
        m.pages_pruned = 2;
        let mut set = MetricsSet::new();
        add_scan_metrics(&mut set, &m);
        let get = |n: &str| set.sum_by_name(n).map(|v| v.as_usize());
        assert_eq!(get("files_total"), Some(4));
        assert_eq!(get("files_pruned"), Some(3));
        assert_eq!(get("pages_pruned"), Some(2));
        assert_eq!(get("requests"), Some(0));
    }
}
