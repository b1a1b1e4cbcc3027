//! Expectations on the shared Delta test tables. Every expected keep/prune
//! vector was checked against the data (pyarrow, and again here: a pruned
//! file or row group must hold no matching row by the exact evaluator).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_cast::cast;
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use dar_prune::{FileStatistics, Predicate, RowGroupAccess, access_plan};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::file::metadata::PageIndexPolicy;

use crate::delta_stats::{adds, from_json};

fn utc() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into()))
}

/// All rows of a data file, columns cast to the table's types (what the
/// scan does for INT96 timestamps and widened types).
fn read(path: &Path, schema: &SchemaRef) -> RecordBatch {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .map(|f| {
            let parts: Vec<ArrayRef> = batches
                .iter()
                .map(|b| b.column_by_name(f.name()).unwrap().clone())
                .collect();
            let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
            let whole = arrow_select::concat::concat(&refs).unwrap();
            cast(&whole, f.data_type()).unwrap()
        })
        .collect();
    RecordBatch::try_new(schema.clone(), columns).unwrap()
}

/// Prunes with `stats`, checks the keep vector and that no pruned file
/// holds a match.
fn check_files(
    table: &Path,
    schema: &SchemaRef,
    stats: &FileStatistics,
    paths: &[String],
    text: &str,
    want: &[bool],
) {
    let p = Predicate::parse(text, schema).unwrap();
    let outcome = p.prune(stats);
    let got: Vec<bool> = outcome.keep.iter().map(Option::unwrap).collect();
    assert_eq!(got, want, "{text}");
    assert_eq!(outcome.metrics.unusable_statistics, 0, "{text}");
    for (path, keep) in paths.iter().zip(&got) {
        let matches = p
            .evaluate(&read(&table.join(path), schema))
            .unwrap()
            .true_count();
        assert!(
            *keep || matches == 0,
            "{text}: pruned {path} has {matches} matches"
        );
    }
}

#[test]
fn parsed_stats_files() {
    let Some(table) = dar_testdata::table("kernel/parsed-stats") else {
        return;
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("age", DataType::Int64, true),
        Field::new("salary", DataType::Int64, true),
    ]));
    let adds = adds(&table);
    let paths: Vec<String> = adds.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(paths.len(), 6);
    let columns: Vec<(&str, DataType)> = schema
        .fields()
        .iter()
        .map(|f| (f.name().as_str(), f.data_type().clone()))
        .collect();
    let stats = from_json(&adds, &columns);
    let check =
        |text: &str, want: [bool; 6]| check_files(&table, &schema, &stats, &paths, text, &want);
    // ids: file k holds 100k+1 ..= 100k+100; salary 50100+10000k ..= 60000+10000k.
    check("id > 450", [false, false, false, false, true, true]);
    check("salary <= 60000", [true, false, false, false, false, false]);
    check(
        "id < 50 OR id > 580",
        [true, false, false, false, false, true],
    );
    check(
        "NOT (id >= 50 AND id <= 580)",
        [true, false, false, false, false, true],
    );
    check("id BETWEEN 150 AND 250 AND age > 100", [false; 6]);
    check(
        "id BETWEEN 150 AND 250",
        [false, true, true, false, false, false],
    );
    check(
        "id IN (7, 333, 9999)",
        [true, false, false, true, false, false],
    );
    check("id IS NULL", [false; 6]);
    check("id IS NOT NULL", [true; 6]);
    // Strings compare by bytes: "name_250" lies between "name_1" and
    // "name_99", so file 0 stays (it has no such row, which is allowed).
    check(
        "name = 'name_250'",
        [true, false, true, false, false, false],
    );
    // `_` is a LIKE wildcard, so it is escaped.
    check(
        "name LIKE 'name\\_5%'",
        [true, false, false, false, true, true],
    );
    check("name > 'name_9'", [true, false, false, false, false, false]);
    // Unknown columns in the stats (none here) never prune; an OR with an
    // unprunable side keeps everything.
    check("age = 30 OR salary > 0", [true; 6]);
}

