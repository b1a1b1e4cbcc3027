//! [`TableWriter::checkpoint_with`]: a checkpoint of the current version
//! in one of the shapes readers meet (protocol digest §1.3): classic (one
//! Parquet file), multi-part V1 (`pad20(v).checkpoint.pad10(o).pad10(p).parquet`)
//! or V2 (a JSON top-level file and its adds in sidecars). For tests of
//! readers it can also break the rule that a checkpoint's rows are unique
//! ([`CheckpointOptions::with_repeated_file`]).

use object_store::PutMode;

use crate::actions::{DataFile, Tombstone, commit_text};
use crate::checkpoint::{self, CheckpointState, StatsColumns};
use crate::error::{Result, TestkitError};
use crate::json::Json;
use crate::naming::pad20;
use crate::writer::TableWriter;

/// How [`CheckpointOptions::with_repeated_file`] repeats a live file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Repeat {
    /// The same `add` again: a reader reads the file once.
    Same,
    /// An `add` of the file with another size: a reader refuses it.
    OtherSize,
    /// An `add` of the file with other statistics (`numRecords` one more):
    /// a reader refuses it.
    OtherStats,
    /// A `remove` of the file (the same logical file, a tombstone of a
    /// live file): a reader refuses it.
    Removed,
}

/// How [`TableWriter::checkpoint_with`] writes a checkpoint.
#[derive(Debug, Clone)]
pub struct CheckpointOptions {
    stats_json: bool,
    stats_parsed: bool,
    sidecars: usize,
    parts: usize,
    repeats: Vec<(String, Repeat)>,
}

impl Default for CheckpointOptions {
    /// Classic, with JSON stats (`add.stats`) only.
    fn default() -> Self {
        Self {
            stats_json: true,
            stats_parsed: false,
            sidecars: 0,
            parts: 1,
            repeats: Vec::new(),
        }
    }
}

impl CheckpointOptions {
    /// Whether adds carry `add.stats`, the JSON text (default: true).
    pub fn with_stats_json(mut self, on: bool) -> Self {
        self.stats_json = on;
        self
    }

    /// Whether adds carry `add.stats_parsed`, the typed struct (default: false).
    pub fn with_stats_parsed(mut self, on: bool) -> Self {
        self.stats_parsed = on;
        self
    }

    /// A V2 checkpoint whose adds are in `n` sidecar files (0, the
    /// default: a classic single-file checkpoint). The table should use
    /// the `v2Checkpoint` feature.
    pub fn with_sidecars(mut self, n: usize) -> Self {
        self.sidecars = n;
        self
    }

    /// A multi-part V1 checkpoint of `n` parts (1, the default: one file),
    /// the files split evenly in path order: the protocol and metaData
    /// rows in the first part, the tombstones in the last. Ignored with
    /// sidecars.
    pub fn with_parts(mut self, n: usize) -> Self {
        self.parts = n.max(1);
        self
    }

    /// Writes the live file `path` a second time, as `repeat` says, in the
    /// last part or sidecar (for a file of the first part, a repeat across
    /// parts; in a one-file checkpoint, within it). A checkpoint's rows
    /// are unique (protocol §2.10): this writes a broken checkpoint, for
    /// tests of what a reader makes of one. An unknown path is an error
    /// when the checkpoint is written.
    pub fn with_repeated_file(mut self, path: impl Into<String>, repeat: Repeat) -> Self {
        self.repeats.push((path.into(), repeat));
        self
    }
}

/// The repeated rows of a checkpoint: adds and tombstones.
type Repeats = (Vec<DataFile>, Vec<Tombstone>);

impl TableWriter {
    /// Writes a classic checkpoint of the current version
    /// (`pad20(v).checkpoint.parquet`, JSON stats) and `_last_checkpoint`.
    pub async fn checkpoint(&mut self) -> Result<()> {
        self.checkpoint_with(&CheckpointOptions::default()).await
    }

    /// Writes a checkpoint of the current version as `options` says (which
    /// stats columns; classic, multi-part, or V2 with its adds in
    /// sidecars; repeated rows) and `_last_checkpoint`.
    pub async fn checkpoint_with(&mut self, options: &CheckpointOptions) -> Result<()> {
        let stats = StatsColumns {
            json: options.stats_json,
            parsed: options.stats_parsed.then(|| {
                let data: Vec<arrow_schema::Field> = self
                    .physical_schema()
                    .fields()
                    .iter()
                    .filter(|f| !self.metadata.partition_columns.contains(f.name()))
                    .map(|f| f.as_ref().clone())
                    .collect();
                crate::stats_parsed::stats_parsed_fields(&arrow_schema::Schema::new(data))
            }),
        };
        let repeats = self.repeats(&options.repeats)?;
        let (size_in_bytes, rows, parts) = if options.sidecars > 0 {
            let (size, rows) = self
                .v2_checkpoint(stats, options.sidecars, &repeats)
                .await?;
            (size, rows, 1)
        } else {
            let (size, rows) = self.v1_checkpoint(stats, options.parts, &repeats).await?;
            (size, rows, options.parts)
        };
        let mut hint = Json::object()
            .with("version", Json::Int(self.version as i64))
            .with("size", Json::Int(rows as i64))
            .with("sizeInBytes", Json::Int(size_in_bytes as i64))
            .with("numOfAddFiles", Json::Int(self.files.len() as i64));
        if parts > 1 {
            hint.push("parts", Json::Int(parts as i64));
        }
        let segments = ["_delta_log".into(), "_last_checkpoint".into()];
        self.put(&segments, hint.render().into_bytes(), PutMode::Overwrite)
            .await
    }

