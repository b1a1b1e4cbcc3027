//! `dar info`: what a snapshot is (version, protocol, schema, partitioning,
//! properties) and how big (files, bytes, rows from the log's statistics).

use std::collections::BTreeMap;
use std::io::Write;

use arrow_array::Array;
use dar_log::schema::{ColumnMappingMode, DataType, StructType};
use dar_log::{FileIndex, Snapshot};
use dar_scan::Table;
use serde_json::{Value, json};

use super::{Streams, human_bytes, out};
use crate::cli::InfoArgs;
use crate::error::CliError;

/// Rows of a snapshot as its log tells them, without reading data files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowCount {
    /// Live rows: `numRecords` minus deletion-vector cardinalities; when
    /// some files have no `numRecords`, their rows are estimated from their
    /// size at the average bytes per row of the others. `None` when no file
    /// has `numRecords`.
    pub rows: Option<u64>,
    /// Whether `rows` is exact (every file has `numRecords`).
    pub exact: bool,
    /// The sum of `numRecords` over the files that have it.
    pub num_records: u64,
    /// Rows marked deleted by deletion vectors.
    pub deleted: u64,
    /// Files without `numRecords`.
    pub files_without_num_records: usize,
}

/// Counts the rows of `index` from its statistics.
pub fn row_count(index: &FileIndex) -> RowCount {
    let records = &index.stats.num_records;
    let mut num_records: u64 = 0;
    let mut known_bytes: u64 = 0;
    let mut unknown_bytes: u64 = 0;
    let mut missing = 0usize;
    for i in 0..index.len() {
        let size = if index.size.is_null(i) {
            0
        } else {
            u64::try_from(index.size.value(i)).unwrap_or(0)
        };
        if records.is_null(i) {
            missing += 1;
            unknown_bytes += size;
        } else {
            num_records += u64::try_from(records.value(i)).unwrap_or(0);
            known_bytes += size;
        }
    }
    let cards = &index.dv.cardinality;
    let deleted: u64 = (0..cards.len())
        .filter(|&i| !cards.is_null(i))
        .map(|i| u64::try_from(cards.value(i)).unwrap_or(0))
        .sum();
    let rows = if missing == 0 {
        Some(num_records.saturating_sub(deleted))
    } else if known_bytes > 0 {
        let per_byte = num_records as f64 / known_bytes as f64;
        let estimated = num_records as f64 + unknown_bytes as f64 * per_byte;
        Some((estimated.round() as u64).saturating_sub(deleted))
    } else {
        None
    };
    RowCount {
        rows,
        exact: missing == 0,
        num_records,
        deleted,
        files_without_num_records: missing,
    }
}

/// One schema entry: a column or a nested struct field.
struct Column {
    path: String,
    data_type: String,
    nullable: bool,
    physical_path: Option<String>,
    field_id: Option<i32>,
}

fn columns(schema: &StructType, mode: ColumnMappingMode) -> Vec<Column> {
    let mut out = Vec::new();
    walk(schema, mode, "", "", &mut out);
    out
}

fn walk(
    s: &StructType,
    mode: ColumnMappingMode,
    path: &str,
    physical: &str,
    out: &mut Vec<Column>,
) {
    for f in &s.fields {
        let join = |parent: &str, name: &str| {
            if parent.is_empty() {
                name.to_string()
            } else {
                format!("{parent}.{name}")
            }
        };
        let p = join(path, &f.name);
        let phys = join(physical, f.physical_name(mode).unwrap_or(&f.name));
        let data_type = match &f.data_type {
            DataType::Struct(_) => "struct".to_string(),
            other => other.to_string(),
        };
        out.push(Column {
            path: p.clone(),
            data_type,
            nullable: f.nullable,
            physical_path: mode.is_active().then(|| phys.clone()),
            field_id: if mode == ColumnMappingMode::Id {
                f.column_mapping_id()
            } else {
                None
            },
        });
        if let DataType::Struct(inner) = &f.data_type {
            walk(inner, mode, &p, &phys, out);
        }
    }
}

