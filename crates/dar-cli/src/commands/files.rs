//! `dar files`: the active files of a snapshot, from its file index.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{ArrowError, DataType};
use dar_log::FileIndex;
use dar_scan::{FileColumns, files_batch};
use serde_json::{Value, json};

use super::{Streams, out, plan_error};
use crate::cli::{FilesArgs, FilesFormat};
use crate::error::CliError;
use crate::output::{JsonObject, write_csv, write_table};

/// Runs `dar files`.
pub async fn run(args: &FilesArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let table = crate::table::open_for(&args.table, args.filter.as_deref()).await?;
    let index = table
        .snapshot()
        .file_index()
        .map_err(|source| CliError::FileIndex {
            uri: table.uri().to_string(),
            source: Box::new(source),
        })?;
    // The file-index rows to list: all, or those a scan with the filter
    // keeps (planned as a count, so no column is resolved for output).
    let kept: Option<Vec<usize>> = match &args.filter {
        None => None,
        Some(f) => {
            let plan = table
                .scan()
                .with_columns(Vec::<String>::new())
                .with_predicate_sql(f.clone())
                .build()
                .map_err(|e| plan_error(&table, Some(f), e))?;
            Some(plan.index_rows().unwrap_or_default().to_vec())
        }
    };
    let rows: Box<dyn Iterator<Item = usize>> = match &kept {
        Some(k) => Box::new(k.iter().copied()),
        None => Box::new(0..index.len()),
    };
    let batch = |columns: FileColumns, format: &'static str| {
        let all = files_batch(index, columns).map_err(|e| CliError::write(format, e))?;
        match &kept {
            None => Ok(all),
            Some(k) => {
                let k = arrow_array::UInt64Array::from_iter_values(k.iter().map(|i| *i as u64));
                arrow_select::take::take_record_batch(&all, &k)
                    .map_err(|e| CliError::write(format, e))
            }
        }
    };
    let w = &mut *streams.stdout;
    match args.format {
        FilesFormat::Json => {
            for i in rows {
                let line = file_json(index, i).map_err(|e| CliError::write("json", e))?;
                out!("json", w, "{line}")?;
            }
        }
        FilesFormat::Table => {
            let batch = batch(FileColumns::Summary, "table")?;
            write_table(w, &batch.schema(), &[batch])?;
        }
        FilesFormat::Csv => {
            let batch = batch(FileColumns::Full, "csv")?;
            write_csv(w, &[batch])?;
        }
    }
    w.flush().map_err(|e| CliError::write("files", e))
}

/// One file as a JSON object: `path` (as in the log), `object_path`,
/// `size`, `modification_time`, `partition_values`, `num_records`,
/// `deletion_vector` (null or its descriptor fields).
pub fn file_json(index: &FileIndex, i: usize) -> Result<JsonObject, ArrowError> {
    let int = |a: &arrow_array::Int64Array| (!a.is_null(i)).then(|| a.value(i));
    let mut partitions = JsonObject::new();
    for (c, a) in index.partition_columns.iter().zip(&index.partition_values) {
        partitions = partitions.with(&c.name, json_scalar(a, i)?);
    }
    let dv = index
        .deletion_vector(i)
        .map_err(|e| ArrowError::ExternalError(Box::new(e)))?
        .map(|d| {
            JsonObject::new()
                .with("storage_type", d.storage_type().code().to_string())
                .with("path_or_inline_dv", d.path_or_inline_dv())
                .with("offset", d.offset())
                .with("size_in_bytes", d.size_in_bytes())
                .with("cardinality", d.cardinality())
        });
    Ok(JsonObject::new()
        .with("path", index.path.value(i))
        .with("object_path", index.object_path(i).as_ref())
        .with("size", int(&index.size))
        .with("modification_time", int(&index.modification_time))
        .with_object("partition_values", partitions)
        .with("num_records", int(&index.stats.num_records))
        .with_optional_object("deletion_vector", dv))
}

/// Value `i` of `array` as JSON: booleans and integers natively, finite
/// floats as numbers, everything else (dates, timestamps, decimals, text)
/// as its Arrow display text, so no precision is lost.
fn json_scalar(array: &ArrayRef, i: usize) -> Result<Value, ArrowError> {
    use arrow_array::types::*;
    if array.is_null(i) {
        return Ok(Value::Null);
    }
    Ok(match array.data_type() {
        DataType::Boolean => json!(array.as_boolean().value(i)),
        DataType::Int8 => json!(array.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => json!(array.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => json!(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 | DataType::Float64 => {
            let text = ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())?
                .value(i)
                .to_string();
            match text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => Value::Number(n),
                None => Value::String(text),
            }
        }
        _ => Value::String(
            ArrayFormatter::try_new(array.as_ref(), &FormatOptions::default())?
                .value(i)
                .to_string(),
        ),
    })
}
