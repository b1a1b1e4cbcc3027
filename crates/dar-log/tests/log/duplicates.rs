//! Issue 33 item 11: one logical file (path and DV unique id) is never read
//! twice. A checkpoint's rows are unique and a commit holds at most one add
//! per file (protocol §2.10): a key repeated with the same action is read
//! once, repeated with another action (or added and removed by one
//! checkpoint) is an error naming the version, the log files and the path.
//! Across the parts of a multi-part checkpoint, the sidecars of a V2
//! checkpoint, within one part, in a JSON checkpoint and in one commit.

use dar_log::LogError;
use serde_json::{Value, json};

use crate::writer::{TestLog, add, checkpoint_bytes, dv, metadata, protocol, remove};

/// Writes the multi-part checkpoint of version 0 whose part `o` holds
/// `parts[o - 1]` (the first part also the protocol and metadata).
async fn multi_part(log: &TestLog, parts: &[Vec<Value>]) {
    let n = parts.len();
    for (o, actions) in parts.iter().enumerate() {
        let mut rows = Vec::new();
        if o == 0 {
            rows.extend([protocol(), metadata(false)]);
        }
        rows.extend(actions.iter().cloned());
        log.put(
            &format!(
                "_delta_log/00000000000000000000.checkpoint.{:010}.{n:010}.parquet",
                o + 1
            ),
            checkpoint_bytes(&rows),
        )
        .await;
    }
}

/// Writes a V2 checkpoint of version 0 (a JSON top-level file) whose
/// sidecar `i` holds `sidecars[i]`, and whose top-level file holds `top`.
async fn v2_with_sidecars(log: &TestLog, sidecars: &[Vec<Value>], top: &[Value]) {
    let mut lines = vec![
        protocol(),
        metadata(false),
        json!({"checkpointMetadata": {"version": 0}}),
    ];
    for (i, actions) in sidecars.iter().enumerate() {
        let name = format!("s{i}.parquet");
        let bytes = checkpoint_bytes(actions);
        lines.push(
            json!({"sidecar": {"path": name, "sizeInBytes": bytes.len(), "modificationTime": 0}}),
        );
        log.put(&format!("_delta_log/_sidecars/{name}"), bytes)
            .await;
    }
    lines.extend(top.iter().cloned());
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    log.put(
        "_delta_log/00000000000000000000.checkpoint.00000000-0000-0000-0000-000000000001.json",
        text,
    )
    .await;
}

/// The snapshot's file paths, sorted (with repeats).
async fn paths(log: &TestLog) -> dar_log::Result<Vec<String>> {
    let s = log.builder().build().await?;
    let fi = s.file_index()?;
    let mut out: Vec<String> = (0..fi.len())
        .map(|i| fi.path.value(i).to_string())
        .collect();
    out.sort();
    assert_eq!(s.num_files(), out.len());
    Ok(out)
}

/// `add` of `path` with `field` set to `value`.
fn add_with(path: &str, field: &str, value: Value) -> Value {
    let mut a = add(path, None);
    a["add"][field] = value;
    a
}

/// The conflict error of a load, checked to name `path`, the version and
/// each of `files` (file-name suffixes).
async fn conflict(log: &TestLog, path: &str, files: &[&str], what: &str) {
    let err = log.builder().build().await.unwrap_err();
    let LogError::ConflictingActions {
        version,
        files: named,
        path: p,
        detail,
    } = &err
    else {
        panic!("expected a conflict, got {err}");
    };
    assert_eq!((*version, p.as_str()), (0, path), "{err}");
    assert_eq!(named.len(), files.len(), "{err}");
    for (n, f) in named.iter().zip(files) {
        assert!(n.ends_with(f), "{n} is not {f}: {err}");
    }
    assert!(detail.contains(what), "{err}");
    let text = err.to_string();
    assert!(text.contains(path) && text.contains("version 0"), "{text}");
}

const PART1: &str = "00000000000000000000.checkpoint.0000000001.0000000002.parquet";
const PART2: &str = "00000000000000000000.checkpoint.0000000002.0000000002.parquet";

