//! The plain logical schema of exported files.
//!
//! Under column mapping, `dar-scan` returns fields that carry their Delta
//! physical name and Parquet field id as metadata (so engines can map them
//! back). An exported Parquet file or Arrow stream is a standalone copy of
//! the rows: it gets the logical names and types only, with the metadata
//! removed at every nesting level.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, make_array};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema, SchemaRef};

fn field(f: &FieldRef) -> FieldRef {
    Arc::new(
        Field::new(f.name(), data_type(f.data_type()), f.is_nullable())
            .with_metadata(Default::default()),
    )
}

fn fields(fs: &Fields) -> Fields {
    fs.iter().map(field).collect()
}

/// `t` without field metadata at any depth.
pub fn data_type(t: &DataType) -> DataType {
    match t {
        DataType::Struct(fs) => DataType::Struct(fields(fs)),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::ListView(f) => DataType::ListView(field(f)),
        DataType::LargeListView(f) => DataType::LargeListView(field(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(field(f), *n),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Dictionary(k, v) => DataType::Dictionary(k.clone(), Box::new(data_type(v))),
        DataType::RunEndEncoded(r, v) => DataType::RunEndEncoded(field(r), field(v)),
        other => other.clone(),
    }
}

/// `schema` without schema or field metadata.
pub fn schema(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(fields(schema.fields())))
}

fn array(a: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let stripped = data_type(a.data_type());
    if &stripped == a.data_type() {
        return Ok(Arc::clone(a));
    }
    Ok(make_array(retype(a.to_data())?))
}

fn retype(d: arrow_data::ArrayData) -> Result<arrow_data::ArrayData, ArrowError> {
    let children = d
        .child_data()
        .iter()
        .cloned()
        .map(retype)
        .collect::<Result<Vec<_>, _>>()?;
    let t = data_type(d.data_type());
    d.into_builder().data_type(t).child_data(children).build()
}

/// `batch` under `schema` (the result of [`schema`] on its schema).
pub fn batch(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .map(array)
        .collect::<Result<Vec<_>, _>>()?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int32Array, StructArray};
    use std::collections::HashMap;

    #[test]
    fn metadata_removed_at_every_level() {
        let md: HashMap<String, String> =
            [("PARQUET:field_id".to_string(), "7".to_string())].into();
        let inner = Field::new("tip", DataType::Int32, true).with_metadata(md.clone());
        let s = StructArray::new(
            Fields::from(vec![inner]),
            vec![Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef],
            None,
        );
        let outer = Field::new("payment", s.data_type().clone(), true).with_metadata(md);
        let b =
            RecordBatch::try_new(Arc::new(Schema::new(vec![outer])), vec![Arc::new(s)]).unwrap();
        let plain = schema(&b.schema());
        let out = batch(&b, &plain).unwrap();
        let f = out.schema().field(0).clone();
        assert!(f.metadata().is_empty());
        let DataType::Struct(children) = f.data_type() else {
            panic!("struct expected")
        };
        assert!(children[0].metadata().is_empty());
        assert_eq!(out.num_rows(), 2);
    }
}
