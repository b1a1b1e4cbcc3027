//! Issue 33 item 11: a checkpoint that repeats a file. `dar scan`, `dar
//! info` and `dar files` read a repeated add once, and refuse a repeat
//! with other values (or a file both added and removed) in one error line
//! naming the file and the version.

use std::path::Path;

use dar_testkit::{CheckpointOptions, Repeat};
use serde_json::Value;

use crate::{arg, dar};

/// Writes table `t` under `dir`: 3 files of 2 rows (ids 0..6), then a
/// checkpoint shaped by `options` that repeats the first file as `repeat`
/// says. Returns the table's path and the repeated file's.
fn write(dir: &Path, options: CheckpointOptions, repeat: Repeat) -> (String, String) {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Arc::new(object_store::local::LocalFileSystem::new_with_prefix(dir).unwrap());
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let mut table = dar_testkit::TableWriter::builder(
            store,
            object_store::path::Path::from("t"),
            schema.clone(),
        )
        .create()
        .await
        .unwrap();
        let mut first = None;
        for f in 0..3_i64 {
            let ids = Int64Array::from_iter_values(f * 2..f * 2 + 2);
            let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)]).unwrap();
            let commit = table.append(&batch).await.unwrap();
            first.get_or_insert(commit.added[0].path.clone());
        }
        let first = first.unwrap();
        table
            .checkpoint_with(&options.with_repeated_file(&first, repeat))
            .await
            .unwrap();
        (arg(&dir.join("t")), first)
    })
}

/// The checkpoint shapes: one file, parts, sidecars.
fn shapes() -> [(&'static str, CheckpointOptions); 3] {
    [
        ("classic", CheckpointOptions::default()),
        ("2 parts", CheckpointOptions::default().with_parts(2)),
        ("2 sidecars", CheckpointOptions::default().with_sidecars(2)),
    ]
}

fn stdout(args: &[&str]) -> String {
    let out = dar()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The same add repeated: 6 rows, 3 files, by each command (before, the
/// repeated file's 2 rows came twice and it was listed twice).
#[test]
fn a_repeated_file_is_read_once_by_scan_info_and_files() {
    for (shape, options) in shapes() {
        let dir = tempfile::tempdir().unwrap();
        let (t, _) = write(dir.path(), options, Repeat::Same);
        let csv = stdout(&["scan", &t, "--format", "csv"]);
        let mut ids: Vec<&str> = csv.lines().skip(1).collect();
        ids.sort_unstable();
        assert_eq!(ids, ["0", "1", "2", "3", "4", "5"], "{shape}");

        let info: Value = serde_json::from_str(&stdout(&["info", &t, "--json"])).unwrap();
        assert_eq!(info["files"], 3, "{shape}: {info}");
        assert_eq!(info["num_rows"], 6, "{shape}: {info}");

        let files = stdout(&["files", &t, "--format", "json"]);
        assert_eq!(files.lines().count(), 3, "{shape}: {files}");
    }
}

/// A repeat with other values, or a file added and removed: each command
/// fails with one line naming the file and the version.
#[test]
fn a_conflicting_repeat_is_one_error_line_naming_the_file() {
    for (shape, options) in shapes() {
        for repeat in [Repeat::OtherSize, Repeat::OtherStats, Repeat::Removed] {
            let dir = tempfile::tempdir().unwrap();
            let (t, path) = write(dir.path(), options.clone(), repeat);
            for command in [
                vec!["scan", &t, "--format", "csv"],
                vec!["info", &t],
                vec!["files", &t],
            ] {
                let out = dar().args(&command).assert().failure().code(1);
                let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
                assert_eq!(
                    err.lines().count(),
                    1,
                    "{shape} {repeat:?} {command:?}: {err}"
                );
                for part in ["conflicting actions", path.as_str(), "version 3"] {
                    assert!(err.contains(part), "{shape} {repeat:?} {command:?}: {err}");
                }
            }
        }
    }
}
