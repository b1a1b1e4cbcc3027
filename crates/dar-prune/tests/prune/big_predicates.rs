//! Hostile predicate sizes (issue 10, item 10): 100,000-term AND/OR chains
//! go through every pass, deep nesting is a clear error, and a 100,000-value
//! IN list stays a sorted lookup.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use dar_prune::{
    Expr, FileStatistics, MAX_EXPR_DEPTH, Predicate, PruneError, col, lit, parse_expr,
};

const TERMS: i64 = 100_000;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]))
}

fn batch() -> RecordBatch {
    let ids: Int64Array = (0..1000)
        .map(|i| if i % 10 == 9 { None } else { Some(i * 7) })
        .collect();
    RecordBatch::try_new(schema(), vec![Arc::new(ids)]).unwrap()
}

fn files() -> FileStatistics {
    // Ten files: ids 0-99, 100-199, ..., and one past every term.
    FileStatistics::builder(11)
        .with_num_records(Arc::new(Int64Array::from(vec![100; 11])))
        .with_min(
            "id",
            Arc::new(Int64Array::from_iter_values(
                (0..11).map(|f| f * 100 + 1_000_000 * (f / 10)),
            )),
        )
        .with_max(
            "id",
            Arc::new(Int64Array::from_iter_values(
                (0..11).map(|f| f * 100 + 99 + 1_000_000 * (f / 10)),
            )),
        )
        .with_null_count("id", Arc::new(Int64Array::from(vec![0; 11])))
        .build()
}

/// `got` is NULL where the batch's id is NULL (every tenth row), else
/// `want(row)`.
fn assert_rows(got: &arrow_array::BooleanArray, want: impl Fn(i64) -> bool) {
    for (row, v) in got.iter().enumerate() {
        let row = row as i64;
        assert_eq!(v, (row % 10 != 9).then(|| want(row)), "row {row}");
    }
}

/// Runs `f` on a thread with the default test stack (2 MiB), so a pass
/// that recursed per term would overflow here.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn a_100k_term_or_chain_parses_binds_prunes_evaluates_and_prints() {
    on_small_stack(|| {
        let text = (0..TERMS)
            .map(|i| format!("id = {}", i * 3))
            .collect::<Vec<_>>()
            .join(" OR ");
        let expr = parse_expr(&text).unwrap();
        let Expr::Or(terms) = &expr else {
            panic!("one flat OR")
        };
        assert_eq!(terms.len(), TERMS as usize);
        let p = Predicate::try_new(expr, &schema()).unwrap();
        let keep = p.prune(&files()).keep;
        let keep: Vec<bool> = keep.iter().map(Option::unwrap).collect();
        assert_eq!(
            keep,
            [true; 10].into_iter().chain([false]).collect::<Vec<_>>()
        );
        let got = p.evaluate(&batch()).unwrap();
        assert_rows(&got, |row| (row * 7) % 3 == 0);
        let shown = p.expr().to_string();
        assert!(
            shown.starts_with("(id = 0 OR id = 3 OR"),
            "{}",
            &shown[..40]
        );
        assert_eq!(p.columns().len(), 1);
    });
}

#[test]
fn a_100k_term_and_chain_built_by_api_stays_flat() {
    on_small_stack(|| {
        let expr = (1..TERMS).fold(col("id").not_eq(lit(0i64)), |e, i| {
            e.and(col("id").not_eq(lit(i * 1000)))
        });
        let Expr::And(terms) = &expr else {
            panic!("one flat AND")
        };
        assert_eq!(terms.len(), TERMS as usize);
        let p = Predicate::try_new(expr, &schema()).unwrap();
        let got = p.evaluate(&batch()).unwrap();
        // Only row 0 (id 0) is a multiple of 1000; NULL ids stay NULL.
        assert_rows(&got, |row| row != 0);
        assert_eq!(p.prune(&files()).metrics.kept, 11);
        let text = format!("NOT ({})", p.expr());
        let again = Predicate::parse(&text, &schema()).unwrap();
        assert_eq!(
            again.evaluate(&batch()).unwrap(),
            arrow_arith::boolean::not(&got).unwrap()
        );
    });
}

#[test]
fn deep_nesting_is_a_clear_error_not_a_crash() {
    on_small_stack(|| {
        for n in [65, 200, 300, 5000] {
            for (open, close) in [("(", ")"), ("NOT ", ""), ("- ", "")] {
                let text = format!("{}id = 1{}", open.repeat(n), close.repeat(n));
                let err = Predicate::parse(&text, &schema()).unwrap_err();
                assert!(
                    matches!(
                        err,
                        PruneError::TooDeep {
                            limit: MAX_EXPR_DEPTH
                        }
                    ),
                    "{n} {open}: {err}"
                );
                assert!(err.to_string().contains("deeper than 64 levels"), "{err}");
            }
        }
        // `NOT (` and `CAST(` nest up to 16 deep (sqlparser would parse each
        // twice on an error inside: exponential), valid or not.
        for inner in ["id = 1", "id = = 1"] {
            let text = format!("{}{inner}{}", "NOT (".repeat(17), ")".repeat(17));
            let err = Predicate::parse(&text, &schema()).unwrap_err();
            assert!(
                matches!(err, PruneError::TooDeepAfterKeyword { limit: 16 }),
                "{err}"
            );
        }
        let text = format!("{}id = = 1{}", "NOT (".repeat(16), ")".repeat(16));
        assert!(matches!(
            Predicate::parse(&text, &schema()).unwrap_err(),
            PruneError::Parse { .. }
        ));
        // Within the limits: fine.
        let text = format!("{}id = 1{}", "NOT (".repeat(16), ")".repeat(16));
        assert!(Predicate::parse(&text, &schema()).is_ok());
        let text = format!("{}id = 1{}", "(".repeat(60), ")".repeat(60));
        assert!(Predicate::parse(&text, &schema()).is_ok());
        let text = format!("{}id = 1", "NOT ".repeat(60));
        assert!(Predicate::parse(&text, &schema()).is_ok());
        // Built by API: a million NOTs are refused (and dropped) safely.
        let deep = (0..1_000_000).fold(col("id").eq(lit(1i64)), |e, _| e.not());
        let err = Predicate::try_new(deep, &schema()).unwrap_err();
        assert!(matches!(err, PruneError::TooDeep { .. }), "{err}");
        // A 100,000-long chain of another operator is a clean error too.
        let chain = format!("id = {}", vec!["1"; 100_000].join(" + "));
        assert!(Predicate::parse(&chain, &schema()).is_err());
        let chain = format!("id{}", " IS NULL".repeat(100_000));
        assert!(Predicate::parse(&chain, &schema()).is_err());
    });
}

#[test]
fn a_100k_value_in_list_prunes_and_evaluates() {
    on_small_stack(|| {
        let text = format!(
            "id IN ({})",
            (0..TERMS)
                .map(|i| (i * 3).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let p = Predicate::parse(&text, &schema()).unwrap();
        let keep: Vec<bool> = p.prune(&files()).keep.iter().map(Option::unwrap).collect();
        assert_eq!(
            keep,
            [true; 10].into_iter().chain([false]).collect::<Vec<_>>()
        );
        let got = p.evaluate(&batch()).unwrap();
        assert_rows(&got, |row| (row * 7) % 3 == 0);
        let not_in = Predicate::parse(&text.replace(" IN ", " NOT IN "), &schema()).unwrap();
        let got = not_in.evaluate(&batch()).unwrap();
        assert_rows(&got, |row| (row * 7) % 3 != 0);
    });
}