/// The case: the same add in two parts of a multi-part checkpoint
/// is one file (it was two, and its rows were read twice).
#[tokio::test]
async fn an_add_repeated_across_parts_is_read_once() {
    let log = TestLog::new();
    multi_part(
        &log,
        &[
            vec![add("a.parquet", None), add("b.parquet", None)],
            vec![add("c.parquet", None), add("a.parquet", None)],
        ],
    )
    .await;
    assert_eq!(
        paths(&log).await.unwrap(),
        ["a.parquet", "b.parquet", "c.parquet"]
    );
}

/// The same key in two spellings, and with the same DV, is one file.
#[tokio::test]
async fn repeats_are_found_by_logical_key() {
    let log = TestLog::new();
    multi_part(
        &log,
        &[
            vec![add("x-y.parquet", None), add("d.parquet", Some(dv(1)))],
            vec![add("x%2Dy.parquet", None), add("d.parquet", Some(dv(1)))],
        ],
    )
    .await;
    assert_eq!(paths(&log).await.unwrap(), ["d.parquet", "x-y.parquet"]);
}

/// Repeated with other values (size, statistics, DV descriptor, partition
/// values, modification time), across parts or within one, it is an error
/// naming the parts, the version and the file; not when a newer commit
/// replaces the file (the checkpoint's rows are then not read).
#[tokio::test]
async fn an_add_repeated_with_other_values_is_refused() {
    let mut dv_card = add("d.parquet", Some(dv(1)));
    dv_card["add"]["deletionVector"]["cardinality"] = json!(2);
    let cases = [
        (
            add_with("a.parquet", "size", json!(200)),
            "size (100 and 200)",
        ),
        (
            add_with("a.parquet", "stats", json!("{\"numRecords\":4}")),
            "statistics",
        ),
        (
            add_with("a.parquet", "modificationTime", json!(7)),
            "modificationTime",
        ),
        (
            add_with("a.parquet", "partitionValues", json!({"p": "1"})),
            "partition values",
        ),
        (dv_card, "deletion vector"),
    ];
    for (other, what) in cases {
        let path = other["add"]["path"].as_str().unwrap().to_string();
        let first = add(&path, other["add"].get("deletionVector").map(|_| dv(1)));
        // Across parts.
        let log = TestLog::new();
        multi_part(&log, &[vec![first.clone()], vec![other.clone()]]).await;
        conflict(&log, &path, &[PART1, PART2], what).await;
        // Within one part (a classic checkpoint).
        let log = TestLog::new();
        log.checkpoint(0, &[protocol(), metadata(false), first, other])
            .await;
        conflict(
            &log,
            &path,
            &["00000000000000000000.checkpoint.parquet"],
            what,
        )
        .await;
    }

    // A repeat that a newer commit removes is not read at all, whatever
    // its copies say; one the newer commit re-adds is read once, from the
    // commit.
    let log = TestLog::new();
    multi_part(
        &log,
        &[
            vec![add("a.parquet", None), add("b.parquet", None)],
            vec![
                add_with("a.parquet", "size", json!(5)),
                add("b.parquet", None),
            ],
        ],
    )
    .await;
    log.commit(1, &[remove("a.parquet", None), add("b.parquet", None)])
        .await;
    assert_eq!(paths(&log).await.unwrap(), ["b.parquet"]);
}

/// A checkpoint that adds a file and also removes it (same key) is
/// refused; a remove of the same path with another DV is the normal
/// tombstone of a replaced DV.
#[tokio::test]
async fn a_checkpoint_that_adds_and_removes_a_file_is_refused() {
    let log = TestLog::new();
    multi_part(
        &log,
        &[
            vec![add("a.parquet", None), add("b.parquet", Some(dv(2)))],
            vec![remove("a.parquet", None), remove("b.parquet", Some(dv(1)))],
        ],
    )
    .await;
    conflict(&log, "a.parquet", &[PART1, PART2], "adds and removes").await;

    let log = TestLog::new();
    multi_part(
        &log,
        &[
            vec![add("a.parquet", None), add("b.parquet", Some(dv(2)))],
            vec![
                remove("b.parquet", Some(dv(1))),
                remove("old.parquet", None),
            ],
        ],
    )
    .await;
    assert_eq!(paths(&log).await.unwrap(), ["a.parquet", "b.parquet"]);
}

