//! The kernel's Spark-written CDF tables row for row (exact multisets, as
//! deltalake and delta-kernel-rs read them), their refusals, and the same
//! rows over S3.

use super::*;
use dar_scan::ErrorKind;

/// (table, start, end, rows): deltalake's `load_cdf` (delta-rs) rows, which
/// agree with delta-kernel-rs's `kernel/tests/cdf.rs` for every range it pins.
const EXPECTED: &[(&str, u64, Option<u64>, &[&str])] = &[
    (
        "cdf-table-with-dv",
        0,
        None,
        &[
            "0|delete|1",
            "0|delete|3",
            "0|insert|0",
            "0|insert|2",
            "0|insert|5",
            "1|delete|3",
            "1|insert|0",
            "1|insert|4",
            "2|insert|0",
            "3|delete|5",
            "3|insert|0",
            "3|insert|6",
            "4|delete|3",
            "4|insert|0",
            "4|insert|4",
            "5|delete|3",
            "5|insert|0",
            "5|insert|5",
            "6|insert|0",
            "7|insert|0",
            "8|insert|0",
            "9|delete|1",
            "9|insert|0",
            "9|insert|2",
        ],
    ),
    (
        "cdf-table",
        0,
        None,
        &[
            "10|Borb|2023-12-25|insert|0",
            "1|Steve|2023-12-22|insert|0",
            "2|Bob|2023-12-22|update_postimage|1",
            "2|Bob|2023-12-23|insert|0",
            "2|Bob|2023-12-23|update_preimage|1",
            "3|Dave|2023-12-22|update_postimage|1",
            "3|Dave|2023-12-23|insert|0",
            "3|Dave|2023-12-23|update_preimage|1",
            "4|Kate|2023-12-22|update_postimage|1",
            "4|Kate|2023-12-23|insert|0",
            "4|Kate|2023-12-23|update_preimage|1",
            "5|Emily|2023-12-24|insert|0",
            "5|Emily|2023-12-24|update_preimage|2",
            "5|Emily|2023-12-29|update_postimage|2",
            "6|Carl|2023-12-24|insert|0",
            "6|Carl|2023-12-24|update_preimage|2",
            "6|Carl|2023-12-29|update_postimage|2",
            "7|Dennis|2023-12-24|insert|0",
            "7|Dennis|2023-12-24|update_preimage|2",
            "7|Dennis|2023-12-29|delete|3",
            "7|Dennis|2023-12-29|update_postimage|2",
            "8|Claire|2023-12-25|insert|0",
            "9|Ada|2023-12-25|insert|0",
        ],
    ),
    (
        "cdf-table-non-partitioned",
        0,
        None,
        &[
            "10|Borb|2024-04-17|99999999999999999|true|3.14|1|insert|0",
            "1|Alex|2024-04-14|1|true|3.14|1|insert|4",
            "1|Steve|2024-04-14|1|true|3.14|1|insert|0",
            "2|Alan|2024-04-15|1|true|3.14|1|insert|4",
            "2|Bob|2024-04-14|1|true|3.14|1|update_postimage|1",
            "2|Bob|2024-04-15|1|true|3.14|1|insert|0",
            "2|Bob|2024-04-15|1|true|3.14|1|update_preimage|1",
            "3|Dave|2024-04-14|2|true|3.14|1|update_postimage|1",
            "3|Dave|2024-04-15|2|true|3.14|1|insert|0",
            "3|Dave|2024-04-15|2|true|3.14|1|update_preimage|1",
            "4|Kate|2024-04-14|3|true|3.14|1|update_postimage|1",
            "4|Kate|2024-04-15|3|true|3.14|1|insert|0",
            "4|Kate|2024-04-15|3|true|3.14|1|update_preimage|1",
            "5|Emily|2024-04-14|4|true|3.14|1|update_postimage|2",
            "5|Emily|2024-04-16|4|true|3.14|1|insert|0",
            "5|Emily|2024-04-16|4|true|3.14|1|update_preimage|2",
            "6|Carl|2024-04-14|5|true|3.14|1|update_postimage|2",
            "6|Carl|2024-04-16|5|true|3.14|1|insert|0",
            "6|Carl|2024-04-16|5|true|3.14|1|update_preimage|2",
            "7|Dennis|2024-04-14|6|true|3.14|1|delete|3",
            "7|Dennis|2024-04-14|6|true|3.14|1|update_postimage|2",
            "7|Dennis|2024-04-16|6|true|3.14|1|insert|0",
            "7|Dennis|2024-04-16|6|true|3.14|1|update_preimage|2",
            "8|Claire|2024-04-17|7|true|3.14|1|insert|0",
            "9|Ada|2024-04-17|8|true|3.14|1|insert|0",
        ],
    ),
    (
        "cdf-table-with-cdc-and-dvs",
        0,
        None,
        &[
            "0|new|insert|25",
            "10|merge1-insert|insert|18",
            "11|merge1-insert|insert|18",
            "11|merge1-insert|update_preimage|20",
            "11||delete|22",
            "11||update_postimage|20",
            "12|merge2-insert|insert|22",
            "1|after-large-delete|insert|25",
            "1|initial|insert|0",
            "1|initial|update_preimage|9",
            "1|update1|delete|10",
            "1|update1|update_postimage|9",
            "2|insert1|insert|1",
            "2|insert1|update_preimage|9",
            "2|update1|update_postimage|9",
            "2|update1|update_preimage|12",
            "2|update2|delete|24",
            "2|update2|update_postimage|12",
            "2||insert|25",
            "3|insert1-delete1|delete|2",
            "3|insert1-delete1|insert|1",
            "3|insert1-delete1|insert|4",
            "3|insert1-delete1|update_preimage|9",
            "3|update1|delete|24",
            "3|update1|update_postimage|9",
            "4|insert1-delete2|delete|24",
            "4|insert1-delete2|delete|5",
            "4|insert1-delete2|insert|1",
            "4|insert1-delete2|insert|7",
            "5|insert1-delete2|delete|5",
            "5|insert1-delete2|insert|1",
            "5|insert2|delete|24",
            "5|insert2|insert|8",
            "6|insert3|delete|24",
            "6|insert3|insert|14",
            "7|insert3|delete|16",
            "7|insert3|insert|14",
            "8|insert4|delete|16",
            "8|insert4|insert|15",
            "9|insert4|insert|15",
            "9|insert4|update_preimage|18",
            "9|merge1-update|delete|24",
            "9|merge1-update|update_postimage|18",
        ],
    ),
];

