//! Parsing Delta's Spark-style `schemaString` JSON (protocol §5).
//!
//! Lenient where Delta-Spark is strict about what it writes (`nullable`
//! defaults to true, `metadata` to `{}`, `valueContainsNull` and
//! `containsNull` to true, `variant` accepted as a string or an object), strict
//! where a wrong guess would read wrong data: an unknown type name is an error
//! naming the type and the field.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::types::{ArrayType, DataType, MapType, PrimitiveType, StructField, StructType};
use crate::error::{LogError, Result};

impl StructType {
    /// Parses a `schemaString`. The top level must be a struct.
    pub fn from_json(schema_string: &str) -> Result<Self> {
        let value: Value = serde_json::from_str(schema_string)
            .map_err(|source| LogError::SchemaJson { source })?;
        match parse_type(&value, "")? {
            DataType::Struct(s) => Ok(*s),
            other => Err(invalid("", format!("top level is {other}, not a struct"))),
        }
    }
}

fn invalid(field: &str, reason: impl Into<String>) -> LogError {
    LogError::InvalidSchema {
        field: display_field(field),
        reason: reason.into(),
    }
}

fn display_field(field: &str) -> String {
    if field.is_empty() {
        "<root>".to_owned()
    } else {
        field.to_owned()
    }
}

fn child_path(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_owned()
    } else {
        format!("{parent}.{child}")
    }
}

/// Parses a type at `path` (the dotted logical path, for errors).
fn parse_type(value: &Value, path: &str) -> Result<DataType> {
    match value {
        Value::String(name) => parse_type_name(name, path),
        Value::Object(obj) => {
            let kind = obj
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid(path, "type object without a string \"type\""))?;
            match kind {
                "struct" => parse_struct(obj, path).map(|s| DataType::Struct(Box::new(s))),
                "array" => parse_array(obj, path),
                "map" => parse_map(obj, path),
                // The spec's own example writes variant as an object.
                "variant" => Ok(DataType::Variant),
                other => parse_type_name(other, path),
            }
        }
        other => Err(invalid(
            path,
            format!("a type must be a string or an object, found {other}"),
        )),
    }
}

fn parse_type_name(name: &str, path: &str) -> Result<DataType> {
    if name == "variant" {
        return Ok(DataType::Variant);
    }
    PrimitiveType::parse(name)
        .map(DataType::Primitive)
        .ok_or_else(|| LogError::UnknownType {
            field: display_field(path),
            type_name: name.to_owned(),
        })
}

fn parse_struct(obj: &Map<String, Value>, path: &str) -> Result<StructType> {
    let fields = obj
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(path, "struct without a \"fields\" array"))?;
    let mut seen = HashSet::with_capacity(fields.len());
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        let field = parse_field(field, path)?;
        if !seen.insert(field.name.to_lowercase()) {
            return Err(invalid(
                &child_path(path, &field.name),
                "duplicate field name (names are unique case-insensitively)",
            ));
        }
        out.push(field);
    }
    Ok(StructType::new(out))
}

fn parse_field(value: &Value, parent: &str) -> Result<StructField> {
    let obj = value
        .as_object()
        .ok_or_else(|| invalid(parent, "a struct field must be an object"))?;
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(parent, "a struct field without a string \"name\""))?;
    let path = child_path(parent, name);
    let type_value = obj
        .get("type")
        .ok_or_else(|| invalid(&path, "field without a \"type\""))?;
    let data_type = parse_type(type_value, &path)?;
    let nullable = optional_bool(obj, "nullable", &path)?.unwrap_or(true);
    let metadata = match obj.get("metadata") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(other) => {
            return Err(invalid(
                &path,
                format!("\"metadata\" must be an object, found {other}"),
            ));
        }
    };
    Ok(StructField {
        name: name.to_owned(),
        data_type,
        nullable,
        metadata,
    })
}

fn parse_array(obj: &Map<String, Value>, path: &str) -> Result<DataType> {
    let element_path = child_path(path, "element");
    let element = obj
        .get("elementType")
        .ok_or_else(|| invalid(path, "array without \"elementType\""))?;
    Ok(DataType::Array(Box::new(ArrayType {
        element_type: parse_type(element, &element_path)?,
        contains_null: optional_bool(obj, "containsNull", path)?.unwrap_or(true),
    })))
}

fn parse_map(obj: &Map<String, Value>, path: &str) -> Result<DataType> {
    let key = obj
        .get("keyType")
        .ok_or_else(|| invalid(path, "map without \"keyType\""))?;
    let value = obj
        .get("valueType")
        .ok_or_else(|| invalid(path, "map without \"valueType\""))?;
    Ok(DataType::Map(Box::new(MapType {
        key_type: parse_type(key, &child_path(path, "key"))?,
        value_type: parse_type(value, &child_path(path, "value"))?,
        value_contains_null: optional_bool(obj, "valueContainsNull", path)?.unwrap_or(true),
    })))
}

fn optional_bool(obj: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(invalid(
            path,
            format!("\"{key}\" must be a boolean, found {other}"),
        )),
    }
}