fn rfc3339(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

fn features(list: &Option<Vec<String>>) -> Value {
    match list {
        Some(l) => json!(l),
        None => Value::Null,
    }
}

/// The whole report as JSON (also the source of the text form).
fn report(table: &Table, snapshot: &Snapshot, index: &FileIndex) -> Value {
    let protocol = snapshot.protocol();
    let metadata = snapshot.metadata();
    let mode = snapshot.column_mapping_mode();
    let count = row_count(index);
    let total_bytes: i64 = index.size.iter().flatten().sum();
    let schema: Vec<Value> = columns(snapshot.schema(), mode)
        .into_iter()
        .map(|c| {
            let mut o = json!({
                "path": c.path,
                "type": c.data_type,
                "nullable": c.nullable,
            });
            if let Some(p) = c.physical_path {
                o["physical_name"] = json!(p);
            }
            if let Some(id) = c.field_id {
                o["field_id"] = json!(id);
            }
            o
        })
        .collect();
    let properties: BTreeMap<&String, &String> = snapshot.table_properties().iter().collect();
    json!({
        "table": table.uri(),
        "version": snapshot.version(),
        "commit_timestamp": snapshot.commit_timestamp_ms().and_then(rfc3339),
        "protocol": {
            "min_reader_version": protocol.min_reader_version,
            "min_writer_version": protocol.min_writer_version,
            "reader_features": features(&protocol.reader_features),
            "writer_features": features(&protocol.writer_features),
        },
        "id": metadata.id,
        "name": metadata.name,
        "description": metadata.description,
        "created_time": metadata.created_time.and_then(rfc3339),
        "column_mapping_mode": mode.to_string(),
        "partition_columns": snapshot.partition_columns(),
        "schema": schema,
        "properties": properties,
        "files": index.len(),
        "total_bytes": total_bytes,
        "num_rows": count.rows,
        "num_rows_exact": count.exact,
        "num_records": count.num_records,
        "deleted_rows": count.deleted,
        "files_without_num_records": count.files_without_num_records,
    })
}

/// Runs `dar info`.
pub async fn run(args: &InfoArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let table = crate::table::open(&args.table).await?;
    let snapshot = table.snapshot();
    let index = snapshot
        .file_index()
        .map_err(|source| CliError::FileIndex {
            uri: table.uri().to_string(),
            source: Box::new(source),
        })?;
    let report = report(&table, snapshot, index);
    let w = &mut *streams.stdout;
    if args.json {
        out!("json", w, "{report}")?;
    } else {
        write_text(w, &report, snapshot, index).map_err(|e| CliError::write("text", e))?;
    }
    w.flush().map_err(|e| CliError::write("text", e))
}

fn list(v: &Value) -> String {
    match v.as_array() {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|x| x.as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        Some(_) => "none".to_string(),
        None => "-".to_string(),
    }
}

fn write_text(
    w: &mut dyn Write,
    r: &Value,
    snapshot: &Snapshot,
    index: &FileIndex,
) -> std::io::Result<()> {
    let p = &r["protocol"];
    let s = |v: &Value| v.as_str().map(str::to_string).unwrap_or_default();
    writeln!(w, "table:             {}", s(&r["table"]))?;
    match r["commit_timestamp"].as_str() {
        Some(t) => writeln!(w, "version:           {} (committed {t})", r["version"])?,
        None => writeln!(w, "version:           {}", r["version"])?,
    }
    writeln!(
        w,
        "protocol:          reader {} (features: {}), writer {} (features: {})",
        p["min_reader_version"],
        list(&p["reader_features"]),
        p["min_writer_version"],
        list(&p["writer_features"])
    )?;
    writeln!(w, "id:                {}", s(&r["id"]))?;
    if let Some(name) = r["name"].as_str() {
        writeln!(w, "name:              {name}")?;
    }
    if let Some(d) = r["description"].as_str() {
        writeln!(w, "description:       {d}")?;
    }
    writeln!(w, "column mapping:    {}", s(&r["column_mapping_mode"]))?;
    writeln!(w, "partition columns: {}", list(&r["partition_columns"]))?;
    writeln!(w, "schema:")?;
    let mode = snapshot.column_mapping_mode();
    let cols = columns(snapshot.schema(), mode);
    let width = cols.iter().map(|c| c.path.len()).max().unwrap_or(0);
    let type_width = cols.iter().map(|c| c.data_type.len()).max().unwrap_or(0);
    for c in &cols {
        let mut line = format!(
            "  {:width$}  {:type_width$}  {}",
            c.path,
            c.data_type,
            if c.nullable { "null" } else { "not null" }
        );
        if let Some(p) = &c.physical_path {
            line.push_str(&format!("  physical: {p}"));
        }
        if let Some(id) = c.field_id {
            line.push_str(&format!("  id: {id}"));
        }
        writeln!(w, "{}", line.trim_end())?;
    }
    let props = r["properties"].as_object();
    match props {
        Some(props) if !props.is_empty() => {
            writeln!(w, "properties:")?;
            for (k, v) in props {
                writeln!(w, "  {k} = {}", v.as_str().unwrap_or_default())?;
            }
        }
        _ => writeln!(w, "properties:        none")?,
    }
    let bytes = r["total_bytes"].as_u64().unwrap_or(0);
    let dv_files = (0..index.len())
        .filter(|&i| index.deletion_vector(i).is_some())
        .count();
    writeln!(
        w,
        "files:             {} ({}, {bytes} bytes; {dv_files} with deletion vectors)",
        index.len(),
        human_bytes(bytes)
    )?;
    let count = row_count(index);
    match count.rows {
        Some(rows) if count.exact => writeln!(
            w,
            "rows:              {rows} (exact: {} in numRecords, {} deleted by deletion vectors)",
            count.num_records, count.deleted
        )?,
        Some(rows) => writeln!(
            w,
            "rows:              {rows} (estimated: {} of {} files have no numRecords; {} deleted by deletion vectors)",
            count.files_without_num_records,
            index.len(),
            count.deleted
        )?,
        None => writeln!(
            w,
            "rows:              unknown (no file has numRecords in its statistics)"
        )?,
    }
    Ok(())
}
