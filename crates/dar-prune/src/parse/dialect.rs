//! sqlparser's generic dialect, except that `NOT (` and `CAST(` are
//! parsed once.
//!
//! When parsing after a prefix keyword such as `NOT` or `CAST` fails, the
//! generic dialect tries the keyword again as a function name and parses the
//! parenthesis after it a second time. Nested `n` deep, text that fails
//! inside costs `2^n` parses of everything inside (16 levels of `NOT (`
//! around 6 KB took 10 s). A predicate never calls a function named `NOT`
//! or `CAST`, so [`PredicateDialect`] parses them as the keywords only and
//! lets their errors through.

use std::any::TypeId;

use sqlparser::ast::{CastKind, Expr};
use sqlparser::dialect::{Dialect, GenericDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// [`GenericDialect`] (it reports itself as that dialect, and answers every
/// question the generic dialect answers as it does) with its own prefix
/// parsing of `NOT (` and `CAST(`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct PredicateDialect;

/// Forwards the dialect's yes/no answers to [`GenericDialect`]: the list is
/// every one that sqlparser 0.62's generic dialect overrides (others keep
/// the trait's defaults, as there); compare it with `dialect/generic.rs`
/// when sqlparser is upgraded.
macro_rules! generic_answers {
    ($($name:ident,)*) => {
        $(
            fn $name(&self) -> bool {
                GenericDialect.$name()
            }
        )*
    };
}

impl Dialect for PredicateDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<GenericDialect>()
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        GenericDialect.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        GenericDialect.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        GenericDialect.is_identifier_part(ch)
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        let keyword = match &parser.peek_token_ref().token {
            Token::Word(w) if w.quote_style.is_none() => w.keyword,
            _ => return None,
        };
        if parser.peek_nth_token_ref(1).token != Token::LParen {
            return None;
        }
        match keyword {
            Keyword::NOT => {
                parser.advance_token();
                Some(parser.parse_not())
            }
            Keyword::CAST => {
                parser.advance_token();
                Some(parser.parse_cast_expr(CastKind::Cast))
            }
            _ => None,
        }
    }

    generic_answers! {
    supports_unicode_string_literal,
    supports_partition_by_after_order_by,
    supports_array_join_syntax,
    supports_group_by_expr,
    supports_group_by_with_modifier,
    supports_left_associative_joins_without_parens,
    supports_connect_by,
    supports_match_recognize,
    supports_pipe_operator,
    supports_start_transaction_modifier,
    supports_window_function_null_treatment_arg,
    supports_dictionary_syntax,
    supports_window_clause_named_window_reference,
    supports_parenthesized_set_variables,
    supports_select_wildcard_except,
    support_map_literal_syntax,
    allow_extract_custom,
    allow_extract_single_quotes,
    supports_extract_comma_syntax,
    supports_create_view_comment_syntax,
    supports_parens_around_table_factor,
    supports_values_as_table_factor,
    supports_create_index_with_clause,
    supports_explain_with_utility_options,
    supports_limit_comma,
    supports_update_order_by,
    supports_from_first_select,
    supports_projection_trailing_commas,
    supports_asc_desc_in_column_definition,
    supports_try_convert,
    supports_bitwise_shift_operators,
    supports_comment_on,
    supports_load_extension,
    supports_named_fn_args_with_assignment_operator,
    supports_struct_literal,
    supports_empty_projections,
    supports_nested_comments,
    supports_multiline_comment_hints,
    supports_user_host_grantee,
    supports_string_escape_constant,
    supports_array_typedef_with_brackets,
    supports_match_against,
    supports_set_names,
    supports_comma_separated_set_assignments,
    supports_filter_during_aggregation,
    supports_select_wildcard_exclude,
    supports_data_type_signed_suffix,
    supports_interval_options,
    supports_quote_delimited_string,
    supports_select_wildcard_replace,
    supports_select_wildcard_ilike,
    supports_select_wildcard_rename,
    supports_optimize_table,
    supports_install,
    supports_detach,
    supports_prewhere,
    supports_with_fill,
    supports_limit_by,
    supports_interpolate,
    supports_settings,
    supports_select_format,
    supports_comment_optimizer_hint,
    supports_constraint_keyword_without_name,
    supports_key_column_option,
    supports_comma_separated_trim,
    supports_cte_without_as,
    supports_select_item_multi_column_alias,
    supports_xml_expressions,
    }
}
