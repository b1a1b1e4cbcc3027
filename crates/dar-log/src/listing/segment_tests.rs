use super::*;
use crate::listing::parse_log_file_name;

fn files(names: &[&str]) -> Vec<LogFile> {
    names
        .iter()
        .map(|n| {
            let (n, size) = match n.strip_suffix(" empty") {
                Some(n) => (n, 0),
                None => (*n, 100),
            };
            let p = parse_log_file_name(n).unwrap();
            LogFile {
                location: Path::from(format!("_delta_log/{n}")),
                version: p.version,
                kind: p.kind,
                size,
                last_modified_ms: 0,
                store_version: None,
            }
        })
        .collect()
}

fn seg(names: &[&str], target: Option<u64>) -> Result<LogSegment> {
    LogSegment::build(Path::from("_delta_log"), &files(names), target)
}

const C: [&str; 6] = [
    "00000000000000000000.json",
    "00000000000000000001.json",
    "00000000000000000002.json",
    "00000000000000000002.checkpoint.parquet",
    "00000000000000000003.json",
    "00000000000000000004.json",
];

#[test]
fn newest_checkpoint_then_commits() {
    let s = seg(&C, None).unwrap();
    assert_eq!(s.version, 4);
    assert_eq!(s.checkpoint.as_ref().unwrap().version, 2);
    let v: Vec<u64> = s.commits.iter().map(|f| f.version).collect();
    assert_eq!(v, [3, 4]);
    // Time travel below the checkpoint replays from 0.
    let s = seg(&C, Some(1)).unwrap();
    assert!(s.checkpoint.is_none());
    assert_eq!(s.commits.len(), 2);
    // At the checkpoint: no commits to replay, but the commit is kept for commitInfo.
    let s = seg(&C, Some(2)).unwrap();
    assert!(s.commits.is_empty());
    assert_eq!(s.version_commit.unwrap().version, 2);
    let err = seg(&C, Some(9)).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::VersionNotFound {
                requested: 9,
                latest: 4,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn gaps_and_truncation() {
    let err = seg(&[C[0], C[1], C[3], C[5]], None).unwrap_err();
    assert!(
        matches!(err, LogError::VersionGap { missing: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("missing commit version 3"));
    // Gaps before the checkpoint are fine (cleaned-up history).
    assert_eq!(seg(&[C[3], C[4], C[5]], None).unwrap().version, 4);
    let err = seg(&[C[1], C[2]], None).unwrap_err();
    assert!(
        matches!(err, LogError::TruncatedHistory { earliest: 1, .. }),
        "{err}"
    );
    let err = seg(&[], None).unwrap_err();
    assert!(matches!(err, LogError::NoLog { .. }), "{err}");
}

#[test]
fn checkpoint_completeness_and_ranking() {
    let mp = [
        "00000000000000000000.json",
        "00000000000000000001.json",
        "00000000000000000001.checkpoint.0000000001.0000000003.parquet",
        "00000000000000000001.checkpoint.0000000002.0000000003.parquet",
        "00000000000000000002.json",
    ];
    // Part 3 missing: not a checkpoint; replay from 0.
    let s = seg(&mp, None).unwrap();
    assert!(s.checkpoint.is_none());
    assert_eq!(s.commits.len(), 3);
    // Without commit 0 the incomplete checkpoint cannot help.
    assert!(matches!(
        seg(&mp[1..], None),
        Err(LogError::TruncatedHistory { .. })
    ));
    let mut full = mp.to_vec();
    full.push("00000000000000000001.checkpoint.0000000003.0000000003.parquet");
    full.push("00000000000000000001.checkpoint.parquet");
    let s = seg(&full, None).unwrap();
    let cp = s.checkpoint.unwrap();
    assert_eq!(cp.format, CheckpointFormat::MultiPart);
    assert_eq!(cp.files.len(), 3);
    full.push("00000000000000000001.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet");
    full.push("00000000000000000001.checkpoint.0a0d65cd-4056-49b8-937b-95f9e3ee90e5.json");
    let cp = seg(&full, None).unwrap().checkpoint.unwrap();
    assert_eq!(cp.format, CheckpointFormat::UuidParquet);
    // Zero-byte checkpoints are skipped.
    let s = seg(
        &[
            "00000000000000000000.json",
            "00000000000000000001.json",
            "00000000000000000001.checkpoint.parquet empty",
        ],
        None,
    )
    .unwrap();
    assert!(s.checkpoint.is_none());
}

/// Part counts come from file names: a name claiming billions of parts
/// sizes nothing (it once allocated a slot per claimed part), and the
/// incomplete set is simply not a checkpoint.
#[test]
fn a_huge_part_count_in_a_name_allocates_nothing() {
    let names = [
        "00000000000000000000.json",
        "00000000000000000001.json",
        "00000000000000000001.checkpoint.0000000001.4294967295.parquet",
        "00000000000000000001.checkpoint.4294967295.4294967295.parquet",
    ];
    let s = seg(&names, None).unwrap();
    assert!(s.checkpoint.is_none());
    assert_eq!(s.commits.len(), 2);
}
