//! The kernel evaluator agrees with the row-by-row reference, which
//! evaluates the predicate as written (before binding rewrites it).

use arrow_array::Array;
use dar_prune::Predicate;
use proptest::prelude::*;

use crate::generate::{batch, predicate, schema};
use crate::reference::eval_row;

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]
    #[test]
    fn kernels_agree_with_reference(batch in batch(60), expr in predicate()) {
        let p = Predicate::try_new(expr.clone(), &schema()).unwrap();
        let got = p.evaluate(&batch).unwrap();
        prop_assert_eq!(got.len(), batch.num_rows());
        for row in 0..batch.num_rows() {
            // The predicate as written (numbers of other types compared by
            // value) and as bound (rewritten on the column types) agree.
            let want = eval_row(&expr, &batch, row);
            prop_assert_eq!(eval_row(p.expr(), &batch, row), want, "row {} of {} bound as {}", row, expr, p.expr());
            let have = if got.is_valid(row) { Some(got.value(row)) } else { None };
            prop_assert_eq!(have, want, "row {} of predicate {} bound as {}", row, expr, p.expr());
        }
        let filtered = p.filter(&batch).unwrap();
        prop_assert_eq!(filtered.num_rows(), got.true_count());
    }
}
