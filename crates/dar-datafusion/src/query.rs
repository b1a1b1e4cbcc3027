//! [`sql`]: one SQL statement, planned with dar's rules before DataFusion
//! runs it.
//!
//! `SessionContext::sql` takes any statement and plans it as written. A
//! reader over Delta tables wants four things more, which [`sql`] adds:
//!
//! 1. **Reading only, by default.** DDL (`CREATE VIEW`, `CREATE EXTERNAL
//!    TABLE`, `DROP`), DML and `COPY` (which writes files: a `COPY ... TO
//!    '<table>/_delta_log/…json'` would add a commit to the table being
//!    read) and statements such as `SET` are refused with one line, as
//!    DataFusion's `SQLOptions` refuse them. `EXPLAIN`, `DESCRIBE` and
//!    queries run. [`QueryOptions`] turns each kind back on; writes, even
//!    then, never go inside a Delta table: a `COPY` or `INSERT` whose
//!    target lies under the root of a Delta table registered in the
//!    session, or read by the statement, is refused.
//! 2. **Bounded nesting.** DataFusion's planner formats and walks
//!    expressions recursively, so a left-deep chain of a few thousand terms
//!    (`1+1+…+1`) overflows the stack and kills the process. Long `AND` /
//!    `OR` chains are rebalanced into trees of logarithmic depth (both are
//!    associative under SQL's three-valued logic, so every row gets the same
//!    answer), and an expression still nested deeper than
//!    [`MAX_EXPR_NESTING`] levels is refused before DataFusion recurses
//!    into it.
//! 3. **Delta's timestamp unit.** A SQL `TIMESTAMP` without a precision is
//!    `TIMESTAMP(6)`, microseconds, as in Delta and Spark (DataFusion makes
//!    it nanoseconds, which hold only the years 1677 to 2262: comparing a
//!    `0001-01-01` partition value with `TIMESTAMP '2000-01-01'` failed with
//!    an arithmetic overflow, because the column was cast to nanoseconds).
//! 4. **Wide tables planned in linear time.** `SELECT * FROM t [WHERE …]
//!    [LIMIT …]` is planned without DataFusion's per-column projection,
//!    whose expansion of `*` is quadratic in the columns (see
//!    `wildcard.rs`): the same plan less an identity projection.

use std::any::Any;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use datafusion::catalog::TableProvider;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::listing::{ListingTable, ListingTableUrl};
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, SessionContext};
use datafusion::sql::parser::{CopyToSource, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, DataType as SqlType, Expr as SqlExpr, TypedString, Value, VisitMut, VisitorMut,
};

use crate::provider::DeltaTableProvider;

/// The deepest expression nesting [`sql`] hands to DataFusion (`1+1+…+1`
/// with `n` terms is `n` levels deep, `max(…)` of it `n + 1`; `AND`/`OR`
/// chains are rebalanced first), the same bound as dar-prune's
/// `MAX_EXPR_DEPTH`. DataFusion names and walks expressions recursively,
/// up to about 16 KiB of stack per level in a debug build: 64 levels fit a
/// 2 MiB thread stack (a tokio worker's) twice over.
pub const MAX_EXPR_NESTING: usize = 64;

/// `AND` / `OR` chains with more terms than this are rebalanced.
const BALANCE_AFTER: usize = 16;

/// What [`sql`] allows besides reading. The default allows nothing else:
/// queries, `EXPLAIN` and `DESCRIBE` only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueryOptions {
    ddl: bool,
    writes: bool,
    statements: bool,
}

impl QueryOptions {
    /// Reading only (the default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Allows DDL: `CREATE [EXTERNAL] TABLE`, `CREATE VIEW`, `DROP`, ...
    /// (catalog changes; `STORED AS DELTA` registers a Delta table).
    pub fn with_ddl(mut self, on: bool) -> Self {
        self.ddl = on;
        self
    }

    /// Allows writes: `COPY ... TO`, `INSERT`, `UPDATE`, `DELETE`, but never
    /// into a Delta table: a target under the root of a Delta table
    /// registered in the session, or read by the statement, is refused.
    pub fn with_writes(mut self, on: bool) -> Self {
        self.writes = on;
        self
    }

    /// Allows statements that change the session: `SET`, `PREPARE`,
    /// `EXECUTE`, transactions.
    pub fn with_statements(mut self, on: bool) -> Self {
        self.statements = on;
        self
    }
}

fn refused(message: String) -> DataFusionError {
    DataFusionError::Plan(message)
}