/// The kernel's pinned ranges of the tables delta-rs cannot read (their
/// file names hold `%`), from `kernel/tests/cdf.rs`.
fn kernel_only() -> Vec<(&'static str, u64, Option<u64>, Vec<String>)> {
    let zero_to_nine = || ids(0..10, "insert", 0);
    let simple = |s: u64, e: u64| {
        let mut rows = Vec::new();
        if s == 0 {
            rows.extend(zero_to_nine());
        }
        if s <= 1 && e >= 1 {
            rows.extend(ids(0..10, "delete", 1));
        }
        if e >= 2 {
            rows.extend(ids(20..25, "insert", 2));
        }
        rows
    };
    let partitioned = [
        "0|old|0|insert|0",
        "1|old|1|insert|0",
        "2|old|0|insert|0",
        "3|old|1|insert|0",
        "4|old|0|insert|0",
        "5|old|1|insert|0",
        "3|old|1|delete|1",
        "1|old|1|update_preimage|1",
        "1|new|1|update_postimage|1",
        "0|old|0|delete|2",
        "2|old|0|delete|2",
        "4|old|0|delete|2",
    ];
    let backtick = [
        "2|10|{field: 1, field.one: 2}|insert|0",
        "4|10|{field: 1, field.one: 2}|insert|0",
        "1|10|{field: 1, field.one: 2}|insert|1",
        "3|10|{field: 1, field.one: 2}|insert|1",
        "5|10|{field: 1, field.one: 2}|insert|1",
    ];
    let all_deleted = || [zero_to_nine(), ids(0..10, "delete", 1)].concat();
    vec![
        ("cdf-table-simple", 0, Some(0), simple(0, 0)),
        ("cdf-table-simple", 1, Some(1), simple(1, 1)),
        ("cdf-table-simple", 2, Some(2), simple(2, 2)),
        ("cdf-table-simple", 0, Some(2), simple(0, 2)),
        (
            "cdf-table-update-ops",
            0,
            Some(2),
            [
                zero_to_nine(),
                ids(20..25, "update_pre", 1),
                ids(30..35, "update_post", 2),
            ]
            .concat(),
        ),
        ("cdf-table-data-change", 0, Some(1), zero_to_nine()),
        (
            "cdf-table-partitioned",
            0,
            Some(2),
            partitioned.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "cdf-table-backtick-column-names",
            0,
            None,
            backtick.iter().map(|s| s.to_string()).collect(),
        ),
        ("cdf-table-delete-unconditional", 0, None, all_deleted()),
        (
            "cdf-table-delete-conditional-all-rows",
            0,
            None,
            all_deleted(),
        ),
        (
            "cdf-table-delete-conditional-two-rows",
            0,
            None,
            [zero_to_nine(), ids([2, 8], "delete", 1)].concat(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_tables_give_exactly_their_changes() {
    let mut cases: Vec<(&str, u64, Option<u64>, Vec<String>)> = EXPECTED
        .iter()
        .map(|(n, s, e, r)| (*n, *s, *e, r.iter().map(|x| x.to_string()).collect()))
        .collect();
    cases.extend(kernel_only());
    for (name, start, end, expected) in cases {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        assert_eq!(
            rows_of(&path, start, end).await,
            sorted(expected),
            "{name} {start}..{end:?}"
        );
    }
}

/// The three column-mapping tables, from version 1 (the feed is switched
/// on there): an update, an append and a delete, read by physical name or
/// field id (rows checked against the Parquet files with pyarrow).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_mapping_tables_and_the_feed_switched_on_later() {
    let name_rows = [
        "1|Alice|100.0|delete|4",
        "2|Bob|200.0|update_preimage|2",
        "2|Bob|250.0|update_postimage|2",
        "4|David|400.0|insert|3",
    ];
    let id_rows = [
        "2|Frank|250.0|update_preimage|2",
        "2|Frank|275.0|update_postimage|2",
        "3|Grace|350.0|delete|4",
        "4|Henry|450.0|insert|3",
    ];
    for (name, expected) in [
        ("cdf-column-mapping-name-mode", name_rows),
        ("cdf-column-mapping-name-mode-3-7", name_rows),
        ("cdf-column-mapping-id-mode", id_rows),
    ] {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        assert_eq!(rows_of(&path, 1, None).await, expected, "{name}");
        // Version 0 has the feed off.
        let err = plan_of(&path, 0, None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ProtocolUnsupported, "{err}");
        assert!(
            err.to_string().contains("not enabled at version 0"),
            "{name}: {err}"
        );
    }
}

/// `table-with-cdf`: the feed off at version 2 (and on again at 3), and a
/// column that becomes non-nullable at 4; kernel's valid and refused ranges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_with_cdf_refuses_what_kernel_refuses() {
    let Some(path) = table_path("kernel/table-with-cdf") else {
        return;
    };
    for (s, e) in [(0, 1), (0, 0), (1, 1)] {
        let plan = plan_of(&path, s, Some(e)).await.unwrap();
        assert!(!plan.tasks().is_empty() || s == 1, "{s}..{e}");
    }
    for (s, e) in [(0, 2), (1, 2), (2, 2), (2, 3)] {
        let err = plan_of(&path, s, Some(e)).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("change data feed is not enabled at version 2"),
            "{s}..{e}: {err}"
        );
    }
    let err = plan_of(&path, 3, Some(4)).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("at version 3, column 'id' becomes non-nullable by end version 4"),
        "{text}"
    );
    assert_eq!(err.kind(), ErrorKind::ProtocolUnsupported);
}

/// Over S3 (the in-process server), with cdc files, DV pairs and column
/// mapping: the same rows as from the local copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feed_reads_over_s3_as_locally() {
    use dar_io::testing::S3Server;
    let server = S3Server::start().await.unwrap();
    server.create_bucket("cdf").await.unwrap();
    for (name, start) in [
        ("cdf-table-with-cdc-and-dvs", 0),
        ("cdf-table", 0),
        ("cdf-column-mapping-id-mode", 1),
    ] {
        let Some(path) = table_path(&format!("kernel/{name}")) else {
            return;
        };
        server.upload_dir(&path, "cdf", name).unwrap();
        let store = dar_io::TableStore::builder(format!("s3://cdf/{name}"))
            .with_env(Vec::new())
            .with_options(server.storage_options())
            .build()
            .unwrap();
        let remote = dar_scan::Table::from_store(store, dar_scan::TableOptions::new())
            .await
            .unwrap();
        let plan = remote.changes(v(start), None).build().await.unwrap();
        let got = change_rows(&collect(&plan).await);
        assert_eq!(got, rows_of(&path, start, None).await, "{name}");
        assert!(!got.is_empty());
        assert!(plan.metrics().snapshot().io.requests() > 0);
    }
}
