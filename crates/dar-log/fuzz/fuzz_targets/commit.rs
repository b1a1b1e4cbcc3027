//! Arbitrary bytes as a commit file: parsing must return actions or an
//! error naming the file and line, never panic; every parsed add must append
//! to the raw columns (or fail with an error), as replay does; every add and
//! remove path (and `p` DV path) resolves against a table root URI or fails
//! with an error, as replay keys them. An error that blames dar rather than
//! the input (`LogError::Arrow`: a kernel failing on columns dar built) is
//! a finding, as a panic is.
#![no_main]

use dar_log::{LogError, TablePaths};
use dar_log::add_columns::{AddColumnsBuilder, AddRow};
use dar_log::commit::{Action, commit_info, parse_actions};
use libfuzzer_sys::fuzz_target;
use object_store::path::Path;

/// Bad input is an error of its own kind; an Arrow kernel failing on the
/// columns dar built is dar's bug, a finding.
fn judged<T>(result: Result<T, LogError>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e @ LogError::Arrow { .. }) => panic!("internal error: {e}"),
        Err(_) => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(root) = url::Url::parse("s3://bucket/tables/t/") else {
        return;
    };
    let paths = TablePaths::new(&root, &Path::from("tables/t"));
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = dar_log::listing::parse_log_file_name(name);
    }
    let mut adds = AddColumnsBuilder::default();
    let parsed = parse_actions("_delta_log/00000000000000000000.json", data, |line, action| {
        match action {
            Action::Add(a) => {
                let dv = a.deletion_vector.as_ref().map(|d| d.key_parts());
                judged(paths.file_key(&a.path, dv));
                judged(paths.locate(&a.path));
                // An error here is the stats text's (bad input).
                let _ = adds.append(AddRow {
                    path: &a.path,
                    partition_values: a.partition_values,
                    size: Some(a.size),
                    modification_time: Some(a.modification_time),
                    stats: a.stats.as_deref(),
                    dv: None,
                    // Unknown: the file index checks the path itself.
                    plain_path: false,
                });
            }
            Action::Remove(r) => {
                let dv = r.deletion_vector.as_ref().map(|d| d.key_parts());
                judged(paths.file_key(&r.path, dv));
            }
            Action::CommitInfo(raw) => {
                judged(commit_info("f", line, raw));
            }
            _ => {}
        }
        Ok(())
    });
    judged(parsed);
    let _ = adds.finish();
});
