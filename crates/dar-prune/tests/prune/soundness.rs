//! Soundness: nothing pruned at file, row-group or page level holds a row
//! that matches (checked by brute force with the exact evaluator).

use arrow_array::{Array, RecordBatch};
use bytes::Bytes;
use dar_prune::{Predicate, RowGroupAccess, access_plan};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use proptest::prelude::*;

use crate::generate::{COLUMNS, batch, predicate, schema};

pub fn write_parquet(batch: &RecordBatch, rows_per_group: usize, rows_per_page: usize) -> Bytes {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows_per_group))
        .set_data_page_row_count_limit(rows_per_page)
        .set_write_batch_size(rows_per_page)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(Some(6))
        .set_column_index_truncate_length(Some(6))
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    Bytes::from(out)
}

pub fn metadata(file: &Bytes) -> std::sync::Arc<ParquetMetaData> {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    ParquetRecordBatchReaderBuilder::try_new_with_options(file.clone(), options)
        .unwrap()
        .metadata()
        .clone()
}

/// Per row: is it selected by the plan?
fn selected_rows(plan: &[RowGroupAccess], metadata: &ParquetMetaData) -> Vec<bool> {
    let mut out = Vec::new();
    for (access, rg) in plan.iter().zip(metadata.row_groups()) {
        let rows = rg.num_rows() as usize;
        match access {
            RowGroupAccess::Skip => out.extend(std::iter::repeat_n(false, rows)),
            RowGroupAccess::Scan => out.extend(std::iter::repeat_n(true, rows)),
            RowGroupAccess::Selection(sel) => {
                let before = out.len();
                for s in sel.iter() {
                    out.extend(std::iter::repeat_n(!s.skip, s.row_count));
                }
                assert_eq!(out.len() - before, rows, "selection covers the row group");
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn pruning_never_drops_a_matching_row(
        batch in batch(200),
        expr in predicate(),
        rows_per_group in 5usize..60,
        rows_per_page in 1usize..8,
        file_rows in 1usize..50,
        loose in prop::collection::vec(any::<bool>(), 200),
    ) {
        let p = Predicate::try_new(expr, &schema()).unwrap();
        let matches = p.evaluate(&batch).unwrap();
        let is_match = |r: usize| matches.is_valid(r) && matches.value(r);

        // Row groups and pages of a real Parquet file.
        let file = write_parquet(&batch, rows_per_group, rows_per_page);
        let meta = metadata(&file);
        let plan = access_plan(&p, &meta);
        let selected = selected_rows(&plan.row_groups, &meta);
        prop_assert_eq!(selected.len(), batch.num_rows());
        for (r, sel) in selected.iter().enumerate() {
            prop_assert!(*sel || !is_match(r), "row {} matches {} but was pruned: {:?}", r, p.expr(), plan);
        }
        // The reader honours the plan and yields every matching row.
        let mut selectors = Vec::new();
        for (access, rg) in plan.row_groups.iter().zip(meta.row_groups()) {
            match access {
                RowGroupAccess::Skip => {}
                RowGroupAccess::Scan => selectors.push(RowSelector::select(rg.num_rows() as usize)),
                RowGroupAccess::Selection(s) => selectors.extend(s.iter().copied()),
            }
        }
        let reader = ParquetRecordBatchReaderBuilder::try_new(file.clone())
            .unwrap()
            .with_row_groups(plan.row_groups_to_read())
            .with_row_selection(RowSelection::from(selectors))
            .build()
            .unwrap();
        let read: usize = reader.map(|b| p.filter(&b.unwrap()).unwrap().num_rows()).sum();
        prop_assert_eq!(read, matches.true_count());

        // Files: Delta-style statistics over chunks of the batch.
        let files: Vec<RecordBatch> = (0..batch.num_rows()).step_by(file_rows)
            .map(|s| batch.slice(s, file_rows.min(batch.num_rows() - s))).collect();
        let stats = crate::delta_stats::from_batches(&files, &schema(), &COLUMNS, &loose[..files.len()]);
        let outcome = p.prune(&stats);
        for (f, keep) in outcome.keep.iter().enumerate() {
            if keep == Some(false) {
                let start = f * file_rows;
                for r in start..start + files[f].num_rows() {
                    prop_assert!(!is_match(r), "file {} pruned but row {} matches {}", f, r, p.expr());
                }
            }
        }
        prop_assert_eq!(outcome.metrics.unusable_statistics, 0);
    }
}

/// Writers that cut a string maximum without a tie-breaker store a value
/// below the real maximum; the file must still be kept.
#[test]
fn cut_string_maximum_keeps_the_file() {
    use std::sync::Arc;
    let long = format!("{}b", "a".repeat(34)); // 35 bytes: cut without a tie-breaker
    let st = arrow_array::StructArray::new_null(
        vec![arrow_schema::Field::new(
            "x",
            arrow_schema::DataType::Int32,
            true,
        )]
        .into(),
        1,
    );
    let b = schema();
    let columns: Vec<arrow_array::ArrayRef> = b
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            "s" => Arc::new(arrow_array::StringArray::from(vec![long.as_str()])) as _,
            "st" => Arc::new(st.clone()) as _,
            _ => arrow_array::new_null_array(f.data_type(), 1),
        })
        .collect();
    let batch = RecordBatch::try_new(b.clone(), columns).unwrap();
    let stats =
        crate::delta_stats::from_batches(std::slice::from_ref(&batch), &b, &COLUMNS, &[false]);
    for text in [
        format!("s > '{}'", "a".repeat(33)),
        format!("s = '{long}'"),
        format!("s LIKE '{}%'", "a".repeat(33)),
    ] {
        let p = Predicate::parse(&text, &b).unwrap();
        assert_eq!(p.evaluate(&batch).unwrap().true_count(), 1, "{text}");
        assert_eq!(p.prune(&stats).keep.true_count(), 1, "{text}");
    }
}

/// Two columns whose pages start at different rows: the selection keeps
/// exactly the segments both columns' pages allow.
#[test]
fn pages_of_columns_with_different_boundaries() {
    use std::sync::Arc;
    let a: Vec<i32> = (0..200).collect();
    let s: Vec<String> = (0..200)
        .map(|i| format!("{:03}-{}", i, "x".repeat(20)))
        .collect();
    let schema = Arc::new(arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("a", arrow_schema::DataType::Int32, false),
        arrow_schema::Field::new("s", arrow_schema::DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(arrow_array::Int32Array::from(a)),
            Arc::new(arrow_array::StringArray::from(s)),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_write_batch_size(1)
        .set_data_page_size_limit(120)
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .build();
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let file = Bytes::from(out);
    let meta = metadata(&file);
    let offsets = meta.offset_index().unwrap();
    let starts = |c: usize| -> Vec<i64> {
        offsets[0][c]
            .page_locations()
            .iter()
            .map(|l| l.first_row_index)
            .collect()
    };
    let (a_pages, s_pages) = (starts(0), starts(1));
    assert!(
        a_pages.len() > 2 && s_pages.len() > a_pages.len(),
        "{a_pages:?} {s_pages:?}"
    );

    let p = Predicate::parse("a >= 40 AND s < '047'", &schema).unwrap();
    let plan = access_plan(&p, &meta);
    let RowGroupAccess::Selection(sel) = &plan.row_groups[0] else {
        panic!("{plan:?}")
    };
    let selected = selected_rows(&plan.row_groups, &meta);
    let want: Vec<bool> = {
        // Rows allowed by a's page stats AND by s's page stats.
        let page_of = |pages: &[i64], r: i64| pages.iter().rposition(|s| *s <= r).unwrap();
        let a_ok = |r: i64| {
            let i = page_of(&a_pages, r);
            let end = a_pages.get(i + 1).copied().unwrap_or(200);
            end > 40 // the page max of `a` is its last row number, end - 1
        };
        let s_ok = |r: i64| {
            let i = page_of(&s_pages, r);
            s_pages[i] < 47 // the page min of `s` is its first row's string
        };
        (0..200).map(|r| a_ok(r) && s_ok(r)).collect()
    };
    assert_eq!(selected, want, "{sel:?}");
    assert!(plan.page_metrics.pruned > 0);
    let matches = p.evaluate(&batch).unwrap();
    for (r, sel) in selected.iter().enumerate().take(47).skip(40) {
        assert!(matches.value(r) && *sel);
    }
}

/// A column the file does not have (added to the table later) reads as
/// NULL in every row: value predicates skip the file's row groups, `IS NULL`
/// keeps them; widened stats (int32 in the file, long in the table) prune.
#[test]
fn absent_and_widened_columns() {
    use std::sync::Arc;
    let file_schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "a",
        arrow_schema::DataType::Int32,
        true,
    )]));
    let batch = RecordBatch::try_new(
        file_schema,
        vec![Arc::new(arrow_array::Int32Array::from(
            (0..100).collect::<Vec<_>>(),
        ))],
    )
    .unwrap();
    let meta = metadata(&write_parquet(&batch, 50, 10));
    let table = arrow_schema::Schema::new(vec![
        arrow_schema::Field::new("a", arrow_schema::DataType::Int64, true),
        arrow_schema::Field::new("b", arrow_schema::DataType::Utf8, true),
    ]);
    let plan = |text: &str| access_plan(&Predicate::parse(text, &table).unwrap(), &meta);
    assert_eq!(
        plan("b = 'x'").row_groups,
        [RowGroupAccess::Skip, RowGroupAccess::Skip]
    );
    assert_eq!(
        plan("b IS NULL").row_groups,
        [RowGroupAccess::Scan, RowGroupAccess::Scan]
    );
    assert_eq!(
        plan("b IS NULL OR a > 10").row_groups,
        [RowGroupAccess::Scan, RowGroupAccess::Scan]
    );
    let p = plan("a >= 95");
    assert_eq!(p.row_groups[0], RowGroupAccess::Skip);
    let RowGroupAccess::Selection(sel) = &p.row_groups[1] else {
        panic!("{p:?}")
    };
    assert_eq!(sel.row_count(), 10, "only the last page of 10 rows");
    assert_eq!(p.row_group_metrics.unusable_statistics, 0);
    let p = plan("a < 5 AND b IS NULL");
    assert_eq!(p.row_groups[1], RowGroupAccess::Skip);
    assert!(
        matches!(p.row_groups[0], RowGroupAccess::Selection(_)),
        "{p:?}"
    );
}

/// The predicate as a Parquet `RowFilter`: only its leaves are decoded for
/// the filter, and the reader returns exactly the matching rows.
#[test]
fn predicate_as_row_filter() {
    use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter};
    let batch = {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        proptest::strategy::ValueTree::current(&batch(200).new_tree(&mut runner).unwrap())
    };
    let file = write_parquet(&batch, 40, 7);
    let p = Predicate::parse("st.x > 3 AND (s LIKE 'a%' OR i IS NULL)", &schema()).unwrap();
    let want = p.evaluate(&batch).unwrap().true_count();
    assert!(
        want > 0 && want < batch.num_rows(),
        "{want} of {}",
        batch.num_rows()
    );
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let mask = dar_prune::predicate_projection(&p, builder.parquet_schema());
    let filter_p = p.clone();
    let filter = ArrowPredicateFn::new(mask, move |b| {
        filter_p
            .evaluate(&b)
            .map_err(|e| arrow_schema::ArrowError::ExternalError(Box::new(e)))
    });
    let reader = builder
        .with_row_filter(RowFilter::new(vec![Box::new(filter)]))
        .build()
        .unwrap();
    let got: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(got, want);
}
