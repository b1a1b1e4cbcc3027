//! One [`BatchSink`] per `dar scan --format`, over arrow-rs writers.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::BatchSink;
use super::flatten::flatten_for_csv;
use super::logical;
use crate::cli::ScanFormat;
use crate::error::CliError;

/// Writes `batches` as one aligned text table (a header even with no rows).
pub fn write_table(
    out: &mut dyn Write,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> Result<(), CliError> {
    let table = arrow_cast::pretty::pretty_format_batches_with_schema(schema.clone(), batches)
        .map_err(|e| CliError::write("table", e))?;
    writeln!(out, "{table}").map_err(|e| CliError::write("table", e))
}

/// Writes `batches` as CSV with a header line (struct fields flattened).
pub fn write_csv(out: &mut dyn Write, batches: &[RecordBatch]) -> Result<(), CliError> {
    let mut writer = arrow_csv::WriterBuilder::new().with_header(true).build(out);
    for b in batches {
        let flat = flatten_for_csv(b).map_err(|e| CliError::write("csv", e))?;
        writer.write(&flat).map_err(|e| CliError::write("csv", e))?;
    }
    Ok(())
}

/// The sink for `format`, writing to `out`.
pub fn batch_sink<'w>(
    format: ScanFormat,
    schema: &SchemaRef,
    out: Box<dyn Write + Send + 'w>,
) -> Result<Box<dyn BatchSink + 'w>, CliError> {
    Ok(match format {
        ScanFormat::Table => Box::new(TableSink {
            out,
            schema: schema.clone(),
            batches: Vec::new(),
        }),
        ScanFormat::Csv => Box::new(CsvSink {
            writer: arrow_csv::WriterBuilder::new().with_header(true).build(out),
        }),
        ScanFormat::Json => Box::new(JsonSink {
            writer: arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .with_encoder_factory(super::json_floats::floats_as_text())
                .build::<_, arrow_json::writer::LineDelimited>(out),
        }),
        ScanFormat::Parquet => {
            let props = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .build();
            let schema = logical::schema(schema);
            let writer = ArrowWriter::try_new(out, schema.clone(), Some(props))
                .map_err(|e| CliError::write("parquet", e))?;
            Box::new(ParquetSink { writer, schema })
        }
        ScanFormat::Arrow => {
            let schema = logical::schema(schema);
            let writer = arrow_ipc::writer::StreamWriter::try_new(out, &schema)
                .map_err(|e| CliError::write("arrow", e))?;
            Box::new(ArrowSink { writer, schema })
        }
        ScanFormat::Null => Box::new(NullSink { out, rows: 0 }),
    })
}

struct TableSink<'w> {
    out: Box<dyn Write + Send + 'w>,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl BatchSink for TableSink<'_> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        // Aligning columns needs every row's width: the text table is the
        // one format that holds all rows (use csv or json for big outputs).
        self.batches.push(batch.clone());
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), CliError> {
        write_table(&mut self.out, &self.schema, &self.batches)?;
        self.out.flush().map_err(|e| CliError::write("table", e))
    }
}

struct CsvSink<'w> {
    writer: arrow_csv::Writer<Box<dyn Write + Send + 'w>>,
}

impl BatchSink for CsvSink<'_> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        let flat = flatten_for_csv(batch).map_err(|e| CliError::write("csv", e))?;
        self.writer
            .write(&flat)
            .map_err(|e| CliError::write("csv", e))
    }

    fn finish(self: Box<Self>) -> Result<(), CliError> {
        let mut out = self.writer.into_inner();
        out.flush().map_err(|e| CliError::write("csv", e))
    }
}

struct JsonSink<'w> {
    writer: arrow_json::LineDelimitedWriter<Box<dyn Write + Send + 'w>>,
}

impl BatchSink for JsonSink<'_> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        self.writer
            .write(batch)
            .map_err(|e| CliError::write("json", e))
    }

    fn finish(mut self: Box<Self>) -> Result<(), CliError> {
        self.writer
            .finish()
            .map_err(|e| CliError::write("json", e))?;
        let mut out = self.writer.into_inner();
        out.flush().map_err(|e| CliError::write("json", e))
    }
}

struct ParquetSink<'w> {
    writer: ArrowWriter<Box<dyn Write + Send + 'w>>,
    schema: SchemaRef,
}

impl BatchSink for ParquetSink<'_> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        let batch =
            logical::batch(batch, &self.schema).map_err(|e| CliError::write("parquet", e))?;
        self.writer
            .write(&batch)
            .map_err(|e| CliError::write("parquet", e))
    }

    fn finish(self: Box<Self>) -> Result<(), CliError> {
        let mut out = self
            .writer
            .into_inner()
            .map_err(|e| CliError::write("parquet", e))?;
        out.flush().map_err(|e| CliError::write("parquet", e))
    }
}

struct ArrowSink<'w> {
    writer: arrow_ipc::writer::StreamWriter<Box<dyn Write + Send + 'w>>,
    schema: SchemaRef,
}

impl BatchSink for ArrowSink<'_> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        let batch = logical::batch(batch, &self.schema).map_err(|e| CliError::write("arrow", e))?;
        self.writer
            .write(&batch)
            .map_err(|e| CliError::write("arrow", e))
    }

    fn finish(mut self: Box<Self>) -> Result<(), CliError> {
        self.writer
            .finish()
            .map_err(|e| CliError::write("arrow", e))?;
        let mut out = self
            .writer
            .into_inner()
            .map_err(|e| CliError::write("arrow", e))?;
        out.flush().map_err(|e| CliError::write("arrow", e))
    }
}

struct NullSink<'w> {
    out: Box<dyn Write + Send + 'w>,
    rows: u64,
}

impl BatchSink for NullSink<'_> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), CliError> {
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), CliError> {
        writeln!(self.out, "{}", self.rows).map_err(|e| CliError::write("null", e))?;
        self.out.flush().map_err(|e| CliError::write("null", e))
    }
}