#[test]
fn timestamp_truncation_stats_files() {
    let Some(table) = dar_testdata::table("kernel/timestamp-truncation-stats") else {
        return;
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("ts_col", utc(), true),
    ]));
    let adds = adds(&table);
    let paths: Vec<String> = adds.iter().map(|(p, _)| p.clone()).collect();
    let stats = from_json(&adds, &[("id", DataType::Int64), ("ts_col", utc())]);
    let check =
        |text: &str, want: [bool; 3]| check_files(&table, &schema, &stats, &paths, text, &want);
    // File 1's stats say max 00:00:04.000 but it holds 00:00:04.000500: the
    // stored max is truncated to milliseconds, so the file must stay.
    check(
        "ts_col > TIMESTAMP '1970-01-01T00:00:04Z'",
        [false, true, true],
    );
    check(
        "ts_col = TIMESTAMP '1970-01-01T00:00:04.0005Z'",
        [false, true, false],
    );
    check(
        "ts_col >= TIMESTAMP '1970-01-01T00:00:04.001Z'",
        [false, false, true],
    );
    check(
        "ts_col < TIMESTAMP '1970-01-01T00:00:03Z'",
        [true, false, false],
    );
    check(
        "ts_col BETWEEN TIMESTAMP '1970-01-01T00:00:05Z' AND TIMESTAMP '1970-01-01T00:00:06Z'",
        [false, false, false],
    );
    let p = Predicate::parse("ts_col > TIMESTAMP '1970-01-01T00:00:04Z'", &schema).unwrap();
    assert_eq!(
        p.evaluate(&read(&table.join(&paths[1]), &schema))
            .unwrap()
            .true_count(),
        1
    );
}

fn all_types_schema() -> SchemaRef {
    let nested: Fields = vec![
        Field::new(
            "col-7f2f94cf-7082-430c-bba7-852bc6c5215e",
            DataType::Int32,
            true,
        ),
        Field::new(
            "col-26fcfd6b-04c7-4772-8bdf-04ac9425f06e",
            DataType::Utf8,
            true,
        ),
        Field::new(
            "col-92dcf16d-d249-48a9-afb8-93deeaf7ce23",
            DataType::Float64,
            true,
        ),
    ]
    .into();
    Arc::new(Schema::new(vec![
        Field::new(
            "col-042fadad-0f76-466d-a94d-e1159c2a9ed6",
            DataType::Int8,
            true,
        ),
        Field::new(
            "col-6dc68f07-711d-4f00-8bd6-1f5bc698e8ad",
            DataType::Int16,
            true,
        ),
        Field::new(
            "col-e0571b78-2d49-4109-9add-f2c54d6ea29e",
            DataType::Int32,
            true,
        ),
        Field::new(
            "col-6c805ddb-539c-4ed3-bada-ac7a2082c889",
            DataType::Int64,
            true,
        ),
        Field::new(
            "col-ab1a4b4f-8850-48e3-a2ab-4eb52aa5bc57",
            DataType::Float32,
            true,
        ),
        Field::new(
            "col-fd0d362b-c828-4ab2-aea0-d7fb194a87fa",
            DataType::Float64,
            true,
        ),
        Field::new(
            "col-2e98df1d-e620-4a91-8ef8-6b196ce79105",
            DataType::Date32,
            true,
        ),
        Field::new("col-caa487cc-e27c-4d92-85ae-1c497cc9e92c", utc(), true),
        Field::new(
            "col-5a3cb861-db96-4e6d-a3b9-91aab0a9f0ab",
            DataType::Timestamp(TimeUnit::Microsecond, None),
            true,
        ),
        Field::new(
            "col-5006b1fd-f61e-40da-a5d4-3957248a4269",
            DataType::Utf8,
            true,
        ),
        Field::new(
            "col-970dbfdb-8cdd-4adf-a952-2fbefc038496",
            DataType::Decimal128(10, 2),
            true,
        ),
        Field::new(
            "col-f7007db6-65d0-4e2b-8552-d8a37bc06d2c",
            DataType::Boolean,
            true,
        ),
        Field::new(
            "col-cbe103e8-96dc-4fd7-821e-602cf8902e6b",
            DataType::Binary,
            true,
        ),
        Field::new(
            "col-481c7590-d3b8-4e9c-b40e-7b7128a972f4",
            DataType::Struct(nested),
            true,
        ),
    ]))
}

