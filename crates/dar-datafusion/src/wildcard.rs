//! `SELECT * FROM …` planned without a per-column projection.
//!
//! DataFusion's SQL planner expands `*` into one column expression per
//! column and then deduplicates that list by comparing each new entry's
//! formatted name with every earlier one (`push_projection_dedupl`, run for
//! every `SELECT` whether or not it unnests anything): planning `SELECT *`
//! costs O(columns²) string formats, about 0.3 s at 1,600 columns, more
//! than reading the rows. The projection it builds is the identity, which
//! the optimizer then removes again.
//!
//! [`marked`] recognises the plain form (one `SELECT *` without options,
//! over a `FROM`, with at most `WHERE`, `LIMIT`/`OFFSET`/`FETCH` and `WITH`
//! around it) and swaps the `*` for a one-literal marker; [`unmark`] takes
//! the planned statement back apart: the marker's projection is replaced
//! by its input, whose columns are exactly what `*` expands to (checked
//! with DataFusion's own `expand_wildcard`: no `USING` duplicates). The
//! result is the plan DataFusion plans for the statement, minus the
//! identity projection, so the rows, names, order and types are the same.
//! Anything else (another shape, or a plan that does not come back as
//! `[Limit] → Projection(marker) → input`) is planned as written.

use std::sync::Arc;

use datafusion::logical_expr::utils::expand_wildcard;
use datafusion::logical_expr::{Expr, Limit, LogicalPlan};
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::ast::{
    Expr as SqlExpr, GroupByExpr, Ident, Query, Select, SelectItem, SetExpr, Statement, Value,
    WildcardAdditionalOptions,
};

/// The alias of the literal that stands for `*` while planning.
const MARKER: &str = "__dar_select_star";

/// A copy of `statement` with its `*` replaced by the marker, when it is a
/// plain `SELECT * FROM …` (see the module docs); `None` otherwise.
pub(crate) fn marked(statement: &DfStatement) -> Option<DfStatement> {
    let DfStatement::Statement(s) = statement else {
        return None;
    };
    let Statement::Query(query) = s.as_ref() else {
        return None;
    };
    if !plain_query(query) {
        return None;
    }
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    if !plain_select(select) {
        return None;
    }
    let mut query = query.clone();
    if let SetExpr::Select(select) = query.body.as_mut() {
        select.projection = vec![SelectItem::ExprWithAlias {
            expr: SqlExpr::value(Value::Number("1".into(), false)),
            alias: Ident::new(MARKER),
        }];
    }
    Some(DfStatement::Statement(Box::new(Statement::Query(query))))
}

/// Nothing around the `SELECT` but `WITH`, `LIMIT`/`OFFSET` and `FETCH`.
fn plain_query(q: &Query) -> bool {
    q.order_by.is_none()
        && q.locks.is_empty()
        && q.for_clause.is_none()
        && q.settings.is_none()
        && q.format_clause.is_none()
        && q.pipe_operators.is_empty()
}

/// `SELECT * FROM … [WHERE …]` and nothing else.
fn plain_select(s: &Select) -> bool {
    let star = matches!(
        s.projection.as_slice(),
        [SelectItem::Wildcard(options)] if *options == WildcardAdditionalOptions::default()
    );
    let no_grouping = match &s.group_by {
        GroupByExpr::Expressions(exprs, modifiers) => exprs.is_empty() && modifiers.is_empty(),
        GroupByExpr::All(_) => false,
    };
    star && no_grouping
        && !s.from.is_empty()
        && s.distinct.is_none()
        && s.select_modifiers.is_none()
        && s.top.is_none()
        && s.exclude.is_none()
        && s.into.is_none()
        && s.lateral_views.is_empty()
        && s.prewhere.is_none()
        && s.connect_by.is_empty()
        && s.cluster_by.is_empty()
        && s.distribute_by.is_empty()
        && s.sort_by.is_empty()
        && s.having.is_none()
        && s.named_window.is_empty()
        && s.qualify.is_none()
        && s.value_table_mode.is_none()
}

/// The plan of a [`marked`] statement with the marker's projection
/// replaced by its input; `None` when the plan is not `[Limit …] →
/// Projection(marker) → input` or `*` would not be all of the input's
/// columns.
pub(crate) fn unmark(plan: LogicalPlan) -> Option<LogicalPlan> {
    match plan {
        LogicalPlan::Limit(limit) => {
            let input = unmark(Arc::unwrap_or_clone(limit.input))?;
            Some(LogicalPlan::Limit(Limit {
                skip: limit.skip,
                fetch: limit.fetch,
                input: Arc::new(input),
            }))
        }
        LogicalPlan::Projection(p) => {
            let [Expr::Alias(alias)] = p.expr.as_slice() else {
                return None;
            };
            if alias.name != MARKER || alias.relation.is_some() {
                return None;
            }
            let input = Arc::unwrap_or_clone(p.input);
            // `*` is every column of the input unless a join's USING
            // columns appear twice (DataFusion's own expansion decides).
            let expanded = expand_wildcard(input.schema(), &input, None).ok()?;
            (expanded.len() == input.schema().fields().len()).then_some(input)
        }
        _ => None,
    }
}
