//! View types: strings and binaries as `Utf8View` / `BinaryView`, decoded
//! straight from the Parquet pages (the views point into the decoded page
//! buffers instead of copying every value into one contiguous buffer).
//!
//! A scan with [`crate::ScanBuilder::with_view_types`] reads files with a
//! schema whose byte columns are views ([`decoding_metadata`]) and outputs
//! them as views; the table's classic types still bind the predicate and
//! read the statistics, which never see views.

use std::sync::Arc;

use arrow_schema::{DataType, FieldRef, Fields, Schema};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};

/// `t` with every string as `Utf8View` and every binary as `BinaryView`,
/// at any depth (struct fields, list elements, map keys and values); other
/// types unchanged.
pub fn view_type(t: &DataType) -> DataType {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
        DataType::Binary | DataType::LargeBinary => DataType::BinaryView,
        DataType::Struct(fields) => DataType::Struct(view_fields(fields)),
        DataType::List(e) => DataType::List(view_field(e)),
        DataType::LargeList(e) => DataType::LargeList(view_field(e)),
        DataType::Map(entries, sorted) => DataType::Map(view_field(entries), *sorted),
        other => other.clone(),
    }
}

fn view_field(f: &FieldRef) -> FieldRef {
    let t = view_type(f.data_type());
    if &t == f.data_type() {
        Arc::clone(f)
    } else {
        Arc::new(f.as_ref().clone().with_data_type(t))
    }
}

/// `fields` with [`view_type`] applied to each.
pub(crate) fn view_fields(fields: &Fields) -> Fields {
    fields.iter().map(view_field).collect()
}

/// The footer `classic` (the file's schema as parquet derives it) with its
/// byte columns decoded as views; the same footer when it has none, or when
/// parquet cannot decode one of them as a view (then the batch plan casts).
pub(crate) fn decoding_metadata(classic: &ArrowReaderMetadata) -> ArrowReaderMetadata {
    let schema = classic.schema();
    let fields = view_fields(schema.fields());
    if &fields == schema.fields() {
        return classic.clone();
    }
    let views = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    ArrowReaderMetadata::try_new(
        Arc::clone(classic.metadata()),
        ArrowReaderOptions::new().with_schema(views),
    )
    .unwrap_or_else(|_| classic.clone())
}

#[cfg(test)]
mod tests {
    use arrow_schema::Field;

    use super::*;

    #[test]
    fn byte_types_become_views_at_every_depth() {
        let list = DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)));
        let map = DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", DataType::LargeBinary, true),
                ])),
                false,
            )),
            false,
        );
        let st = DataType::Struct(Fields::from(vec![
            Field::new("a", DataType::Binary, true),
            Field::new("n", DataType::Int32, true),
        ]));
        assert_eq!(view_type(&DataType::Utf8), DataType::Utf8View);
        assert_eq!(view_type(&DataType::LargeUtf8), DataType::Utf8View);
        assert_eq!(view_type(&DataType::Int64), DataType::Int64);
        assert_eq!(
            view_type(&list),
            DataType::List(Arc::new(Field::new("element", DataType::Utf8View, true)))
        );
        let DataType::Map(entries, false) = view_type(&map) else {
            panic!("not a map")
        };
        let DataType::Struct(kv) = entries.data_type() else {
            panic!("not a struct")
        };
        assert_eq!(kv[0].data_type(), &DataType::Utf8View);
        assert_eq!(kv[1].data_type(), &DataType::BinaryView);
        assert!(!kv[0].is_nullable(), "nullability is kept");
        let DataType::Struct(children) = view_type(&st) else {
            panic!("not a struct")
        };
        assert_eq!(children[0].data_type(), &DataType::BinaryView);
        assert_eq!(children[1].data_type(), &DataType::Int32);
    }

    /// A real Parquet footer with strings at every depth: parquet takes
    /// the view schema (no fallback to the classic one and a cast).
    #[test]
    fn parquet_decodes_every_byte_column_of_a_file_as_views() {
        use arrow_array::builder::{ListBuilder, MapBuilder, StringBuilder};
        use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray, StructArray};
        use parquet::arrow::ArrowWriter;

        let mut list = ListBuilder::new(StringBuilder::new());
        list.values().append_value("a");
        list.append(true);
        let mut map = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        map.keys().append_value("k");
        map.values().append_value("v");
        map.append(true).unwrap();
        let st = StructArray::from(vec![(
            Arc::new(Field::new("t", DataType::Binary, true)),
            Arc::new(BinaryArray::from(vec![b"x".as_ref()])) as ArrayRef,
        )]);
        let batch = RecordBatch::try_from_iter([
            ("s", Arc::new(StringArray::from(vec!["s"])) as ArrayRef),
            ("l", Arc::new(list.finish()) as ArrayRef),
            ("m", Arc::new(map.finish()) as ArrayRef),
            ("st", Arc::new(st) as ArrayRef),
        ])
        .unwrap();
        let mut bytes = Vec::new();
        let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let footer = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(bytes))
            .unwrap();
        let classic =
            ArrowReaderMetadata::try_new(Arc::new(footer), ArrowReaderOptions::new()).unwrap();
        let views = decoding_metadata(&classic);
        for (c, v) in classic
            .schema()
            .fields()
            .iter()
            .zip(views.schema().fields())
        {
            assert_ne!(c.data_type(), v.data_type(), "{}", c.name());
            assert_eq!(&view_type(c.data_type()), v.data_type(), "{}", c.name());
        }
    }
}