/// Parses and plans one SQL statement in `ctx` with dar's rules (see the
/// module docs) and returns it as a `DataFrame`, as `SessionContext::sql`
/// does.
///
/// # Errors
///
/// What `SessionContext::sql` returns, and a plan error for a statement
/// that `options` do not allow, a write into a Delta table, or an
/// expression nested deeper than [`MAX_EXPR_NESTING`] levels.
pub async fn sql(ctx: &SessionContext, text: &str, options: QueryOptions) -> Result<DataFrame> {
    let state = ctx.state();
    let dialect = state.config().options().sql_parser.dialect;
    let mut statement = state.sql_to_statement(text, &dialect)?;
    let mut guard = Guard::default();
    if let ControlFlow::Break(too_deep) = visit(&mut statement, &mut guard) {
        dismantle(&mut statement);
        return Err(too_deep);
    }
    // `SELECT * FROM …` without DataFusion's O(columns²) expansion of `*`
    // (see `wildcard`); any other statement, a plan of another shape, or
    // a marked statement that fails to plan is planned as written (so an
    // error is the one DataFusion gives for the statement).
    let fast = match crate::wildcard::marked(&statement) {
        Some(marked) => state
            .statement_to_plan(marked)
            .await
            .ok()
            .and_then(crate::wildcard::unmark),
        None => None,
    };
    let plan = match fast {
        Some(plan) => plan,
        None => state.statement_to_plan(statement).await?,
    };
    check_kinds(&plan, options)?;
    if options.writes {
        check_targets(ctx, &plan).await?;
    }
    ctx.execute_logical_plan(plan).await
}

/// Walks every expression of a DataFusion statement.
fn visit<V: VisitorMut<Break = DataFusionError>>(
    statement: &mut DfStatement,
    visitor: &mut V,
) -> ControlFlow<DataFusionError> {
    match statement {
        DfStatement::Statement(s) => s.visit(visitor),
        DfStatement::CopyTo(copy) => match &mut copy.source {
            CopyToSource::Query(q) => q.visit(visitor),
            CopyToSource::Relation(_) => ControlFlow::Continue(()),
        },
        DfStatement::Explain(explain) => visit(explain.statement.as_mut(), visitor),
        _ => ControlFlow::Continue(()),
    }
}

/// Rebalances long `AND`/`OR` chains, makes `TIMESTAMP` microseconds and
/// stops at an expression nested deeper than [`MAX_EXPR_NESTING`].
#[derive(Debug, Default)]
struct Guard {
    depth: usize,
}

impl VisitorMut for Guard {
    type Break = DataFusionError;

