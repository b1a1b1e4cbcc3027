//! [`filter_columns`]: the columns a SQL statement's filters name, read
//! from its text before any table is opened.
//!
//! A one-shot query (`dar sql`) knows its statement before it opens its
//! tables. Opened with these columns' file statistics selected
//! ([`dar_scan::StatsLoading::Columns`]), a table decodes them from its
//! checkpoint in the pass that decodes the counts, instead of decoding the
//! checkpoint's statistics a second time when the query is first planned.
//! The text is all it has (no table is known yet), so it guesses wide: a
//! name that is not a column with statistics selects nothing, and a column
//! selected but never used only costs its decoding. Results never depend
//! on it.

use std::ops::ControlFlow;

use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{CopyToSource, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::{Expr, Ident, Query, SetExpr, Visit, Visitor};

/// The column paths that the filters of `text` name: identifiers in
/// `WHERE`, `PREWHERE`, `HAVING` (DataFusion pushes a `HAVING` on grouping
/// columns below the aggregate) and `JOIN ... ON`, of every query and
/// subquery, `EXPLAIN` included. A compound name `a.b.c` stands for each
/// of its suffixes (`t.id` is column `id` of table `t`; `s.x` may be field
/// `x` of struct `s`). Unquoted names are lowercased when `ctx`'s parser
/// normalizes identifiers, as DataFusion's planner does. Empty when the
/// text does not parse (the query then reports the error).
///
/// ```
/// use datafusion::prelude::SessionContext;
///
/// let ctx = SessionContext::new();
/// let sql = "SELECT name FROM t WHERE id > 10 AND \"Day\" = 3";
/// let columns = dar_datafusion::filter_columns(&ctx, sql);
/// assert_eq!(columns, [vec!["Day".to_string()], vec!["id".to_string()]]);
/// ```
pub fn filter_columns(ctx: &SessionContext, text: &str) -> Vec<Vec<String>> {
    let state = ctx.state();
    let parser = &state.config().options().sql_parser;
    let Ok(statement) = state.sql_to_statement(text, &parser.dialect) else {
        return Vec::new();
    };
    let mut names = FilterNames {
        normalize: parser.enable_ident_normalization,
        paths: Vec::new(),
    };
    let ControlFlow::Continue(()) = walk(&statement, &mut names);
    names.paths.sort();
    names.paths.dedup();
    names.paths
}

/// Walks every query of a DataFusion statement.
fn walk(statement: &DfStatement, names: &mut FilterNames) -> ControlFlow<std::convert::Infallible> {
    match statement {
        DfStatement::Statement(s) => s.visit(names),
        DfStatement::CopyTo(copy) => match &copy.source {
            CopyToSource::Query(q) => q.visit(names),
            CopyToSource::Relation(_) => ControlFlow::Continue(()),
        },
        DfStatement::Explain(explain) => walk(explain.statement.as_ref(), names),
        _ => ControlFlow::Continue(()),
    }
}

/// Collects the names of each query's filters (the visitor reaches every
/// query, nested ones included).
struct FilterNames {
    normalize: bool,
    paths: Vec<Vec<String>>,
}

impl Visitor for FilterNames {
    type Break = std::convert::Infallible;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<Self::Break> {
        self.body(&query.body);
        ControlFlow::Continue(())
    }
}

impl FilterNames {
    /// The filters of a query body: a `SELECT`'s, or each side's of a set
    /// operation (`UNION`, ...). A parenthesized query is visited on its own.
    fn body(&mut self, body: &SetExpr) {
        match body {
            SetExpr::Select(select) => {
                for filter in [&select.selection, &select.prewhere, &select.having]
                    .into_iter()
                    .flatten()
                {
                    self.names_in(filter);
                }
                for join in select.from.iter().flat_map(|t| &t.joins) {
                    // Only the join's conditions (`ON`, `MATCH_CONDITION`).
                    self.names_in(&join.join_operator);
                }
            }
            SetExpr::SetOperation { left, right, .. } => {
                self.body(left);
                self.body(right);
            }
            _ => {}
        }
    }

    /// Every identifier in `node`'s expressions.
    fn names_in<V: Visit>(&mut self, node: &V) {
        let _ = datafusion::sql::sqlparser::ast::visit_expressions(node, |e| {
            match e {
                Expr::Identifier(ident) => self.paths.push(vec![self.name(ident)]),
                Expr::CompoundIdentifier(parts) => {
                    let path: Vec<String> = parts.iter().map(|p| self.name(p)).collect();
                    for start in 0..path.len() {
                        self.paths.push(path[start..].to_vec());
                    }
                }
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
    }

    /// A name as the planner reads it.
    fn name(&self, ident: &Ident) -> String {
        if self.normalize && ident.quote_style.is_none() {
            ident.value.to_lowercase()
        } else {
            ident.value.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(sql: &str) -> Vec<String> {
        filter_columns(&SessionContext::new(), sql)
            .into_iter()
            .map(|p| p.join("."))
            .collect()
    }

    #[test]
    fn filters_of_every_query_are_named_and_projections_are_not() {
        assert_eq!(columns("SELECT a, b FROM t"), Vec::<String>::new());
        assert_eq!(
            columns("SELECT a FROM t WHERE ID = 1 AND \"Name\" LIKE 'x%'"),
            ["Name", "id"]
        );
        assert_eq!(
            columns("SELECT x FROM t JOIN u ON t.k = u.k2 WHERE t.s.f > 0"),
            ["f", "k", "k2", "s.f", "t.k", "t.s.f", "u.k2"]
        );
        assert_eq!(
            columns(
                "SELECT a FROM t WHERE a IN (SELECT b FROM u WHERE c > 1) UNION ALL SELECT a FROM v WHERE d = 2"
            ),
            // The subquery's projection (`b`) is inside the outer filter.
            ["a", "b", "c", "d"]
        );
        assert_eq!(
            columns(
                "WITH w AS (SELECT * FROM t WHERE e < 3) SELECT day, count(*) FROM w GROUP BY day HAVING day > 1"
            ),
            ["day", "e"]
        );
        assert_eq!(
            columns("EXPLAIN ANALYZE SELECT * FROM t WHERE g IS NULL"),
            ["g"]
        );
        assert_eq!(
            columns("SELECT * FROM delta_scan('/tmp/t') WHERE h BETWEEN 1 AND 2"),
            ["h"]
        );
        // Text that does not parse selects nothing.
        assert_eq!(columns("SELEC * FROM t WHERE id = 1"), Vec::<String>::new());
    }

    #[test]
    fn names_keep_their_case_when_the_parser_does() {
        let config = datafusion::prelude::SessionConfig::new()
            .set_bool("datafusion.sql_parser.enable_ident_normalization", false);
        let ctx = SessionContext::new_with_config(config);
        assert_eq!(
            filter_columns(&ctx, "SELECT * FROM t WHERE Id = 1"),
            [vec!["Id".to_string()]]
        );
    }
}
