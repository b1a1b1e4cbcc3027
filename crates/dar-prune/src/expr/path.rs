//! Column paths: a top-level column or a field nested in structs.

use std::fmt;

/// The path to a column: `["a"]` for a top-level column, `["a", "b", "c"]`
/// for field `c` of struct `b` of struct column `a`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnPath(Vec<String>);

impl ColumnPath {
    /// A path from its parts (outermost first).
    pub fn new(parts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self(parts.into_iter().map(Into::into).collect())
    }

    /// Splits a dotted name: `"a.b.c"` is `["a", "b", "c"]`. Use
    /// [`ColumnPath::new`] for names that contain dots.
    pub fn from_dotted(name: &str) -> Self {
        Self(name.split('.').map(str::to_string).collect())
    }

    /// The parts, outermost first.
    pub fn parts(&self) -> &[String] {
        &self.0
    }
}

impl fmt::Display for ColumnPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            let plain = !p.is_empty()
                && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !p.starts_with(|c: char| c.is_ascii_digit());
            if plain {
                f.write_str(p)?;
            } else {
                write!(f, "\"{}\"", p.replace('"', "\"\""))?;
            }
        }
        Ok(())
    }
}

impl From<&str> for ColumnPath {
    fn from(s: &str) -> Self {
        Self::from_dotted(s)
    }
}