    fn pre_visit_expr(&mut self, expr: &mut SqlExpr) -> ControlFlow<Self::Break> {
        self.depth += 1;
        if self.depth > MAX_EXPR_NESTING {
            return ControlFlow::Break(refused(format!(
                "the query nests an expression deeper than {MAX_EXPR_NESTING} levels (such as `1+1+…` with more terms than that); long AND/OR chains are fine"
            )));
        }
        match expr {
            SqlExpr::BinaryOp {
                op: op @ (BinaryOperator::And | BinaryOperator::Or),
                ..
            } => {
                let op = op.clone();
                if chain_terms(expr, &op) > BALANCE_AFTER {
                    let chain = std::mem::replace(expr, SqlExpr::value(Value::Null));
                    *expr = balanced(flatten(chain, &op), &op);
                }
            }
            SqlExpr::Cast { data_type, .. }
            | SqlExpr::TypedString(TypedString { data_type, .. }) => microseconds(data_type),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _expr: &mut SqlExpr) -> ControlFlow<Self::Break> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

/// `TIMESTAMP` (no precision) as `TIMESTAMP(6)`.
fn microseconds(t: &mut SqlType) {
    if let SqlType::Timestamp(precision @ None, _) = t {
        *precision = Some(6);
    }
}

/// How many terms the `op` chain rooted at `e` has (iteratively).
fn chain_terms(e: &SqlExpr, op: &BinaryOperator) -> usize {
    let mut terms = 0;
    let mut stack = vec![e];
    while let Some(node) = stack.pop() {
        match node {
            SqlExpr::BinaryOp { left, op: o, right } if o == op => {
                stack.push(right);
                stack.push(left);
            }
            _ => terms += 1,
        }
    }
    terms
}

/// The terms of the `op` chain `e`, left to right (iteratively).
fn flatten(e: SqlExpr, op: &BinaryOperator) -> Vec<SqlExpr> {
    let mut terms = Vec::new();
    let mut stack = vec![e];
    while let Some(node) = stack.pop() {
        match node {
            SqlExpr::BinaryOp { left, op: o, right } if &o == op => {
                stack.push(*right);
                stack.push(*left);
            }
            other => terms.push(other),
        }
    }
    terms
}

/// `terms` joined by `op` as a balanced tree (depth `log2(n)`), in order.
fn balanced(mut terms: Vec<SqlExpr>, op: &BinaryOperator) -> SqlExpr {
    if terms.len() <= 1 {
        return terms.pop().unwrap_or(SqlExpr::value(Value::Null));
    }
    let right = terms.split_off(terms.len() / 2);
    SqlExpr::BinaryOp {
        left: Box::new(balanced(terms, op)),
        op: op.clone(),
        right: Box::new(balanced(right, op)),
    }
}

/// Takes a refused statement apart bottom-up, so that dropping a chain far
/// deeper than the limit does not recurse (the compiler's drop would).
fn dismantle(statement: &mut DfStatement) {
    struct Dismantle;
    impl VisitorMut for Dismantle {
        type Break = DataFusionError;
        fn post_visit_expr(&mut self, expr: &mut SqlExpr) -> ControlFlow<Self::Break> {
            // The children are leaves by now: dropping `expr` is shallow.
            *expr = SqlExpr::value(Value::Null);
            ControlFlow::Continue(())
        }
    }
    let _ = visit(statement, &mut Dismantle);
}

/// Refuses the kinds of statement `options` do not allow.
fn check_kinds(plan: &LogicalPlan, options: QueryOptions) -> Result<()> {
    let mut refusal = None;
    plan.apply_with_subqueries(|node| {
        let what = match node {
            LogicalPlan::Ddl(ddl) if !options.ddl => format!("DDL ({})", ddl.name()),
            LogicalPlan::Dml(dml) if !options.writes => format!("DML ({})", dml.op),
            LogicalPlan::Copy(_) if !options.writes => "COPY".to_string(),
            LogicalPlan::Statement(s) if !options.statements => format!("statement ({})", s.name()),
            _ => return Ok(TreeNodeRecursion::Continue),
        };
        refusal = Some(what);
        Ok(TreeNodeRecursion::Stop)
    })?;
    match refusal {
        Some(what) => Err(refused(format!(
            "{what} refused: this session only reads tables"
        ))),
        None => Ok(()),
    }
}

/// Refuses a write whose target lies inside a Delta table: one registered
/// in `ctx`, or one `plan` reads.
async fn check_targets(ctx: &SessionContext, plan: &LogicalPlan) -> Result<()> {
    let mut targets: Vec<String> = Vec::new();
    let mut roots: Vec<String> = Vec::new();
    plan.apply_with_subqueries(|node| {
        match node {
            LogicalPlan::Copy(copy) => targets.push(copy.output_url.clone()),
            LogicalPlan::Dml(dml) => {
                // A target that is no provider of this session's kinds
                // cannot be a Delta table's location.
                let Ok(provider) = source_as_provider(&dml.target) else {
                    return Ok(TreeNodeRecursion::Continue);
                };
                let any: &dyn Any = provider.as_ref();
                if let Some(delta) = any.downcast_ref::<DeltaTableProvider>() {
                    targets.push(delta.table().uri().to_string());
                } else if let Some(listing) = any.downcast_ref::<ListingTable>() {
                    targets.extend(listing.table_paths().iter().map(|u| u.as_str().to_string()));
                }
            }
            LogicalPlan::TableScan(scan) => {
                if let Ok(provider) = source_as_provider(&scan.source) {
                    roots.extend(delta_root(provider.as_ref()));
                }
            }
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    if targets.is_empty() {
        return Ok(());
    }
    for catalog_name in ctx.catalog_names() {
        let Some(catalog) = ctx.catalog(&catalog_name) else {
            continue;
        };
        for schema_name in catalog.schema_names() {
            let Some(schema) = catalog.schema(&schema_name) else {
                continue;
            };
            for table in schema.table_names() {
                if let Ok(Some(provider)) = schema.table(&table).await {
                    roots.extend(delta_root(provider.as_ref()));
                }
            }
        }
    }
    let roots: Vec<Location> = roots.iter().filter_map(|r| Location::of(r)).collect();
    for target in &targets {
        let Some(t) = Location::of(target) else {
            continue;
        };
        if roots.iter().any(|r| t.is_inside(r)) {
            return Err(refused(format!(
                "writing to '{target}' refused: it is inside a Delta table, which dar only reads"
            )));
        }
    }
    Ok(())
}

fn delta_root(provider: &dyn TableProvider) -> Option<String> {
    let any: &dyn Any = provider;
    any.downcast_ref::<DeltaTableProvider>()
        .map(|d| d.table().uri().to_string())
}

/// Where a URI or path points, resolved as DataFusion resolves a `COPY`
/// target (`ListingTableUrl::parse`), local paths made canonical.
#[derive(Debug, PartialEq)]
enum Location {
    /// A local path, its existing part canonical (symbolic links followed).
    Local(PathBuf),
    /// Another store: the URL, without a trailing `/`.
    Url(String),
}

impl Location {
    fn of(text: &str) -> Option<Location> {
        let url = ListingTableUrl::parse(text).ok()?;
        let url = url.get_url();
        if url.scheme() == "file" {
            return Some(Location::Local(canonical(&url.to_file_path().ok()?)));
        }
        Some(Location::Url(
            url.as_str().trim_end_matches('/').to_string(),
        ))
    }

    fn is_inside(&self, root: &Location) -> bool {
        match (self, root) {
            (Location::Local(p), Location::Local(r)) => p.starts_with(r),
            (Location::Url(u), Location::Url(r)) => {
                u == r
                    || u.strip_prefix(r.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            }
            _ => false,
        }
    }
}

/// `path` with its longest existing ancestor canonicalized and `..` / `.`
/// resolved in the rest.
fn canonical(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let base = loop {
        if let Ok(c) = existing.canonicalize() {
            break c;
        }
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => break existing,
        }
    };
    let mut out = base;
    for part in rest.iter().rev() {
        match part.to_str() {
            Some("..") => {
                out.pop();
            }
            Some(".") => {}
            _ => out.push(part),
        }
    }
    out
}
