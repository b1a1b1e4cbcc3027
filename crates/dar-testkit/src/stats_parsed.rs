//! A checkpoint's `add.stats_parsed` (protocol §3): each file's statistics
//! as a typed struct, decoded from the same JSON text `add.stats` holds,
//! so the two can never disagree.

use std::sync::Arc;

use arrow_array::{ArrayRef, StructArray, UInt32Array};
use arrow_schema::{DataType, Field, Fields, Schema};

use crate::error::{Result, TestkitError};

/// Whether a leaf of type `t` has min / max statistics (the kit's rules,
/// see [`crate::stats`]).
fn has_bounds(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(_, _)
            | DataType::Date32
            | DataType::Timestamp(_, _)
            | DataType::Utf8
    )
}

/// The `minValues` / `maxValues` struct of `fields` (`bounds`), or the
/// `nullCount` one; `None` when no leaf has such a statistic.
fn section(fields: &Fields, bounds: bool) -> Option<Fields> {
    let out: Vec<Field> = fields
        .iter()
        .filter_map(|f| match f.data_type() {
            DataType::Struct(children) => {
                section(children, bounds).map(|c| Field::new(f.name(), DataType::Struct(c), true))
            }
            DataType::List(_) | DataType::LargeList(_) | DataType::Map(_, _) => None,
            t if bounds => has_bounds(t).then(|| Field::new(f.name(), t.clone(), true)),
            _ => Some(Field::new(f.name(), DataType::Int64, true)),
        })
        .collect();
    (!out.is_empty()).then(|| out.into())
}

/// The `stats_parsed` struct fields of a table whose physical data columns
/// (partition columns excluded) are `schema`'s.
pub(crate) fn stats_parsed_fields(schema: &Schema) -> Fields {
    let mut fields = vec![Field::new("numRecords", DataType::Int64, true)];
    if let Some(b) = section(schema.fields(), true) {
        fields.push(Field::new("minValues", DataType::Struct(b.clone()), true));
        fields.push(Field::new("maxValues", DataType::Struct(b), true));
    }
    if let Some(n) = section(schema.fields(), false) {
        fields.push(Field::new("nullCount", DataType::Struct(n), true));
    }
    fields.push(Field::new("tightBounds", DataType::Boolean, true));
    fields.into()
}

/// The `stats_parsed` column of a checkpoint of `rows` rows: the stats
/// text of row `r` is `stats(r)` (`None` for rows that are not adds).
pub(crate) fn stats_parsed_column(
    fields: &Fields,
    rows: usize,
    stats: &dyn Fn(usize) -> Option<String>,
) -> Result<ArrayRef> {
    let schema = Arc::new(Schema::new(fields.clone()));
    let mut decoder = arrow_json::ReaderBuilder::new(Arc::clone(&schema))
        .build_decoder()
        .map_err(TestkitError::arrow("stats_parsed decoder"))?;
    let mut at = Vec::with_capacity(rows);
    let mut batches = Vec::new();
    let mut decoded = 0u32;
    for r in 0..rows {
        let Some(text) = stats(r) else {
            at.push(None);
            continue;
        };
        let mut line = text.into_bytes();
        line.push(b'\n');
        let mut rest = &line[..];
        while !rest.is_empty() {
            let used = decoder
                .decode(rest)
                .map_err(TestkitError::arrow("stats_parsed decode"))?;
            rest = &rest[used..];
            if !rest.is_empty()
                && let Some(b) = decoder
                    .flush()
                    .map_err(TestkitError::arrow("stats_parsed decode"))?
            {
                batches.push(b);
            }
        }
        at.push(Some(decoded));
        decoded += 1;
    }
    if let Some(b) = decoder
        .flush()
        .map_err(TestkitError::arrow("stats_parsed decode"))?
    {
        batches.push(b);
    }
    let all = arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(TestkitError::arrow("stats_parsed batches"))?;
    let parsed: ArrayRef = Arc::new(StructArray::from(all));
    let indices = UInt32Array::from(at);
    arrow_select::take::take(parsed.as_ref(), &indices, None)
        .map_err(TestkitError::arrow("stats_parsed rows"))
}
