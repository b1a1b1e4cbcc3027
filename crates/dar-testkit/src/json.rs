//! A tiny ordered JSON tree. Delta-Spark writes keys in a fixed order
//! (`name`, `type`, `nullable`, `metadata`; `path`, `partitionValues`, ...);
//! keeping insertion order makes the log read like Spark's and stay
//! byte-identical whatever features `serde_json` is built with.

use std::fmt::Write as _;

/// A JSON value whose objects keep their insertion order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i64),
    /// A number already rendered as JSON text (floats, decimals).
    Number(String),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// An empty object, to be filled with [`Json::push`].
    pub(crate) fn object() -> Self {
        Json::Object(Vec::new())
    }

    /// Appends `key: value` to an object (ignored for other variants).
    pub(crate) fn push(&mut self, key: impl Into<String>, value: Json) {
        if let Json::Object(entries) = self {
            entries.push((key.into(), value));
        }
    }

    /// `push` in builder form.
    pub(crate) fn with(mut self, key: impl Into<String>, value: Json) -> Self {
        self.push(key, value);
        self
    }

    /// A string value.
    pub(crate) fn str(s: impl Into<String>) -> Self {
        Json::Str(s.into())
    }

    /// `Some(s)` as a string, `None` as `null`.
    pub(crate) fn opt_str(s: Option<&str>) -> Self {
        s.map_or(Json::Null, Json::str)
    }

    /// Whether this is an object with no entries.
    pub(crate) fn is_empty_object(&self) -> bool {
        matches!(self, Json::Object(entries) if entries.is_empty())
    }

    /// Compact JSON text.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Number(text) => out.push_str(text),
            Json::Str(s) => write_str(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(key, out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// Writes `s` as a JSON string literal (RFC 8259 escapes).
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn renders_in_insertion_order_and_escapes() {
        let value = Json::object()
            .with("z", Json::Int(-3))
            .with("a", Json::str("q\"\\\n\u{1}é"))
            .with(
                "n",
                Json::Array(vec![
                    Json::Null,
                    Json::Bool(true),
                    Json::Number("1.50".into()),
                ]),
            );
        let text = value.render();
        assert_eq!(
            text,
            r#"{"z":-3,"a":"q\"\\\n\u0001é","n":[null,true,1.50]}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["a"], "q\"\\\n\u{1}é");
    }
}
