//! `dar info`: what a snapshot is (version, protocol, schema, partitioning,
//! properties) and how big (files, bytes, rows from the log's statistics).

use std::collections::BTreeMap;
use std::io::Write;

use arrow_array::Array;
use dar_io::redact_uri;
use dar_log::actions::{Metadata, Protocol};
use dar_log::schema::{ColumnMappingMode, DataType, StructType};
use dar_log::{
    FileIndex, InCommitTimestamps, LogError, ProtocolReport, Snapshot, TableConfiguration,
};
use dar_scan::{ScanError, Table};
use serde_json::json;

use super::{Streams, human_bytes, out};
use crate::cli::InfoArgs;
use crate::error::CliError;
use crate::output::JsonObject;

/// Rows of a snapshot as its log tells them, without reading data files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowCount {
    /// Live rows: `numRecords` minus deletion-vector cardinalities; when
    /// some files have no `numRecords`, their rows are estimated from their
    /// size at the average bytes per row of the others. `None` when no file
    /// has `numRecords`.
    pub rows: Option<u64>,
    /// Whether `rows` is exact (every file has a usable `numRecords`).
    pub exact: bool,
    /// The sum of `numRecords` over the files that have it.
    pub num_records: u64,
    /// Rows marked deleted by deletion vectors.
    pub deleted: u64,
    /// Files without `numRecords`, or with an impossible one (negative):
    /// the log's statistics rule (dar-log) reads such a file as having no
    /// statistics, so its rows are estimated, never exact.
    pub files_without_num_records: usize,
    /// The paths of the files whose `numRecords` was impossible (counted
    /// in `files_without_num_records` too).
    pub impossible_num_records: Vec<String>,
    /// A file whose deletion vector deletes more rows than its
    /// `numRecords`: `(path, cardinality, numRecords)`. The log contradicts
    /// itself, so no count is given.
    pub contradiction: Option<(String, u64, u64)>,
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
    let contradiction = (0..cards.len().min(records.len())).find_map(|i| {
        let card = (!cards.is_null(i))
            .then(|| u64::try_from(cards.value(i)).ok())
            .flatten()?;
        let n = (!records.is_null(i))
            .then(|| u64::try_from(records.value(i)).ok())
            .flatten()?;
        (card > n).then(|| (index.path.value(i).to_string(), card, n))
    });
    let rows = if contradiction.is_some() {
        None
    } else if missing == 0 {
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
        exact: missing == 0 && contradiction.is_none(),
        num_records,
        deleted,
        files_without_num_records: missing,
        impossible_num_records: index
            .stats
            .impossible
            .iter()
            .filter(|&&i| i < index.len())
            .map(|&i| index.path.value(i).to_string())
            .collect(),
        contradiction,
    }
}

/// What the files without a usable `numRecords` are, for the text form:
/// `"1 of 4 files have no numRecords"`, naming the impossible ones.
fn missing_text(count: &RowCount, files: usize) -> String {
    let text = format!(
        "{} of {files} files have no numRecords",
        count.files_without_num_records
    );
    match impossible_text(count) {
        Some(t) => format!("{text} ({t})"),
        None => text,
    }
}

/// `"1 an impossible, negative one, as 'p'"` when some file's
/// `numRecords` was impossible.
fn impossible_text(count: &RowCount) -> Option<String> {
    let first = count.impossible_num_records.first()?;
    Some(format!(
        "{} an impossible, negative one, as '{first}'",
        count.impossible_num_records.len()
    ))
}