/// Logical name -> physical path (column mapping is the scan's job; the
/// predicate here is written against physical names).
fn physical(text: &str) -> String {
    const NAMES: [(&str, &str); 17] = [
        ("byte_col", "col-042fadad-0f76-466d-a94d-e1159c2a9ed6"),
        ("short_col", "col-6dc68f07-711d-4f00-8bd6-1f5bc698e8ad"),
        ("int_col", "col-e0571b78-2d49-4109-9add-f2c54d6ea29e"),
        ("long_col", "col-6c805ddb-539c-4ed3-bada-ac7a2082c889"),
        ("float_col", "col-ab1a4b4f-8850-48e3-a2ab-4eb52aa5bc57"),
        ("double_col", "col-fd0d362b-c828-4ab2-aea0-d7fb194a87fa"),
        ("date_col", "col-2e98df1d-e620-4a91-8ef8-6b196ce79105"),
        (
            "timestamp_ntz_col",
            "col-5a3cb861-db96-4e6d-a3b9-91aab0a9f0ab",
        ),
        ("timestamp_col", "col-caa487cc-e27c-4d92-85ae-1c497cc9e92c"),
        ("string_col", "col-5006b1fd-f61e-40da-a5d4-3957248a4269"),
        ("decimal_col", "col-970dbfdb-8cdd-4adf-a952-2fbefc038496"),
        ("boolean_col", "col-f7007db6-65d0-4e2b-8552-d8a37bc06d2c"),
        ("binary_col", "col-cbe103e8-96dc-4fd7-821e-602cf8902e6b"),
        ("nested_struct", "col-481c7590-d3b8-4e9c-b40e-7b7128a972f4"),
        ("inner_int", "col-7f2f94cf-7082-430c-bba7-852bc6c5215e"),
        ("inner_string", "col-26fcfd6b-04c7-4772-8bdf-04ac9425f06e"),
        ("inner_double", "col-92dcf16d-d249-48a9-afb8-93deeaf7ce23"),
    ];
    let mut out = text.to_string();
    for (logical, phys) in NAMES {
        out = out.replace(logical, &format!("\"{phys}\""));
    }
    out
}

#[test]
fn stats_writing_all_types_files() {
    let Some(table) = dar_testdata::table("kernel/stats-writing-all-types/delta") else {
        return;
    };
    let schema = all_types_schema();
    let adds = adds(&table);
    let paths: Vec<String> = adds.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(paths.len(), 1);
    let mut leaves: Vec<(String, DataType)> = Vec::new();
    for f in schema.fields() {
        match f.data_type() {
            DataType::Struct(children) => {
                for c in children {
                    leaves.push((format!("{}.{}", f.name(), c.name()), c.data_type().clone()));
                }
            }
            // Boolean and binary carry only null counts; their missing
            // min/max parse as unknown.
            t => leaves.push((f.name().clone(), t.clone())),
        }
    }
    let columns: Vec<(&str, DataType)> = leaves
        .iter()
        .map(|(n, t)| (n.as_str(), t.clone()))
        .collect();
    let stats = from_json(&adds, &columns);
    let check = |text: &str, keep: bool| {
        check_files(&table, &schema, &stats, &paths, &physical(text), &[keep])
    };
    check("byte_col = 3", true);
    check("byte_col > 5", false);
    check("short_col >= 501", false);
    check("int_col BETWEEN 4000 AND 6000", true);
    check("int_col < 1000", false);
    check("long_col IN (30000, 99)", true);
    check("long_col IN (1, 2)", false);
    check("float_col = 2.0", true);
    check("float_col = 3.5", false);
    // NaN may hide above a float max unless the writer is known to count it.
    check("float_col > 3.2", true);
    check("double_col = 7.0", false);
    check("date_col = DATE '2023-12-31'", true);
    check("date_col > DATE '2024-06-15'", false);
    check("timestamp_col = TIMESTAMP '2024-12-25T00:00:00Z'", true);
    check(
        "timestamp_col > TIMESTAMP '2024-12-25T00:00:00.000999Z'",
        false,
    );
    check(
        "timestamp_ntz_col < TIMESTAMP_NTZ '2023-06-15 12:30:00'",
        false,
    );
    check(
        "timestamp_ntz_col >= TIMESTAMP_NTZ '2024-12-25 00:00:00'",
        true,
    );
    check("string_col = 'beta'", true);
    check("string_col LIKE 'gam%'", true);
    check("string_col LIKE 'z%'", false);
    check("string_col < 'alpha'", false);
    check("decimal_col = 456.78", true);
    check("decimal_col > 999.99", false);
    check("decimal_col = 1000", false);
    check("boolean_col = TRUE", true);
    check("binary_col IS NULL", true);
    check("nested_struct.inner_int > 50", false);
    check("nested_struct.inner_int = 30", true);
    check("nested_struct.inner_string > 'nested_c'", false);
    check("nested_struct.inner_double BETWEEN 1.0 AND 1.2", true);
    check("byte_col > 5 OR string_col = 'zzz'", false);
    check("byte_col > 5 OR boolean_col", true);
    check("NOT (byte_col IS NULL OR byte_col <= 5)", false);

    // Writers that put NaN into the max (Delta-Spark) can opt in to pruning.
    let float = "col-ab1a4b4f-8850-48e3-a2ab-4eb52aa5bc57";
    let exact_nan = FileStatistics::builder(1)
        .with_num_records(Arc::new(arrow_array::Int64Array::from(vec![4])))
        .with_nan_outside_bounds(false)
        .with_min(
            float,
            Arc::new(arrow_array::Float32Array::from(vec![1.5])) as ArrayRef,
        )
        .with_max(
            float,
            Arc::new(arrow_array::Float32Array::from(vec![3.15])) as ArrayRef,
        )
        .build();
    check_files(
        &table,
        &schema,
        &exact_nan,
        &paths,
        &physical("float_col > 3.2"),
        &[false],
    );
}