/// Sidecars of a V2 checkpoint: a repeat across two sidecars is read once,
/// one with other values is refused naming both sidecars; a remove in the
/// top-level file of an add in a sidecar is refused too.
#[tokio::test]
async fn repeats_across_sidecars() {
    let log = TestLog::new();
    v2_with_sidecars(
        &log,
        &[
            vec![add("a.parquet", None), add("b.parquet", None)],
            vec![add("a.parquet", None)],
        ],
        &[],
    )
    .await;
    assert_eq!(paths(&log).await.unwrap(), ["a.parquet", "b.parquet"]);

    let log = TestLog::new();
    v2_with_sidecars(
        &log,
        &[
            vec![add("a.parquet", None)],
            vec![add_with("a.parquet", "size", json!(5))],
        ],
        &[],
    )
    .await;
    conflict(
        &log,
        "a.parquet",
        &["_sidecars/s0.parquet", "_sidecars/s1.parquet"],
        "size",
    )
    .await;

    let log = TestLog::new();
    v2_with_sidecars(
        &log,
        &[vec![add("a.parquet", None)]],
        &[remove("a.parquet", None)],
    )
    .await;
    let err = log.builder().build().await.unwrap_err();
    assert!(
        matches!(&err, LogError::ConflictingActions { files, .. } if files.len() == 2),
        "{err}"
    );
}

/// A V2 checkpoint with its adds inline in the JSON top-level file: a
/// repeated add is read once, a differing one refused.
#[tokio::test]
async fn repeats_in_a_json_checkpoint() {
    let log = TestLog::new();
    v2_with_sidecars(&log, &[], &[add("a.parquet", None), add("a.parquet", None)]).await;
    assert_eq!(paths(&log).await.unwrap(), ["a.parquet"]);

    let log = TestLog::new();
    v2_with_sidecars(
        &log,
        &[],
        &[
            add("a.parquet", None),
            add_with("a.parquet", "size", json!(1)),
        ],
    )
    .await;
    conflict(
        &log,
        "a.parquet",
        &["00000000000000000000.checkpoint.00000000-0000-0000-0000-000000000001.json"],
        "size",
    )
    .await;
}

/// One commit that adds a file twice: the same add is read once (in a
/// commit and in the first commit of a table); another add is an error
/// naming the commit file, both lines and the path.
#[tokio::test]
async fn an_add_repeated_in_one_commit() {
    let log = TestLog::new();
    log.commit(
        0,
        &[
            protocol(),
            metadata(false),
            add("a.parquet", None),
            add("a.parquet", None),
            add("b.parquet", Some(dv(1))),
            add("b.parquet", Some(dv(1))),
        ],
    )
    .await;
    log.commit(1, &[add("c.parquet", None), add("c.parquet", None)])
        .await;
    assert_eq!(
        paths(&log).await.unwrap(),
        ["a.parquet", "b.parquet", "c.parquet"]
    );

    let log = TestLog::new();
    log.commit(0, &[protocol(), metadata(false)]).await;
    log.commit(
        1,
        &[
            add("c.parquet", None),
            add_with("c.parquet", "stats", json!("{\"numRecords\":9}")),
        ],
    )
    .await;
    let err = log.builder().build().await.unwrap_err();
    let LogError::ConflictingActions {
        version,
        files,
        path,
        detail,
    } = &err
    else {
        panic!("expected a conflict, got {err}");
    };
    assert_eq!((*version, path.as_str()), (1, "c.parquet"));
    assert_eq!(files.len(), 1);
    assert!(files[0].ends_with("00000000000000000001.json"), "{err}");
    assert!(
        detail.contains("lines 1 and 2") && detail.contains("statistics"),
        "{err}"
    );

    // The same file added by two commits is a refresh, not a repeat.
    let log = TestLog::new();
    log.commit(0, &[protocol(), metadata(false), add("a.parquet", None)])
        .await;
    log.commit(1, &[add_with("a.parquet", "size", json!(7))])
        .await;
    let s = log.builder().build().await.unwrap();
    assert_eq!(s.file_index().unwrap().size.value(0), 7);
}
