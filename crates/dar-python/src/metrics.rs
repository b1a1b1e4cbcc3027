//! A scan's metrics as a Python `dict`: the counters of
//! [`dar_scan::MetricsSnapshot`] (what `dar scan --stats` prints), stage
//! times in seconds, and I/O per object class.

use dar_io::ObjectClass;
use dar_scan::MetricsSnapshot;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `m` as a `dict`:
///
/// ```text
/// {"files_total": 4, "files_pruned": 3, ..., "rows_output": 8, "batches_output": 1,
///  "stage_seconds": {"file_pruning": 0.0017, ...},
///  "io": {"requests": 1, "bytes": 8601, "lists": 0, "local_reads": 1,
///         "local_buffers_reused": 0,
///         "classes": {"footer": {"requests": 1, "bytes": 8601, "errors": 0}, ...},
///         "cache": {"hits": 0, "hit_bytes": 0, "disk_hits": 0, ..., "misses": 0, ...}}}
/// ```
pub fn metrics_dict<'py>(py: Python<'py>, m: &MetricsSnapshot) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let counters = m.counters();
    for (name, value) in counters {
        d.set_item(name, value)?;
    }
    let stages = PyDict::new(py);
    for (stage, time) in &m.stage_time {
        stages.set_item(stage.name(), time.as_secs_f64())?;
    }
    d.set_item("stage_seconds", stages)?;

    let io = PyDict::new(py);
    io.set_item("requests", m.io.requests())?;
    io.set_item("bytes", m.io.bytes())?;
    io.set_item("lists", m.io.lists)?;
    io.set_item("local_reads", m.io.local_reads)?;
    io.set_item("local_buffers_reused", m.io.local_buffers_reused)?;
    let classes = PyDict::new(py);
    for class in ObjectClass::ALL {
        let c = m.io.class(class);
        let entry = PyDict::new(py);
        entry.set_item("requests", c.requests)?;
        entry.set_item("bytes", c.bytes)?;
        entry.set_item("errors", c.errors)?;
        classes.set_item(class.name(), entry)?;
    }
    io.set_item("classes", classes)?;
    let cache = PyDict::new(py);
    for (name, value) in m.io.cache.named() {
        cache.set_item(name.strip_prefix("cache_").unwrap_or(name), value)?;
    }
    io.set_item("cache", cache)?;
    d.set_item("io", io)?;
    Ok(d)
}
