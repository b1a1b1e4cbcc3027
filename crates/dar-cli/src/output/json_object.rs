//! JSON objects whose keys print in the order they were added.
//!
//! `serde_json::Map` sorts keys (the workspace does not enable its
//! `preserve_order` feature), but people read `dar files` and `dar info`
//! output: `path` first, partition values in partition-column order.

use std::fmt;

use serde_json::Value;

/// A JSON object built key by key; `Display` prints it on one line.
#[derive(Debug, Clone, Default)]
pub struct JsonObject {
    fields: Vec<(String, String)>,
}

impl JsonObject {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key: value`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields
            .push((key.to_string(), value.into().to_string()));
        self
    }

    /// Adds `key: object`.
    pub fn with_object(mut self, key: &str, object: JsonObject) -> Self {
        self.fields.push((key.to_string(), object.to_string()));
        self
    }

    /// Adds `key: [objects]`.
    pub fn with_objects(mut self, key: &str, objects: &[JsonObject]) -> Self {
        let items: Vec<String> = objects.iter().map(JsonObject::to_string).collect();
        self.fields
            .push((key.to_string(), format!("[{}]", items.join(","))));
        self
    }

    /// Adds `key: [objects]`, or `key: null` for `None`.
    pub fn with_optional_objects(self, key: &str, objects: Option<&[JsonObject]>) -> Self {
        match objects {
            Some(o) => self.with_objects(key, o),
            None => self.with(key, Value::Null),
        }
    }

    /// Adds `key: object`, or `key: null` for `None`.
    pub fn with_optional_object(self, key: &str, object: Option<JsonObject>) -> Self {
        match object {
            Some(o) => self.with_object(key, o),
            None => self.with(key, Value::Null),
        }
    }
}

impl fmt::Display for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.fields.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}:{v}", Value::String(k.clone()))?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_text_is_valid_json() {
        let o = JsonObject::new()
            .with("z", 1)
            .with("a\"b", "x")
            .with_object("m", JsonObject::new().with("k", Value::Null))
            .with_optional_object("n", None)
            .with_objects("l", &[JsonObject::new().with("b", 2), JsonObject::new()]);
        let text = o.to_string();
        assert_eq!(
            text,
            r#"{"z":1,"a\"b":"x","m":{"k":null},"n":null,"l":[{"b":2},{}]}"#
        );
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["m"]["k"], Value::Null);
    }
}