#[test]
fn parquet_row_group_skipping_row_groups_and_pages() {
    let Some(table) = dar_testdata::table("kernel/parquet_row_group_skipping") else {
        return;
    };
    let path = std::fs::read_dir(&table)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "parquet"))
        .unwrap();
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional);
    let builder =
        ParquetRecordBatchReaderBuilder::try_new_with_options(File::open(&path).unwrap(), options)
            .unwrap();
    let metadata = builder.metadata().clone();
    assert_eq!(metadata.num_row_groups(), 1);
    let file_schema = builder.schema().clone();
    let batch = {
        let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
        arrow_select::concat::concat_batches(&file_schema, &batches).unwrap()
    };
    let check = |text: &str, want: RowGroupAccess| {
        let p = Predicate::parse(text, &file_schema).unwrap();
        let plan = access_plan(&p, &metadata);
        assert_eq!(plan.row_groups, vec![want.clone()], "{text}");
        let matches = p.evaluate(&batch).unwrap().true_count();
        match want {
            RowGroupAccess::Skip => assert_eq!(matches, 0, "{text}"),
            _ => assert!(plan.row_groups[0].should_read(), "{text}"),
        }
        matches
    };
    // One row group of 5 rows: int32 1000000..=1000004, date32 1971-01-01..05,
    // utf8 'a'..'e', decimal32 11.032..15.032, float64 up to 1125899906842747.
    assert_eq!(
        check("numeric.ints.int32 >= 1000004", RowGroupAccess::Scan),
        1
    );
    check("numeric.ints.int32 > 1000004", RowGroupAccess::Skip);
    check("numeric.ints.int8 < 0", RowGroupAccess::Skip);
    check("numeric.ints.int64 = 1000000002", RowGroupAccess::Scan);
    check("chrono.date32 < DATE '1971-01-01'", RowGroupAccess::Skip);
    check(
        "chrono.timestamp_ntz > TIMESTAMP_NTZ '1970-01-02 00:04:00'",
        RowGroupAccess::Skip,
    );
    assert_eq!(check("varlen.utf8 = 'c'", RowGroupAccess::Scan), 1);
    check("varlen.utf8 > 'e'", RowGroupAccess::Skip);
    check(
        "numeric.decimals.decimal32 BETWEEN 15.04 AND 20",
        RowGroupAccess::Skip,
    );
    check("numeric.decimals.decimal128 = 13.128", RowGroupAccess::Scan);
    check("numeric.floats.float64 = 5.0", RowGroupAccess::Skip);
    // Parquet float bounds leave NaN out, so a range test cannot prune.
    check("numeric.floats.float64 > 2e15", RowGroupAccess::Scan);
    // INT96 timestamps carry no statistics.
    check(
        "chrono.timestamp > TIMESTAMP '2000-01-01T00:00:00Z'",
        RowGroupAccess::Scan,
    );
    assert_eq!(check("bool IS NULL", RowGroupAccess::Scan), 3);
    check("varlen.utf8 IS NULL", RowGroupAccess::Skip);
    check(
        "numeric.ints.int16 > 2000 OR varlen.utf8 LIKE 'z%'",
        RowGroupAccess::Skip,
    );
}