    /// The rows `repeats` asks for, from the live files.
    fn repeats(&self, repeats: &[(String, Repeat)]) -> Result<Repeats> {
        let (mut adds, mut removes) = (Vec::new(), Vec::new());
        for (path, repeat) in repeats {
            let mut file = self
                .files
                .get(path)
                .cloned()
                .ok_or_else(|| TestkitError::UnknownFile { path: path.clone() })?;
            match repeat {
                Repeat::Same => adds.push(file),
                Repeat::OtherSize => {
                    file.size += 1;
                    adds.push(file);
                }
                Repeat::OtherStats => {
                    file.num_records += 1;
                    file.stats.num_records += 1;
                    adds.push(file);
                }
                Repeat::Removed => removes.push(Tombstone {
                    file,
                    deletion_timestamp: self.timestamp(self.version),
                }),
            }
        }
        Ok((adds, removes))
    }

    /// A V1 checkpoint in `parts` files (one: the classic name). Returns
    /// the total size and action count.
    async fn v1_checkpoint(
        &mut self,
        stats: StatsColumns,
        parts: usize,
        (extra_adds, extra_removes): &Repeats,
    ) -> Result<(usize, usize)> {
        let files: Vec<&DataFile> = self.files.values().collect();
        let per = files.len().div_ceil(parts).max(1);
        let mut encoded = Vec::with_capacity(parts);
        for o in 0..parts {
            let last = o + 1 == parts;
            let name = if parts == 1 {
                format!("{}.checkpoint.parquet", pad20(self.version))
            } else {
                format!(
                    "{}.checkpoint.{:010}.{parts:010}.parquet",
                    pad20(self.version),
                    o + 1
                )
            };
            let mut part: Vec<&DataFile> = files
                .get((o * per).min(files.len())..((o + 1) * per).min(files.len()))
                .unwrap_or_default()
                .to_vec();
            let mut tombstones: Vec<&Tombstone> = Vec::new();
            if last {
                part.extend(extra_adds);
                tombstones.extend(&self.tombstones);
                tombstones.extend(extra_removes);
            }
            let state = CheckpointState {
                stats: stats.clone(),
                sidecar: false,
                continued: o > 0,
                protocol: &self.protocol,
                metadata: &self.metadata,
                files: part,
                tombstones,
            };
            let part = checkpoint::encode(&state, &name)?;
            encoded.push((name, part));
        }
        let (mut size, mut rows) = (0, 0);
        for (name, part) in encoded {
            size += part.bytes.len();
            rows += part.rows;
            self.put(&["_delta_log".into(), name], part.bytes, PutMode::Create)
                .await?;
        }
        Ok((size, rows))
    }

    /// A V2 checkpoint: its adds in `sidecars` Parquet files under
    /// `_delta_log/_sidecars/`, and a JSON top-level file
    /// (`pad20(v).checkpoint.<uuid>.json`) with the protocol, metadata,
    /// `checkpointMetadata`, the sidecar references and the tombstones.
    /// Repeated adds go in the last sidecar. Returns the top-level file's
    /// size and action count.
    async fn v2_checkpoint(
        &mut self,
        stats: StatsColumns,
        sidecars: usize,
        (extra_adds, extra_removes): &Repeats,
    ) -> Result<(usize, usize)> {
        let per = self.files.len().div_ceil(sidecars).max(1);
        let names: Vec<String> = (0..self.files.len().div_ceil(per).max(1))
            .map(|_| format!("{}.parquet", self.ids.uuid().hyphenated()))
            .collect();
        let top = format!(
            "{}.checkpoint.{}.json",
            pad20(self.version),
            self.ids.uuid().hyphenated()
        );
        let files: Vec<&DataFile> = self.files.values().collect();
        let mut lines = vec![
            self.protocol.json(),
            self.metadata.json(),
            Json::object().with(
                "checkpointMetadata",
                Json::object().with("version", Json::Int(self.version as i64)),
            ),
        ];
        let mut chunks: Vec<Vec<&DataFile>> = files.chunks(per).map(<[_]>::to_vec).collect();
        match chunks.last_mut() {
            Some(last) => last.extend(extra_adds),
            None => chunks.push(extra_adds.iter().collect()),
        }
        let mut parts = Vec::new();
        for (chunk, name) in chunks.into_iter().zip(names) {
            let state = CheckpointState {
                stats: stats.clone(),
                sidecar: true,
                continued: false,
                protocol: &self.protocol,
                metadata: &self.metadata,
                files: chunk,
                tombstones: Vec::new(),
            };
            let encoded = checkpoint::encode(&state, &name)?;
            parts.push((name, encoded.bytes));
        }
        for (name, bytes) in parts {
            lines.push(
                Json::object().with(
                    "sidecar",
                    Json::object()
                        .with("path", Json::str(&name))
                        .with("sizeInBytes", Json::Int(bytes.len() as i64))
                        .with("modificationTime", Json::Int(self.timestamp(self.version))),
                ),
            );
            let segments = ["_delta_log".into(), "_sidecars".into(), name];
            self.put(&segments, bytes, PutMode::Create).await?;
        }
        for t in self.tombstones.iter().chain(extra_removes) {
            lines.push(t.file.remove_json(t.deletion_timestamp, true));
        }
        let text = commit_text(&lines);
        let (size, rows) = (text.len(), lines.len());
        self.put(
            &["_delta_log".into(), top],
            text.into_bytes(),
            PutMode::Create,
        )
        .await?;
        Ok((size, rows))
    }
}
