//! Walking sqlparser's tree without recursion: its depth check and its
//! node-by-node drop; and the linear scan of the tokens that refuses, before
//! sqlparser sees them, the inputs it would backtrack over for too long.
//!
//! sqlparser bounds the nesting it parses (parentheses, `NOT`, function
//! calls), but builds chains of infix and postfix operators (`a + b + c`,
//! `x IS NULL IS NULL`, `a::int::int`) in a loop, so such a chain of any
//! length comes back as a tree that deep. Dropping it, or converting it,
//! recursively would overflow the stack; these walks use an explicit stack
//! over the operand slots of the operators that chain.

use sqlparser::ast::{Expr as SqlExpr, Value};
use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::error::{PruneError, Result};
use crate::expr::MAX_EXPR_DEPTH;

/// How deep parentheses opened right after a keyword, such as `NOT (` or
/// `CAST(`, may nest in predicate text.
///
/// When parsing inside such a parenthesis fails, sqlparser's generic
/// dialect tries the keyword again as a function name and parses the
/// parenthesis a second time, so a failure `n` levels down costs `2^n`
/// parses of what is inside. dar-prune's dialect parses `NOT (` and `CAST(`
/// once and a `(` after any other prefix keyword is refused, so this limit
/// is a backstop; deeper text is refused before sqlparser sees it (a linear
/// scan of the tokens).
pub const MAX_KEYWORD_PAREN_DEPTH: usize = 16;

/// The keywords a `(` may follow in a predicate. sqlparser parses the
/// parenthesis after other prefix keywords (`CEIL(`, `EXTRACT(`, ...) twice
/// when something inside fails, at a cost that doubles per level, and none
/// of them is a predicate.
const KEYWORDS_BEFORE_PAREN: &[Keyword] = &[
    Keyword::NOT,
    Keyword::CAST,
    Keyword::IN,
    Keyword::AND,
    Keyword::OR,
    Keyword::BETWEEN,
    Keyword::LIKE,
    Keyword::ESCAPE,
    Keyword::DECIMAL,
    Keyword::NUMERIC,
];

/// Parts a dotted name (`a.b.c`) may have. sqlparser backtracks over each
/// dot of a name that ends in an error (`a.b.c.`), again at a cost that
/// doubles per part; struct paths are far shorter in practice.
pub const MAX_NAME_PARTS: usize = 10;