/// Why a count is not given: the log contradicts itself.
fn contradiction_text((path, deleted, rows): &(String, u64, u64)) -> String {
    format!(
        "the log contradicts itself: the deletion vector of '{path}' deletes {deleted} rows of its {rows}"
    )
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

/// What `dar info` reports of the table's contents: only for tables dar
/// reads (a refused table's schema and files are not interpreted).
struct Contents {
    column_mapping: ColumnMappingMode,
    /// Whether the change data feed is on (`dar changes` reads it).
    change_data_feed: bool,
    /// Where commit timestamps come from.
    in_commit_timestamps: InCommitTimestamps,
    /// `None` when the log's metaData has no schemaString.
    columns: Option<Vec<Column>>,
    files: usize,
    files_with_dv: usize,
    total_bytes: u64,
    count: RowCount,
}

/// Everything `dar info` reports, computed once for both forms.
struct Info {
    table: String,
    version: u64,
    commit_timestamp: Option<String>,
    reader_features: Option<Vec<String>>,
    writer_features: Option<Vec<String>>,
    /// Every feature with what dar makes of it, and the verdict.
    report: ProtocolReport,
    id: String,
    name: Option<String>,
    description: Option<String>,
    created_time: Option<String>,
    partition_columns: Vec<String>,
    properties: BTreeMap<String, String>,
    /// `None` when dar refuses the table.
    contents: Option<Contents>,
}

impl Info {
    fn new(
        table: &Table,
        snapshot: &Snapshot,
        index: &FileIndex,
        commit_timestamp_ms: Option<i64>,
    ) -> Self {
        // What follows from the protocol and metadata is read from the one
        // value that derives it, never derived here again.
        let config: &TableConfiguration = snapshot.table_configuration();
        let mut info = Self::from_header(
            table.uri(),
            config.version(),
            config.protocol(),
            config.metadata(),
        );
        info.report = config.protocol_report();
        let mode = config.column_mapping_mode();
        info.commit_timestamp = commit_timestamp_ms.and_then(rfc3339);
        info.contents = Some(Contents {
            column_mapping: mode,
            change_data_feed: config.is_change_data_feed_enabled(),
            in_commit_timestamps: config.in_commit_timestamps(),
            columns: config.has_schema().then(|| columns(config.schema(), mode)),
            files: index.len(),
            files_with_dv: (0..index.len())
                .filter(|&i| index.dv.key_parts(i).is_some())
                .count(),
            total_bytes: index
                .size
                .iter()
                .flatten()
                .map(|s| u64::try_from(s).unwrap_or(0))
                .sum(),
            count: row_count(index),
        });
        info
    }

    /// What the log says of a table whatever its protocol: no commit time,
    /// no contents.
    fn from_header(uri: &str, version: u64, protocol: &Protocol, metadata: &Metadata) -> Self {
        Self {
            table: uri.to_string(),
            version,
            commit_timestamp: None,
            reader_features: protocol.reader_features.clone(),
            writer_features: protocol.writer_features.clone(),
            report: ProtocolReport::new(protocol),
            id: metadata.id.clone(),
            name: metadata.name.clone(),
            description: metadata.description.clone(),
            created_time: metadata.created_time.and_then(rfc3339),
            partition_columns: metadata.partition_columns.clone(),
            properties: metadata
                .configuration
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            contents: None,
        }
    }

    /// The protocol object of the JSON form.
    fn protocol_json(&self) -> JsonObject {
        let features: Vec<JsonObject> = self
            .report
            .features
            .iter()
            .map(|f| {
                JsonObject::new()
                    .with("name", f.name.as_str())
                    .with("kind", f.kind.as_str())
                    .with("source", f.source.to_string())
                    .with("required_by_readers", f.required_by_readers)
                    .with("dar", f.support.as_str())
                    .with("meaning", f.meaning.as_str())
            })
            .collect();
        JsonObject::new()
            .with("min_reader_version", self.report.min_reader_version)
            .with("min_writer_version", self.report.min_writer_version)
            .with("reader_features", self.reader_features.clone())
            .with("writer_features", self.writer_features.clone())
            .with_objects("features", &features)
            .with("dar_reads", self.report.dar_reads())
            .with(
                "refused",
                self.report
                    .refused()
                    .map(|f| f.name.clone())
                    .collect::<Vec<String>>(),
            )
            .with("verdict", self.report.verdict())
    }

    fn to_json(&self) -> JsonObject {
        let c = self.contents.as_ref();
        let schema: Option<Vec<JsonObject>> = c.and_then(|c| c.columns.as_ref()).map(|columns| {
            columns
                .iter()
                .map(|c| {
                    let mut o = JsonObject::new()
                        .with("path", c.path.as_str())
                        .with("type", c.data_type.as_str())
                        .with("nullable", c.nullable);
                    if let Some(p) = &c.physical_path {
                        o = o.with("physical_name", p.as_str());
                    }
                    if let Some(id) = c.field_id {
                        o = o.with("field_id", id);
                    }
                    o
                })
                .collect()
        });
        JsonObject::new()
            .with("table", self.table.as_str())
            .with("version", self.version)
            .with("commit_timestamp", self.commit_timestamp.clone())
            .with_object("protocol", self.protocol_json())
            .with("id", self.id.as_str())
            .with("name", self.name.clone())
            .with("description", self.description.clone())
            .with("created_time", self.created_time.clone())
            .with(
                "column_mapping_mode",
                c.map(|c| c.column_mapping.to_string()),
            )
            .with("change_data_feed", c.map(|c| c.change_data_feed))
            .with(
                "in_commit_timestamps_since",
                c.and_then(|c| match c.in_commit_timestamps {
                    InCommitTimestamps::Since { version, .. } => Some(version),
                    InCommitTimestamps::Off => None,
                }),
            )
            .with("partition_columns", self.partition_columns.clone())
            .with_optional_objects("schema", schema.as_deref())
            .with("properties", json!(self.properties))
            .with("files", c.map(|c| c.files))
            .with("files_with_deletion_vectors", c.map(|c| c.files_with_dv))
            .with("total_bytes", c.map(|c| c.total_bytes))
            .with("num_rows", c.and_then(|c| c.count.rows))
            .with("num_rows_exact", c.map(|c| c.count.exact))
            .with(
                "num_rows_unknown_because",
                match c {
                    Some(c) => c.count.contradiction.as_ref().map(contradiction_text),
                    None => Some(self.report.verdict()),
                },
            )
            .with("num_records", c.map(|c| c.count.num_records))
            .with("deleted_rows", c.map(|c| c.count.deleted))
            .with(
                "files_without_num_records",
                c.map(|c| c.count.files_without_num_records),
            )
            .with(
                "files_with_impossible_num_records",
                c.map(|c| c.count.impossible_num_records.len()),
            )
    }

    /// The feature table and the verdict line.
    fn write_features(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let features = &self.report.features;
        if features.is_empty() {
            writeln!(w, "features:          none")?;
        } else {
            writeln!(
                w,
                "features:          (name, kind, named by, dar, for a reader)"
            )?;
            let sources: Vec<String> = features.iter().map(|f| f.source.to_string()).collect();
            let nw = features.iter().map(|f| f.name.len()).max().unwrap_or(0);
            let kw = features
                .iter()
                .map(|f| f.kind.as_str().len())
                .max()
                .unwrap_or(0);
            let sw = sources.iter().map(String::len).max().unwrap_or(0);
            let dw = features
                .iter()
                .map(|f| f.support.as_str().len())
                .max()
                .unwrap_or(0);
            for (f, source) in features.iter().zip(&sources) {
                writeln!(
                    w,
                    "  {:nw$}  {:kw$}  {:sw$}  {:dw$}  {}",
                    f.name,
                    f.kind.as_str(),
                    source,
                    f.support.as_str(),
                    f.meaning
                )?;
            }
        }
        writeln!(w, "verdict:           {}", self.report.verdict())
    }

    fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let list = |l: &Option<Vec<String>>| match l {
            Some(l) if !l.is_empty() => l.join(", "),
            Some(_) => "none".to_string(),
            None => "-".to_string(),
        };
        writeln!(w, "table:             {}", self.table)?;
        match &self.commit_timestamp {
            Some(t) => writeln!(w, "version:           {} (committed {t})", self.version)?,
            None => writeln!(w, "version:           {}", self.version)?,
        }
        writeln!(
            w,
            "protocol:          reader {} (features: {}), writer {} (features: {})",
            self.report.min_reader_version,
            list(&self.reader_features),
            self.report.min_writer_version,
            list(&self.writer_features)
        )?;
        self.write_features(w)?;
        writeln!(w, "id:                {}", self.id)?;
        if let Some(name) = &self.name {
            writeln!(w, "name:              {name}")?;
        }
        if let Some(d) = &self.description {
            writeln!(w, "description:       {d}")?;
        }
        let Some(contents) = &self.contents else {
            writeln!(
                w,
                "partition columns: {}",
                list(&Some(self.partition_columns.clone()))
            )?;
            self.write_properties(w)?;
            return writeln!(w, "schema, files:     not read (see the verdict)");
        };
        writeln!(w, "column mapping:    {}", contents.column_mapping)?;
        let on = |b: bool| if b { "on" } else { "off" };
        writeln!(w, "change data feed:  {}", on(contents.change_data_feed))?;
        match contents.in_commit_timestamps {
            InCommitTimestamps::Since { version, .. } => writeln!(
                w,
                "commit times:      in-commit timestamps from version {version}"
            )?,
            InCommitTimestamps::Off => {
                writeln!(w, "commit times:      commit file modification times")?
            }
        }
        writeln!(
            w,
            "partition columns: {}",
            list(&Some(self.partition_columns.clone()))
        )?;
        let Some(columns) = &contents.columns else {
            writeln!(
                w,
                "schema:           none (the log's metaData has no schemaString: files can be listed, rows not read)"
            )?;
            return self.write_tail(contents, w);
        };
        writeln!(w, "schema:")?;
        let width = columns.iter().map(|c| c.path.len()).max().unwrap_or(0);
        let type_width = columns.iter().map(|c| c.data_type.len()).max().unwrap_or(0);
        for c in columns {
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
        self.write_tail(contents, w)
    }

    /// The table properties.
    fn write_properties(&self, w: &mut dyn Write) -> std::io::Result<()> {
        if self.properties.is_empty() {
            writeln!(w, "properties:        none")
        } else {
            writeln!(w, "properties:")?;
            for (k, v) in &self.properties {
                writeln!(w, "  {k} = {v}")?;
            }
            Ok(())
        }
    }

    /// Properties, files and rows: the lines after the schema.
    fn write_tail(&self, contents: &Contents, w: &mut dyn Write) -> std::io::Result<()> {
        self.write_properties(w)?;
        writeln!(
            w,
            "files:             {} ({}, {} bytes; {} with deletion vectors)",
            contents.files,
            human_bytes(contents.total_bytes),
            contents.total_bytes,
            contents.files_with_dv
        )?;
        let c = &contents.count;
        if let Some(why) = &c.contradiction {
            return writeln!(
                w,
                "rows:              unknown ({})",
                contradiction_text(why)
            );
        }
        match c.rows {
            Some(rows) if c.exact => writeln!(
                w,
                "rows:              {rows} (exact: {} in numRecords, {} deleted by deletion vectors)",
                c.num_records, c.deleted
            ),
            Some(rows) => writeln!(
                w,
                "rows:              {rows} (estimated: {}; {} deleted by deletion vectors)",
                missing_text(c, contents.files),
                c.deleted
            ),
            None => writeln!(
                w,
                "rows:              unknown (no file has numRecords in its statistics{})",
                impossible_text(c).map_or(String::new(), |t| format!("; {t}"))
            ),
        }
    }
}

/// Whether `e` is dar refusing the table's protocol (a reader version or
/// reader feature it does not read): `dar info` then reports what the log
/// says instead of failing.
fn is_protocol_refusal(e: &ScanError) -> bool {
    matches!(
        e,
        ScanError::Log { source, .. } if matches!(
            source.as_ref(),
            LogError::UnsupportedFeature { .. } | LogError::UnsupportedReaderVersion { .. }
        )
    )
}

/// Runs `dar info`.
pub async fn run(args: &InfoArgs, streams: &mut Streams<'_>) -> Result<(), CliError> {
    let info = match crate::table::open(&args.table).await {
        Ok(table) => readable_info(&table).await?,
        Err(CliError::Scan(e)) if is_protocol_refusal(&e) => {
            let options = crate::table::table_options(&args.table)?;
            let header = Table::inspect_with(&args.table.table, &options).await?;
            let uri = match e {
                ScanError::Log { uri, .. } => uri,
                _ => redact_uri(&args.table.table),
            };
            Info::from_header(&uri, header.version, &header.protocol, &header.metadata)
        }
        Err(e) => return Err(e),
    };
    let w = &mut *streams.stdout;
    if args.json {
        out!("json", w, "{}", info.to_json())?;
    } else {
        info.write_text(w).map_err(|e| CliError::write("text", e))?;
    }
    w.flush().map_err(|e| CliError::write("text", e))
}

/// The report of a table dar reads.
async fn readable_info(table: &Table) -> Result<Info, CliError> {
    let snapshot = table.snapshot();
    let index = snapshot
        .file_index()
        .map_err(|source| CliError::FileIndex {
            uri: table.uri().to_string(),
            source: Box::new(source),
        })?;
    let commit_timestamp_ms =
        snapshot
            .commit_timestamp_ms()
            .await
            .map_err(|source| CliError::CommitTimestamp {
                uri: table.uri().to_string(),
                source: Box::new(source),
            })?;
    Ok(Info::new(table, snapshot, index, commit_timestamp_ms))
}
