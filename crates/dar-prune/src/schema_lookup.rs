//! Resolving a [`ColumnPath`] in an Arrow schema, with "did you mean"
//! suggestions for names that do not exist.

use arrow_schema::{DataType, Field, Fields, Schema};

use crate::error::{PruneError, Result};
use crate::expr::ColumnPath;

/// The field at `path` in `schema`, walking struct fields.
pub(crate) fn resolve<'a>(schema: &'a Schema, path: &ColumnPath) -> Result<&'a Field> {
    let mut fields: &Fields = schema.fields();
    let mut found: Option<&Field> = None;
    for (depth, part) in path.parts().iter().enumerate() {
        if let Some(parent) = found {
            match parent.data_type() {
                DataType::Struct(children) => fields = children,
                other => {
                    return Err(PruneError::NotAStruct {
                        column: ColumnPath::new(path.parts()[..depth].iter().cloned()).to_string(),
                        data_type: other.clone(),
                        field: part.clone(),
                    });
                }
            }
        }
        match fields.iter().find(|f| f.name() == part) {
            Some(f) => found = Some(f),
            None => {
                return Err(PruneError::UnknownColumn {
                    column: path.to_string(),
                    suggestions: suggestions(schema, path),
                });
            }
        }
    }
    found.ok_or_else(|| PruneError::UnknownColumn {
        column: path.to_string(),
        suggestions: vec![],
    })
}

/// Up to three existing column paths nearest to `path` (case-insensitive
/// edit distance over the dotted form), closest first.
fn suggestions(schema: &Schema, path: &ColumnPath) -> Vec<String> {
    nearest_columns(schema.fields(), &path.to_string())
}

/// Up to three column paths of `fields` (struct fields as `a.b`) near
/// `wanted`, closest first, for "did you mean" messages: case-insensitive
/// edit distance over the dotted form, at most a third of `wanted`'s
/// length (and at least 2) away, so an unrelated name suggests nothing.
///
/// ```
/// use arrow_schema::{DataType, Field, Fields};
///
/// let fields = Fields::from(vec![
///     Field::new("fare", DataType::Float64, true),
///     Field::new("day", DataType::Date32, true),
/// ]);
/// assert_eq!(dar_prune::nearest_columns(&fields, "FAIR"), ["fare"]);
/// assert!(dar_prune::nearest_columns(&fields, "passenger_count").is_empty());
/// ```
pub fn nearest_columns(fields: &Fields, wanted: &str) -> Vec<String> {
    let mut all = Vec::new();
    collect_paths(fields, &mut Vec::new(), &mut all);
    let wanted = wanted.to_lowercase();
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, String)> = all
        .into_iter()
        .map(|p| (edit_distance(&wanted, &p.to_lowercase()), p))
        .filter(|(d, _)| *d <= limit)
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, p)| p).collect()
}

fn collect_paths(fields: &Fields, prefix: &mut Vec<String>, out: &mut Vec<String>) {
    for f in fields {
        prefix.push(f.name().clone());
        out.push(ColumnPath::new(prefix.iter().cloned()).to_string());
        if let DataType::Struct(children) = f.data_type() {
            collect_paths(children, prefix, out);
        }
        prefix.pop();
    }
}

/// Levenshtein distance over chars (two-row dynamic programme).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("ab", "ab"), 0);
    }

    #[test]
    fn unknown_column_suggests_nearest() {
        let schema = Schema::new(vec![
            Field::new("salary", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new(
                "s",
                DataType::Struct(vec![Field::new("inner", DataType::Int32, true)].into()),
                true,
            ),
        ]);
        let err = resolve(&schema, &ColumnPath::from_dotted("salry")).unwrap_err();
        assert!(
            matches!(&err, PruneError::UnknownColumn { suggestions, .. } if suggestions == &["salary"])
        );
        assert_eq!(
            err.to_string(),
            "unknown column `salry` (did you mean `salary`?)"
        );
        let err = resolve(&schema, &ColumnPath::from_dotted("s.iner")).unwrap_err();
        assert!(err.to_string().contains("`s.inner`"), "{err}");
        let err = resolve(&schema, &ColumnPath::from_dotted("name.x")).unwrap_err();
        assert!(matches!(err, PruneError::NotAStruct { .. }), "{err}");
        assert_eq!(
            resolve(&schema, &ColumnPath::from_dotted("s.inner"))
                .unwrap()
                .data_type(),
            &DataType::Int32
        );
    }
}
