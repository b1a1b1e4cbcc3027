//! [`DeltaScanOptions`]: how the provider presents a table to DataFusion,
//! and the schema and batch adaptation that follows from it.
//!
//! DataFusion works fastest on view types (`Utf8View`, `BinaryView`) and
//! on dictionary-encoded partition columns (one value per file), so by
//! default the provider reports those: dar-scan decodes strings and
//! binaries straight into views (`ScanBuilder::with_view_types`), and each
//! batch's partition columns are cast on the way out.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{ArrowError, DataType, FieldRef, Schema, SchemaRef};

/// The key type of dictionary-encoded partition columns (DataFusion's own
/// convention for partition columns of file tables).
pub const PARTITION_DICTIONARY_KEY: DataType = DataType::UInt16;

/// How a Delta table appears in DataFusion; consuming `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaScanOptions {
    view_types: bool,
    dictionary_partitions: bool,
    resolve_at_plan: bool,
}

impl Default for DeltaScanOptions {
    fn default() -> Self {
        Self {
            view_types: true,
            dictionary_partitions: true,
            resolve_at_plan: false,
        }
    }
}

impl DeltaScanOptions {
    /// Defaults: view types on, dictionary partition columns on, footers
    /// read while executing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Strings and binaries (also inside structs) as `Utf8View` /
    /// `BinaryView` (default true).
    pub fn with_view_types(mut self, on: bool) -> Self {
        self.view_types = on;
        self
    }

    /// Partition columns as `Dictionary(UInt16, type)` (default true): the
    /// string, binary, integer, date and timestamp ones; boolean, float and
    /// decimal partition columns stay plain.
    pub fn with_dictionary_partitions(mut self, on: bool) -> Self {
        self.dictionary_partitions = on;
        self
    }

    /// Read every kept file's footer (and DV) while planning, so that the
    /// plan, and `EXPLAIN`, knows the row groups and pages each file keeps
    /// (default false: footers are read while executing, and a `LIMIT`
    /// touches only the files it needs).
    pub fn with_resolve_at_plan(mut self, on: bool) -> Self {
        self.resolve_at_plan = on;
        self
    }

    /// Whether view types are on.
    pub fn view_types(&self) -> bool {
        self.view_types
    }

    /// Whether partition columns are dictionary-encoded.
    pub fn dictionary_partitions(&self) -> bool {
        self.dictionary_partitions
    }

    /// Whether footers are read while planning.
    pub fn resolve_at_plan(&self) -> bool {
        self.resolve_at_plan
    }

    /// The schema DataFusion sees for a table of logical schema `dar`.
    pub(crate) fn datafusion_schema(&self, dar: &Schema, partition_columns: &[String]) -> Schema {
        let fields: Vec<FieldRef> = dar
            .fields()
            .iter()
            .map(|f| {
                let partition = partition_columns.contains(f.name());
                let mut t = if self.view_types {
                    dar_scan::view_type(f.data_type())
                } else {
                    f.data_type().clone()
                };
                if partition && self.dictionary_partitions && dictionary_value(&t) {
                    t = DataType::Dictionary(Box::new(PARTITION_DICTIONARY_KEY), Box::new(t));
                }
                Arc::new(f.as_ref().clone().with_data_type(t))
            })
            .collect();
        Schema::new_with_metadata(fields, dar.metadata().clone())
    }
}

/// Whether partition columns of type `t` are dictionary-encoded: strings,
/// binaries, integers, dates and timestamps. Not booleans (arrow has no
/// boolean dictionaries), nor floats and decimals, which DataFusion treats
/// differently inside a dictionary: it compares `-0.0` with `0.0` by bits
/// there, and coerces a dictionary decimal compared with a float to a
/// decimal that overflows on 36-digit values.
fn dictionary_value(t: &DataType) -> bool {
    use DataType::*;
    t.is_integer()
        || matches!(
            t,
            Date32
                | Date64
                | Timestamp(..)
                | Utf8
                | LargeUtf8
                | Utf8View
                | Binary
                | LargeBinary
                | BinaryView
        )
}

/// `batch` with its columns cast to the types of `schema` (same columns,
/// same order) and labelled with `schema`.
pub(crate) fn adapt_batch(
    batch: &RecordBatch,
    schema: &SchemaRef,
) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(Arc::clone(c))
            } else {
                arrow_cast::cast(c, f.data_type())
            }
        })
        .collect::<Result<Vec<ArrayRef>, ArrowError>>()?;
    RecordBatch::try_new_with_options(
        Arc::clone(schema),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Date32Array, StringArray, cast::AsArray};
    use arrow_schema::{Field, Fields};

    #[test]
    fn schema_and_batches_follow_the_options() {
        let dar = Arc::new(Schema::new(vec![
            Field::new("s", DataType::Utf8, true),
            Field::new(
                "st",
                DataType::Struct(Fields::from(vec![Field::new("b", DataType::Binary, true)])),
                true,
            ),
            Field::new("day", DataType::Date32, true),
        ]));
        let parts = vec!["day".to_string()];
        let df = DeltaScanOptions::new().datafusion_schema(&dar, &parts);
        assert_eq!(df.field(0).data_type(), &DataType::Utf8View);
        assert_eq!(
            df.field(1).data_type(),
            &DataType::Struct(Fields::from(vec![Field::new(
                "b",
                DataType::BinaryView,
                true
            )]))
        );
        assert_eq!(
            df.field(2).data_type(),
            &DataType::Dictionary(Box::new(DataType::UInt16), Box::new(DataType::Date32))
        );
        let plain = DeltaScanOptions::new()
            .with_view_types(false)
            .with_dictionary_partitions(false)
            .datafusion_schema(&dar, &parts);
        assert_eq!(&plain, dar.as_ref());

        let two = Arc::new(Schema::new(vec![
            dar.field(0).clone(),
            dar.field(2).clone(),
        ]));
        let batch = RecordBatch::try_new(
            two,
            vec![
                Arc::new(StringArray::from(vec![Some("a"), None])),
                Arc::new(Date32Array::from(vec![7, 7])),
            ],
        )
        .unwrap();
        let target = Arc::new(Schema::new(vec![df.field(0).clone(), df.field(2).clone()]));
        let out = adapt_batch(&batch, &target).unwrap();
        assert_eq!(out.schema(), target);
        assert_eq!(out.column(0).as_string_view().value(0), "a");
        assert!(out.column(0).is_null(1));
        assert_eq!(out.column(1).as_any_dictionary().values().len(), 1);
    }
}
