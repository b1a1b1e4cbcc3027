//! A table whose in-commit timestamps were switched on at version 3 and
//! off again at version 8, with file times an hour later than the
//! in-commit timestamps (as in a copied table): each commit's timestamp is
//! the kind its own configuration says.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Int32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use serde_json::json;

use crate::error::Result;
use crate::hand::HandTable;
use crate::log_json::{
    add, cdf_on, commit_info, id_field, metadata, protocol_features, set_file_time, with_ict_from,
};

/// The version whose commit switches in-commit timestamps on.
pub const ICT_ENABLED_AT: u64 = 3;
/// The version whose commit switches them off again.
pub const ICT_DISABLED_AT: u64 = 8;
/// The versions of the table: 0 to 9.
pub const ICT_TOGGLED_VERSIONS: u64 = 10;

/// The file time of commit `v`, ms since the epoch.
fn file_time(v: u64) -> i64 {
    1_700_000_000_000 + 60_000 * v as i64
}

/// The in-commit timestamp of commit `v` (an hour before its file time).
fn ict(v: u64) -> i64 {
    file_time(v) - 3_600_000
}

/// Writes the table at `dir` (one column `id`, change data feed on; commit
/// `v` adds `v{v}.parquet` holding the row `id = v`) and returns, per
/// version, the commit timestamp a reader must give it: the file time for
/// versions 0-2 and 8-9, the in-commit timestamp (an hour earlier) for 3-7.
pub fn write_ict_toggled_table(dir: &Path) -> Result<Vec<(u64, i64)>> {
    let mut t = HandTable::new(dir)?;
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, true)]));
    let mut expected = Vec::new();
    for v in 0..ICT_TOGGLED_VERSIONS {
        let id = i32::try_from(v).unwrap_or(i32::MAX);
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int32Array::from(vec![id]))])
                .map_err(|e| crate::error::TestkitError::Io {
                    path: dir.display().to_string(),
                    reason: e.to_string(),
                })?;
        let name = format!("v{v}.parquet");
        let size = t.write_parquet(&name, &batch)?;
        let on = (ICT_ENABLED_AT..ICT_DISABLED_AT).contains(&v);
        let mut actions = vec![commit_info(file_time(v), on.then(|| ict(v)))];
        match v {
            0 => actions.extend([
                protocol_features(&[], &["inCommitTimestamp"]),
                metadata(id_field(), &[], cdf_on()),
            ]),
            ICT_ENABLED_AT => actions.push(metadata(
                id_field(),
                &[],
                with_ict_from(cdf_on(), ICT_ENABLED_AT, ict(ICT_ENABLED_AT)),
            )),
            ICT_DISABLED_AT => {
                let mut config = cdf_on();
                config["delta.enableInCommitTimestamps"] = json!("false");
                actions.push(metadata(id_field(), &[], config));
            }
            _ => {}
        }
        actions.push(add(&name, size, json!({}), None));
        t.commit(&actions)?;
        let commit = dir.join("_delta_log").join(format!("{v:020}.json"));
        set_file_time(&commit, file_time(v))?;
        expected.push((v, if on { ict(v) } else { file_time(v) }));
    }
    Ok(expected)
}
