//! DAT cases: every `expected/vN` (and `latest`) matches
//! `table_version_metadata.json`, loading by time travel to that version.

use std::collections::HashMap;

use serde::Deserialize;

use crate::common::builder;

#[derive(Deserialize)]
struct Expected {
    version: u64,
    properties: HashMap<String, String>,
    min_reader_version: i32,
    min_writer_version: i32,
}

const CASES: [&str; 4] = [
    "basic_append",
    "basic_partitioned",
    "multi_partitioned",
    "with_schema_change",
];

#[tokio::test]
async fn dat_versions_match_expected_metadata() {
    for case in CASES {
        let Some(dir) = dar_testdata::table(&format!("dat/{case}")) else {
            return;
        };
        let mut checked = 0;
        for entry in std::fs::read_dir(dir.join("expected")).unwrap() {
            let entry = entry.unwrap();
            let label = entry.file_name().to_string_lossy().to_string();
            let text =
                std::fs::read_to_string(entry.path().join("table_version_metadata.json")).unwrap();
            let want: Expected = serde_json::from_str(&text).unwrap();
            let b = builder(&dir.join("delta"));
            let s = if label == "latest" {
                b.build().await.unwrap()
            } else {
                let v: u64 = label.trim_start_matches('v').parse().unwrap();
                assert_eq!(v, want.version, "{case}/{label}");
                b.with_version(v).build().await.unwrap()
            };
            assert_eq!(s.version(), want.version, "{case}/{label}");
            assert_eq!(
                s.protocol().min_reader_version,
                want.min_reader_version,
                "{case}/{label}"
            );
            assert_eq!(
                s.protocol().min_writer_version,
                want.min_writer_version,
                "{case}/{label}"
            );
            assert_eq!(s.table_properties(), &want.properties, "{case}/{label}");
            checked += 1;
        }
        assert!(checked >= 2, "{case}: only {checked} expected versions");
    }
}

#[tokio::test]
async fn dat_time_travel_file_counts() {
    // Active files per version, from the logs: each append adds files.
    let expect: [(&str, &[usize]); 4] = [
        ("basic_append", &[1, 2]),
        ("basic_partitioned", &[3, 6]),
        ("multi_partitioned", &[3, 5, 2]),
        ("with_schema_change", &[1, 1]),
    ];
    for (case, counts) in expect {
        let Some(dir) = dar_testdata::table(&format!("dat/{case}")) else {
            return;
        };
        for (v, n) in counts.iter().enumerate() {
            let s = builder(&dir.join("delta"))
                .with_version(v as u64)
                .build()
                .await
                .unwrap();
            assert_eq!((s.version(), s.num_files()), (v as u64, *n), "{case} v{v}");
        }
        let err = builder(&dir.join("delta"))
            .with_version(counts.len() as u64)
            .build()
            .await
            .unwrap_err();
        assert!(
            matches!(err, dar_log::LogError::VersionNotFound { .. }),
            "{err}"
        );
    }
}

#[tokio::test]
async fn schema_change_is_visible_by_version() {
    let Some(dir) = dar_testdata::table("dat/with_schema_change") else {
        return;
    };
    let names = |s: &dar_log::Snapshot| {
        s.schema()
            .fields
            .iter()
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
    };
    let v0 = builder(&dir.join("delta"))
        .with_version(0)
        .build()
        .await
        .unwrap();
    let v1 = builder(&dir.join("delta"))
        .with_version(1)
        .build()
        .await
        .unwrap();
    assert_ne!(names(&v0), names(&v1));
    assert_eq!(names(&v1), ["num1", "num2"]);
}