/// Checks the tokens of `text` (a linear scan, before sqlparser sees
/// them): only tokens a predicate can use (see [`refused`]); parentheses and
/// runs of prefix operators (`NOT`, unary `-`/`+`) may nest
/// [`MAX_EXPR_DEPTH`] levels, and parentheses right after a keyword
/// [`MAX_KEYWORD_PAREN_DEPTH`]; a dotted name has at most
/// [`MAX_NAME_PARTS`] parts. Text that does not tokenize passes (the parser
/// reports it).
pub(super) fn scan_tokens(dialect: &dyn Dialect, text: &str) -> Result<()> {
    let Ok(tokens) = Tokenizer::new(dialect, text).tokenize_with_location() else {
        return Ok(());
    };
    // Per open parenthesis: whether a keyword led it, and the prefix run
    // that was open outside it.
    let mut open: Vec<(bool, usize)> = Vec::new();
    let (mut keyword_led, mut outer_runs, mut run) = (0usize, 0usize, 0usize);
    let mut previous_keyword = false;
    let mut keyword = (Keyword::NoKeyword, 0, 0);
    let mut dots = 0usize;
    let mut after_dot = false;
    for TokenWithSpan { token, span } in tokens {
        if matches!(token, Token::Whitespace(_)) {
            continue;
        }
        if let Some(what) = refused(&token) {
            return Err(PruneError::Unsupported {
                line: span.start.line,
                column: span.start.column,
                what,
            });
        }
        if after_dot && !matches!(token, Token::Word(_)) {
            // sqlparser backtracks exponentially over `a .(` chains before
            // it says so; a predicate only ever has names after a dot.
            return Err(PruneError::Unsupported {
                line: span.start.line,
                column: span.start.column,
                what: format!("`{token}` after a `.` (a `.` must be followed by a name)"),
            });
        }
        after_dot = matches!(token, Token::Period);
        match &token {
            Token::Whitespace(_) => continue,
            Token::Period => dots += 1,
            Token::Word(_) => {}
            _ => dots = 0,
        }
        if dots >= MAX_NAME_PARTS {
            return Err(PruneError::Unsupported {
                line: span.start.line,
                column: span.start.column,
                what: format!("a dotted name of more than {MAX_NAME_PARTS} parts"),
            });
        }
        if token == Token::LParen && previous_keyword && !KEYWORDS_BEFORE_PAREN.contains(&keyword.0)
        {
            return Err(PruneError::Unsupported {
                line: keyword.1,
                column: keyword.2,
                what: format!(
                    "`{:?}(` (functions and keyword forms are not supported; \
                     `(` may follow NOT, CAST, IN, AND, OR, BETWEEN, LIKE, ESCAPE, DECIMAL, NUMERIC)",
                    keyword.0
                ),
            });
        }
        match &token {
            Token::LParen | Token::LBracket => {
                open.push((previous_keyword, run));
                outer_runs += run;
                run = 0;
                if previous_keyword {
                    keyword_led += 1;
                }
            }
            Token::RParen | Token::RBracket => {
                if let Some((led, outer)) = open.pop() {
                    keyword_led -= usize::from(led);
                    outer_runs -= outer;
                }
                run = 0;
            }
            Token::Minus | Token::Plus => run += 1,
            Token::Word(w) if w.keyword == Keyword::NOT && w.quote_style.is_none() => run += 1,
            _ => run = 0,
        }
        if keyword_led > MAX_KEYWORD_PAREN_DEPTH {
            return Err(PruneError::TooDeepAfterKeyword {
                limit: MAX_KEYWORD_PAREN_DEPTH,
            });
        }
        if open.len() + outer_runs + run > MAX_EXPR_DEPTH {
            return Err(PruneError::TooDeep {
                limit: MAX_EXPR_DEPTH,
            });
        }
        previous_keyword = matches!(
            &token,
            Token::Word(w) if w.keyword != Keyword::NoKeyword && w.quote_style.is_none()
        );
        if let Token::Word(w) = &token {
            keyword = (w.keyword, span.start.line, span.start.column);
        }
    }
    Ok(())
}

/// Why a predicate cannot contain `token`, or `None` when it can.
///
/// A predicate is made of names, literals (numbers, `'strings'`, `X'hex'`,
/// keywords such as `DATE` or `NULL`), `= == != <> < <= > >=`, unary or
/// binary `+`/`-`, parentheses, commas, dots and `::` casts; every other
/// token is SQL the converter refuses anyway. Refusing it here keeps
/// sqlparser from parsing it at all, and some of it is slow to parse: after
/// a `.`, sqlparser first tries the rest of a name as an expression and, if
/// that fails, parses it again as a plain name, so each `a.b[` inside
/// another doubles the work (20 of them take seconds).
fn refused(token: &Token) -> Option<String> {
    let operators = "(supported: = != <> < <= > >= AND OR)";
    Some(match token {
        Token::EOF
        | Token::Whitespace(_)
        | Token::Word(_)
        | Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::HexStringLiteral(_)
        | Token::Comma
        | Token::Period
        | Token::LParen
        | Token::RParen
        | Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Plus
        | Token::Minus
        | Token::DoubleColon => return None,
        Token::LBracket | Token::RBracket => {
            format!("`{token}` (array subscripts and array literals are not supported)")
        }
        Token::LBrace | Token::RBrace => {
            format!("`{token}` (map and struct literals are not supported)")
        }
        Token::Colon => "`:` (JSON or map access and slices are not supported)".to_string(),
        Token::Arrow
        | Token::LongArrow
        | Token::HashArrow
        | Token::HashLongArrow
        | Token::HashMinus
        | Token::AtArrow
        | Token::ArrowAt
        | Token::AtQuestion
        | Token::AtAt
        | Token::Question
        | Token::QuestionAnd
        | Token::QuestionPipe => {
            format!("`{token}` (JSON operators are not supported)")
        }
        Token::Placeholder(p) => format!("placeholder `{}`", super::shorten(p)),
        Token::SemiColon => "`;` (a predicate is one expression)".to_string(),
        Token::Char(c) => format!("character `{}`", c.escape_debug()),
        Token::TripleSingleQuotedString(_)
        | Token::TripleDoubleQuotedString(_)
        | Token::DollarQuotedString(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_)
        | Token::TripleSingleQuotedByteStringLiteral(_)
        | Token::TripleDoubleQuotedByteStringLiteral(_)
        | Token::SingleQuotedRawStringLiteral(_)
        | Token::DoubleQuotedRawStringLiteral(_)
        | Token::TripleSingleQuotedRawStringLiteral(_)
        | Token::TripleDoubleQuotedRawStringLiteral(_)
        | Token::NationalStringLiteral(_)
        | Token::QuoteDelimitedStringLiteral(_)
        | Token::NationalQuoteDelimitedStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_) => format!(
            "literal `{}` (strings are '...', binaries X'...')",
            super::shorten(&token.to_string())
        ),
        other => format!(
            "operator `{}` {operators}",
            super::shorten(&other.to_string())
        ),
    })
}

/// The operand slots of `e` for the chaining operators (other nodes are
/// bounded by sqlparser's own recursion limit and have none here).
fn slots(e: &mut SqlExpr) -> Vec<&mut SqlExpr> {
    match e {
        SqlExpr::BinaryOp { left, right, .. }
        | SqlExpr::AnyOp { left, right, .. }
        | SqlExpr::AllOp { left, right, .. }
        | SqlExpr::IsDistinctFrom(left, right)
        | SqlExpr::IsNotDistinctFrom(left, right)
        | SqlExpr::AtTimeZone {
            timestamp: left,
            time_zone: right,
        }
        | SqlExpr::Like {
            expr: left,
            pattern: right,
            ..
        }
        | SqlExpr::ILike {
            expr: left,
            pattern: right,
            ..
        }
        | SqlExpr::SimilarTo {
            expr: left,
            pattern: right,
            ..
        }
        | SqlExpr::RLike {
            expr: left,
            pattern: right,
            ..
        } => vec![left.as_mut(), right.as_mut()],
        SqlExpr::UnaryOp { expr, .. }
        | SqlExpr::Nested(expr)
        | SqlExpr::IsNull(expr)
        | SqlExpr::IsNotNull(expr)
        | SqlExpr::IsTrue(expr)
        | SqlExpr::IsNotTrue(expr)
        | SqlExpr::IsFalse(expr)
        | SqlExpr::IsNotFalse(expr)
        | SqlExpr::IsUnknown(expr)
        | SqlExpr::IsNotUnknown(expr)
        | SqlExpr::Cast { expr, .. }
        | SqlExpr::Collate { expr, .. }
        | SqlExpr::CompoundFieldAccess { root: expr, .. }
        | SqlExpr::JsonAccess { value: expr, .. } => vec![expr.as_mut()],
        SqlExpr::Between {
            expr, low, high, ..
        } => vec![expr.as_mut(), low.as_mut(), high.as_mut()],
        SqlExpr::InList { expr, list, .. } => {
            let mut v = vec![expr.as_mut()];
            v.extend(list.iter_mut());
            v
        }
        _ => Vec::new(),
    }
}

/// Whether `e` nests deeper than [`MAX_EXPR_DEPTH`], where a chain of one
/// `AND` or `OR` (which becomes one flat node) counts as one level and a
/// pair of parentheses as one.
pub(super) fn too_deep(e: &mut SqlExpr) -> bool {
    let mut stack: Vec<(&mut SqlExpr, usize)> = vec![(e, 1)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_EXPR_DEPTH {
            return true;
        }
        let junction = junction_op(node);
        for child in slots(node) {
            let same = junction.is_some() && junction_op(child) == junction;
            stack.push((child, if same { depth } else { depth + 1 }));
        }
    }
    false
}

/// `Some(true)` for `AND`, `Some(false)` for `OR`, else `None`.
fn junction_op(e: &SqlExpr) -> Option<bool> {
    use sqlparser::ast::BinaryOperator as Op;
    match e {
        SqlExpr::BinaryOp { op: Op::And, .. } => Some(true),
        SqlExpr::BinaryOp { op: Op::Or, .. } => Some(false),
        _ => None,
    }
}

/// Drops `e` node by node (see the module docs).
pub(super) fn dismantle(e: SqlExpr) {
    let mut stack = vec![e];
    while let Some(mut node) = stack.pop() {
        for slot in slots(&mut node) {
            stack.push(std::mem::replace(slot, SqlExpr::value(Value::Null)));
        }
    }
}
