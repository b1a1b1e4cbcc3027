//! Reading checkpoints: classic, multi-part, V2 (Parquet or JSON, classic- or
//! UUID-named) and their sidecars (protocol digest §1.3, §3).
//!
//! Only the columns a snapshot needs are read: the non-file actions, the
//! `add` fields of the file index, and of `remove` only its key (path and
//! DV id, to check that no add of the checkpoint is also removed; never
//! `add.tags` or row tracking).
//! Adds stay columnar: the projected `add` struct's children become an
//! [`AddColumns`] batch per file. The few non-file rows are turned into JSON
//! lines with arrow-json and decoded by the same parser as commits, so a
//! checkpoint and a commit can never disagree on what an action means.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use futures::{FutureExt, StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::schema::types::SchemaDescriptor;

mod chunks;
mod columns;
mod duplicates;
mod io;
mod open_columns;
mod retained;

use columns::{add_columns, remove_keys, schema_err};
use duplicates::{Gathered, KeyHasher, unique_adds};
pub use io::{CheckpointIo, MAX_FILES_IN_FLIGHT, WHOLE_FILE_LIMIT};
pub use retained::RetainedStats;

use chunks::Chunks;
use open_columns::OpenColumns;

use crate::actions::{DomainMetadata, Metadata, Protocol, Txn};
use crate::add_columns::{AddColumns, AddColumnsBuilder, AddRow, AddStats, DvColumns, SeenKeys};
use crate::commit::{Action, SidecarLine, parse_actions};
use crate::error::{LogError, Result};
use crate::file_index::share_paths;
use crate::listing::{CheckpointFiles, CheckpointFormat, LogFile, read_log_file};
use crate::paths::{FileLocation, TablePaths, is_plain_relative};
use crate::string_concat::StringConcat;

/// Top-level checkpoint columns read whole (they hold few rows).
const NON_FILE_ROOTS: [&str; 5] = ["protocol", "metaData", "txn", "domainMetadata", "sidecar"];
/// `add` fields the file index needs.
const ADD_FIELDS: [&str; 8] = [
    "path",
    "partitionValues",
    "size",
    "modificationTime",
    "stats",
    "deletionVector",
    "stats_parsed",
    "partitionValues_parsed",
];

/// Everything a checkpoint contributes to a snapshot.
#[derive(Debug, Default)]
pub struct CheckpointContent {
    /// `protocol`, if the checkpoint has one (it always should).
    pub protocol: Option<Protocol>,
    /// `metaData`.
    pub metadata: Option<Metadata>,
    /// `txn` rows.
    pub txns: Vec<Txn>,
    /// `domainMetadata` rows (tombstones included; the caller drops them).
    pub domains: Vec<DomainMetadata>,
    /// Adds, one batch per file (checkpoint part or sidecar).
    pub adds: Vec<AddColumns>,
}

/// Read a whole checkpoint (all parts, and sidecars for V2); Parquet
/// through `io`, a bounded number of files at a time (see
/// [`CheckpointIo::files_in_flight`]). Adds whose logical-file key is in `removed` (what
/// newer commits removed or re-added) are dropped as each part is decoded,
/// on that part's task. The live adds are then checked unique (see
/// `duplicates`): an add repeated as is is read once, an add repeated
/// with other values, or added and removed, is
/// [`LogError::ConflictingActions`].
///
/// `newer` holds the protocol and metadata of the commits after the
/// checkpoint, where they have them: with the checkpoint's own, they say
/// which columns' statistics decode with the counts (see
/// [`CheckpointIo::with_stats_loading`]).
pub async fn read_checkpoint(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    paths: &TablePaths,
    cp: &CheckpointFiles,
    removed: &Arc<SeenKeys>,
    newer: (Option<&Protocol>, Option<&Metadata>),
) -> Result<CheckpointContent> {
    let open = Arc::new(OpenColumns::new(io.stats_loading(), cp.version));
    open.offer(newer.0, newer.1);
    let mut out = CheckpointContent::default();
    let mut sidecars = Vec::new();
    let live = Live {
        paths: paths.clone(),
        removed: Arc::clone(removed),
        hasher: KeyHasher::default(),
    };
    let mut gathered = Gathered::default();
    if cp.format == CheckpointFormat::UuidJson {
        for f in &cp.files {
            let mut part = read_json_checkpoint(store.as_ref(), f, &live).await?;
            gather(&mut gathered, f.location.to_string(), &mut part);
            merge(&mut out, part, &mut sidecars);
        }
    } else {
        let in_flight = io.files_in_flight(cp.files.iter().map(|f| Some(f.size)));
        // Indexes, not borrowed items: a closure over `&LogFile` made the
        // futures awaiting a replay fail rustc's `Send` check.
        let files = &cp.files;
        let parts: Vec<FileContent> = futures::stream::iter((0..files.len()).map(|i| {
            let f = &files[i];
            spawn_read(
                store,
                io,
                &live,
                (f.location.clone(), f.size, f.store_version.clone()),
                false,
                &open,
            )
        }))
        .buffered(in_flight)
        .try_collect()
        .await?;
        for (f, mut part) in cp.files.iter().zip(parts) {
            gather(&mut gathered, f.location.to_string(), &mut part);
            merge(&mut out, part, &mut sidecars);
        }
    }
    if !sidecars.is_empty() {
        // The manifest's protocol and metadata, for the sidecars' stats.
        open.offer(out.protocol.as_ref(), out.metadata.as_ref());
        let sidecar_paths = paths.sidecars()?;
        let in_flight = io.files_in_flight(
            sidecars
                .iter()
                .map(|s| s.size_in_bytes.and_then(|n| u64::try_from(n).ok())),
        );
        let reads = (0..sidecars.len()).map(|i| {
            let s = &sidecars[i];
            let location = resolve_sidecar(&sidecar_paths, &s.path);
            let size = s.size_in_bytes.and_then(|n| u64::try_from(n).ok());
            let (store, io, live) = (Arc::clone(store), io.clone(), live.clone());
            let open = Arc::clone(&open);
            async move {
                let location = location?;
                let size = match size {
                    Some(n) => n,
                    None => {
                        store
                            .head(&location)
                            .await
                            .map_err(|e| LogError::store(location.to_string(), e))?
                            .size
                    }
                };
                let name = location.to_string();
                let part =
                    spawn_read(&store, &io, &live, (location, size, None), true, &open).await?;
                Ok::<_, LogError>((name, part))
            }
        });
        let mut reads = futures::stream::iter(reads).buffered(in_flight);
        while let Some((name, mut part)) = reads.try_next().await? {
            gather(&mut gathered, name, &mut part);
        }
    }
    out.adds = unique_adds(cp.version, gathered, paths)?;
    if out.protocol.is_none() && out.metadata.is_none() && out.adds.is_empty() {
        let path = cp
            .files
            .first()
            .map(|f| f.location.to_string())
            .unwrap_or_default();
        return Err(LogError::CheckpointSchema {
            path,
            column: "protocol/metaData/add".into(),
            detail: "checkpoint holds no protocol, metaData or add rows".into(),
        });
    }
    Ok(out)
}

/// The object key of the sidecar `raw` (a file name relative to
/// `_delta_log/_sidecars/`, or an absolute URI): it must lie in that folder
/// of the table's own store (protocol digest §3), else it is an error
/// naming the path. `sidecars` resolves against that folder.
fn resolve_sidecar(sidecars: &TablePaths, raw: &str) -> Result<Path> {
    let location = sidecars.locate(raw)?;
    if sidecars.is_inside_root(&location)
        && let FileLocation::TableStore(p) = location
    {
        return Ok(p);
    }
    Err(LogError::InvalidPath {
        path: raw.to_string(),
        detail: format!(
            "a sidecar must lie in {}, the table's sidecar folder",
            sidecars.url()
        ),
    })
}

/// Moves the adds and remove keys out of `part` (the file `name`).
fn gather(gathered: &mut Gathered, name: String, part: &mut FileContent) {
    gathered.take(
        name,
        std::mem::take(&mut part.content.adds),
        std::mem::take(&mut part.add_hashes),
        std::mem::take(&mut part.removes),
    );
}

fn merge(out: &mut CheckpointContent, part: FileContent, sidecars: &mut Vec<SidecarLine>) {
    let c = part.content;
    if out.protocol.is_none() {
        out.protocol = c.protocol;
    }
    if out.metadata.is_none() {
        out.metadata = c.metadata;
    }
    out.txns.extend(c.txns);
    out.domains.extend(c.domains);
    out.adds.extend(c.adds);
    sidecars.extend(part.sidecars);
}

/// Read a JSON checkpoint file: its actions, its live adds with their key
/// hashes, and its remove keys.
async fn read_json_checkpoint(
    store: &dyn ObjectStore,
    f: &LogFile,
    live: &Live,
) -> Result<FileContent> {
    let path = f.location.to_string();
    let bytes = read_log_file(store, f).await?;
    let mut adds = AddColumnsBuilder::default();
    // Removes go through the same builder: only their keys are used.
    let mut removes = AddColumnsBuilder::default();
    let mut file = FileContent::default();
    parse_actions(&path, &bytes, |line, action| {
        match action {
            Action::Add(a) => append_add_line(&mut adds, &a, &path, line, false)?,
            Action::Remove(r) => removes
                .append(AddRow {
                    path: &r.path,
                    partition_values: crate::commit::PartitionEntries(None),
                    size: None,
                    modification_time: None,
                    stats: None,
                    dv: r
                        .deletion_vector
                        .as_ref()
                        .map(crate::commit::DvLine::fields),
                    plain_path: false,
                })
                .map_err(|source| LogError::MalformedJson {
                    path: path.clone(),
                    line,
                    source,
                })?,
            other => absorb(&mut file.content, &mut file.sidecars, other),
        }
        Ok(())
    })?;
    if !adds.is_empty() {
        let a = adds.finish().without(&live.removed, &live.paths)?;
        file.add_hashes
            .push(live.hasher.hashes(&live.paths, &a.path, &a.dv, false)?);
        file.content.adds.push(a);
    }
    if !removes.is_empty() {
        let r = removes.finish();
        let hashes = live.hasher.hashes(&live.paths, &r.path, &r.dv, false)?;
        file.removes.push((r.path, r.dv, hashes));
    }
    Ok(file)
}

/// Fold a checkpoint's non-file action into `out` (the first protocol and
/// metaData win); adds are the caller's, removes and commitInfo are ignored.
fn absorb(out: &mut CheckpointContent, sidecars: &mut Vec<SidecarLine>, action: Action<'_>) {
    match action {
        Action::Protocol(p) => out.protocol = out.protocol.take().or(Some(p)),
        Action::Metadata(m) => out.metadata = out.metadata.take().or(Some(*m)),
        Action::Txn(t) => out.txns.push(t),
        Action::DomainMetadata(d) => out.domains.push(d),
        Action::Sidecar(s) => sidecars.push(s),
        Action::Add(_) | Action::Remove(_) | Action::Cdc(_) | Action::CommitInfo(_) => {}
    }
}

/// Append a parsed `add` line (from `path`, at `line`) to raw columns;
/// `plain_path` when its path is known to be a plain relative name.
pub(crate) fn append_add_line(
    b: &mut AddColumnsBuilder,
    a: &crate::commit::AddLine<'_>,
    path: &str,
    line: usize,
    plain_path: bool,
) -> Result<()> {
    b.append(AddRow {
        path: &a.path,
        partition_values: a.partition_values,
        size: Some(a.size),
        modification_time: Some(a.modification_time),
        stats: a.stats.as_deref(),
        dv: a
            .deletion_vector
            .as_ref()
            .map(crate::commit::DvLine::fields),
        plain_path,
    })
    .map_err(|source| LogError::MalformedJson {
        path: path.to_string(),
        line,
        source,
    })
}

/// What one checkpoint file (or one row range of it) holds.
#[derive(Default)]
struct FileContent {
    content: CheckpointContent,
    sidecars: Vec<SidecarLine>,
    /// The key hashes of each batch of `content.adds`, row by row.
    add_hashes: Vec<Vec<u64>>,
    /// The keys of its removes, with their hashes.
    removes: Vec<(StringArray, DvColumns, Vec<u64>)>,
}

/// [`read_parquet_file`] as a task of its own (see [`CheckpointIo::spawn`]).
fn spawn_read(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    live: &Live,
    file: (Path, u64, Option<dar_io::ObjectVersion>),
    adds_only: bool,
    open: &Arc<OpenColumns>,
) -> futures::future::BoxFuture<'static, Result<FileContent>> {
    let (location, size, version) = file;
    let (store, reading, name) = (Arc::clone(store), io.clone(), location.to_string());
    let (live, open) = (live.clone(), Arc::clone(open));
    io.spawn(&name, async move {
        read_parquet_file(
            &store,
            &reading,
            live,
            (&location, size, version),
            adds_only,
            open,
        )
        .await
    })
}

/// What decides which adds of a checkpoint file are live, and hashes
/// their keys.
#[derive(Clone)]
struct Live {
    paths: TablePaths,
    removed: Arc<SeenKeys>,
    hasher: KeyHasher,
}

/// Read one checkpoint part or sidecar. `adds_only` for sidecars.
///
/// Two pieces of work run on blocking threads, each split in row ranges:
/// the decoding of `numRecords` / `tightBounds` (and of the statistics of
/// the columns `open` holds) from the stats chunks (kept, compressed, for
/// the column stats a query asks for later; from a local file, let go and
/// read again when asked for), and of the other columns (paths, sizes,
/// DVs, the non-file actions). From object storage one planned read
/// fetches every chunk and the two run side by side; from a local file
/// large enough that each decoding alone takes every core, one set of
/// chunks is read and decoded, then the other, so that the two are never
/// held at once: the stats first, unless `open` waits for the protocol
/// and metadata this file may hold (then the other columns first, on
/// every store).
async fn read_parquet_file(
    store: &Arc<dyn ObjectStore>,
    io: &CheckpointIo,
    live: Live,
    file: (&Path, u64, Option<dar_io::ObjectVersion>),
    adds_only: bool,
    open: Arc<OpenColumns>,
) -> Result<FileContent> {
    let (location, size, version) = file;
    let path = location.to_string();
    let pq_err = |source| LogError::CheckpointParquet {
        path: path.clone(),
        source,
    };
    // A local file's stamp, taken before its first read: its stats are
    // read again later only from the file this read sees.
    let local = match io.local_files() {
        Some(files) => Some((
            files.clone(),
            files
                .stamp(location)
                .map_err(|e| retained::local_err(&path, e))?,
        )),
        None => None,
    };
    let mut reader = io.reader(store, location, size).with_version(version);
    let metadata = ArrowReaderMetadata::load_async(&mut reader, Default::default())
        .await
        .map_err(pq_err)?;
    let descr = metadata.metadata().file_metadata().schema_descr_ptr();
    let (leaves, stats_leaves) = wanted_leaves(&descr, adds_only);
    check_roots(&metadata, &path, adds_only)?;
    // The stats (kept compressed for later) and the rest (decoded now).
    let stats_ranges = chunks::chunk_ranges(&metadata, &stats_leaves);
    let main_ranges = chunks::chunk_ranges(&metadata, &leaves);
    let rows = usize::try_from(metadata.metadata().file_metadata().num_rows()).unwrap_or(0);
    let pieces = chunks::pieces(rows, io.parallel());
    // With columns to decode with the counts whose keys are not known yet,
    // a file that may hold the table's protocol and metadata decodes its
    // other columns first, and its counts then with the columns they give.
    let main_first = !adds_only && !stats_leaves.is_empty() && open.pending();
    let split = local.is_some() && pieces.len() > 1;
    let mut stats = (!stats_leaves.is_empty()).then(|| StatsPart {
        path: path.clone(),
        metadata: metadata.clone(),
        leaves: stats_leaves,
        starts: stats_ranges.iter().map(|r| r.start).collect(),
        on_disk: local.map(|(files, stamp)| retained::OnDisk {
            files,
            location: location.clone(),
            ranges: stats_ranges.clone(),
            stamp,
        }),
        // Read with the other chunks, the stats may share one buffer with
        // them: kept as they are, they would pin all of it. A small file
        // read whole (at most `WHOLE_FILE_LIMIT`) keeps its slices, and
        // stats read alone are their own buffers.
        copy: !split && size > WHOLE_FILE_LIMIT,
    });
    let mut counts = None;
    // The stats chunks read with the others, for counts decoded later.
    let mut stats_bytes = None;
    let main_bytes = if split {
        // From a local file of rows enough to split each decoding over the
        // cores, one set of chunks at a time: read, decoded and let go
        // before the other set is read, so the two are never held at once.
        // (A smaller file decodes the two side by side, a core each: one
        // after the other took W6's 20,000-file checkpoint a quarter
        // longer.)
        if !main_first && let Some(part) = stats.take() {
            let fetched = reader
                .get_byte_ranges(stats_ranges.clone())
                .await
                .map_err(pq_err)?;
            let (file, pending) = part.start(io, fetched, open.columns());
            counts = Some((file, futures::future::ready(pending.await).boxed()));
        }
        reader
            .get_byte_ranges(main_ranges.clone())
            .await
            .map_err(pq_err)?
    } else {
        // One planned read of every chunk needed.
        let wanted: Vec<_> = stats_ranges.iter().chain(&main_ranges).cloned().collect();
        let mut fetched = reader.get_byte_ranges(wanted).await.map_err(pq_err)?;
        let main = fetched.split_off(stats_ranges.len().min(fetched.len()));
        match stats.take() {
            Some(part) if !main_first => counts = Some(part.start(io, fetched, open.columns())),
            part => {
                stats = part;
                stats_bytes = Some(fetched);
            }
        }
        main
    };
    let main = Chunks::new(
        main_ranges
            .iter()
            .map(|r| r.start)
            .zip(main_bytes)
            .collect(),
    );
    let mask = ProjectionMask::leaves(&descr, leaves);
    let decoded = {
        let (path, live) = (path.clone(), live.clone());
        let name = path.clone();
        io.run_cpu(&name, move || {
            crate::parallel::run_parallel(
                &pieces,
                |r| decode_piece(&path, (&main, &metadata, &mask), r.clone(), &live),
                |_| decoding_failed(&path, "a thread panicked"),
            )
            .into_iter()
            .collect::<Result<Vec<Piece>>>()
        })
    };
    let mut content = CheckpointContent::default();
    let mut sidecars = Vec::new();
    let mut adds = Vec::new();
    let mut removes = Vec::new();
    for mut piece in decoded.await? {
        removes.append(&mut piece.file.removes);
        merge(&mut content, piece.file, &mut sidecars);
        adds.extend(piece.adds);
    }
    if let Some(part) = stats.take() {
        open.offer(content.protocol.as_ref(), content.metadata.as_ref());
        let fetched = match stats_bytes {
            Some(b) => b,
            None => reader.get_byte_ranges(stats_ranges).await.map_err(pq_err)?,
        };
        counts = Some(part.start(io, fetched, open.columns()));
    }
    if let Some((file, counts)) = counts {
        let mut counts = counts.await?;
        // The columns' stats stay with the file, for the file index.
        let columns = std::mem::take(&mut counts.columns);
        for (a, rows, _) in &mut adds {
            let taken = counts.take(rows)?;
            a.stats = AddStats::Retained {
                file: Arc::clone(&file),
                rows: rows.clone(),
                num_records: taken.num_records,
                tight_bounds: taken.tight_bounds,
            };
        }
        if !columns.is_empty() {
            counts.columns = columns;
            file.keep_decoded(counts);
        }
    }
    // The file index concatenates the batches once: no whole-file copy here.
    let mut add_hashes = Vec::with_capacity(adds.len());
    for (a, _, hashes) in adds {
        content.adds.push(a);
        add_hashes.push(hashes);
    }
    Ok(FileContent {
        content,
        sidecars,
        add_hashes,
        removes,
    })
}

/// The stats chunks of a checkpoint file, before they are read.
struct StatsPart {
    path: String,
    metadata: ArrowReaderMetadata,
    /// Their Parquet leaves.
    leaves: Vec<usize>,
    /// Where each chunk starts in the file.
    starts: Vec<u64>,
    /// Where they are on local disk.
    on_disk: Option<retained::OnDisk>,
    /// Whether the chunks read must be copied out of their buffers.
    copy: bool,
}

impl StatsPart {
    /// Keeps the chunks `fetched` and starts decoding their counts, with
    /// the statistics of `columns` (see [`RetainedStats::decode`]); from a
    /// local file the chunks are let go once decoded.
    fn start(
        self,
        io: &CheckpointIo,
        fetched: Vec<bytes::Bytes>,
        columns: Vec<crate::schema::StatsColumn>,
    ) -> (
        Arc<RetainedStats>,
        futures::future::BoxFuture<'static, Result<crate::stats::FileStats>>,
    ) {
        let copy = self.copy;
        let own = |b: bytes::Bytes| {
            if copy {
                bytes::Bytes::copy_from_slice(&b)
            } else {
                b
            }
        };
        let retained = Arc::new(RetainedStats::new(
            self.path.clone(),
            self.metadata,
            self.leaves,
            self.starts
                .into_iter()
                .zip(fetched.into_iter().map(own))
                .collect(),
            io.parallel(),
            self.on_disk,
        ));
        let decoding = Arc::clone(&retained);
        let counts = io.run_cpu(&self.path, move || {
            let counts = decoding.decode(columns);
            decoding.release();
            counts
        });
        (retained, counts)
    }
}

/// The leaf columns a read of a checkpoint file decodes now, and those of
/// the add's stats (kept compressed for later): the add fields dar uses,
/// a remove's key (to check no add of the checkpoint has it), and, but in
/// a sidecar, the non-file actions.
fn wanted_leaves(descr: &SchemaDescriptor, adds_only: bool) -> (Vec<usize>, Vec<usize>) {
    let mut leaves = Vec::new();
    let mut stats_leaves = Vec::new();
    for (i, c) in descr.columns().iter().enumerate() {
        let parts = c.path().parts();
        let wanted = match parts.first().map(String::as_str) {
            Some("add") => parts
                .get(1)
                .is_some_and(|p| ADD_FIELDS.contains(&p.as_str())),
            // A remove's key, to check no add of the checkpoint has it.
            Some("remove") => {
                let rest: Vec<&str> = parts.iter().skip(1).map(String::as_str).collect();
                matches!(
                    rest.as_slice(),
                    ["path"]
                        | [
                            "deletionVector",
                            "storageType" | "pathOrInlineDv" | "offset"
                        ]
                )
            }
            Some(root) => !adds_only && NON_FILE_ROOTS.contains(&root),
            None => false,
        };
        match (wanted, retained::is_stats_leaf(parts)) {
            (true, true) => stats_leaves.push(i),
            (true, false) => leaves.push(i),
            (false, _) => {}
        }
    }
    (leaves, stats_leaves)
}

/// Refuses a checkpoint file whose action columns are not structs, or a
/// sidecar without adds.
fn check_roots(metadata: &ArrowReaderMetadata, path: &str, adds_only: bool) -> Result<()> {
    for root in NON_FILE_ROOTS.iter().chain(&["add"]) {
        if let Ok(f) = metadata.schema().field_with_name(root)
            && !matches!(f.data_type(), DataType::Struct(_))
        {
            return Err(schema_err(
                path,
                root,
                format!("expected a struct, found {}", f.data_type()),
            ));
        }
    }
    let has_add = metadata.schema().field_with_name("add").is_ok();
    if adds_only && !has_add {
        return Err(LogError::CheckpointSchema {
            path: path.to_string(),
            column: "add".into(),
            detail: "sidecar has no add column".into(),
        });
    }
    Ok(())
}

/// What one row range of a checkpoint file holds.
struct Piece {
    /// Its non-file actions and sidecar references.
    file: FileContent,
    /// Its live adds, each batch with the rows in the file they came from
    /// and the key hash of each.
    adds: Vec<(AddColumns, UInt32Array, Vec<u64>)>,
}

/// Decodes the rows `range` of a checkpoint file held in `main` (its
/// footer `metadata`, projected on `mask`): the non-file actions, and the
/// adds, with whether every path is a plain relative name noted (no later
/// step checks one again) and those newer commits removed dropped.
fn decode_piece(
    path: &str,
    (main, metadata, mask): (&Arc<Chunks>, &ArrowReaderMetadata, &ProjectionMask),
    range: std::ops::Range<usize>,
    live: &Live,
) -> Result<Piece> {
    let pq_err = |source| LogError::CheckpointParquet {
        path: path.to_string(),
        source,
    };
    let reader = chunks::reader(main, metadata, mask, range.clone()).map_err(pq_err)?;
    let mut file = FileContent::default();
    let mut adds = Vec::new();
    // The piece's paths, gathered batch by batch as they decode (each
    // batch's own array released at once) and shared by its batches at
    // the end: the decoded batches' arrays do not stay live beside the
    // file index's copy of them.
    let mut paths = StringConcat::expecting(range.len(), format!("add.path of checkpoint {path}"));
    let mut first_row = u32::try_from(range.start).unwrap_or(u32::MAX);
    for batch in reader {
        let batch = batch.map_err(|e| pq_err(e.into()))?;
        non_file_actions(path, &batch, &mut file.content, &mut file.sidecars)?;
        if let Some(col) = batch.column_by_name("add") {
            let (mut a, mut rows) = add_columns(path, col, first_row)?;
            a.plain_paths = a.path.iter().flatten().all(is_plain_relative);
            if let Some(keep) = a.live_mask(&live.removed, &live.paths)? {
                a = a.filter(&keep)?;
                rows = arrow_select::filter::filter(&rows, &keep)
                    .map_err(|e| LogError::arrow("filtering checkpoint rows", e))?
                    .as_primitive()
                    .clone();
            }
            if !a.is_empty() {
                let hashes = live
                    .hasher
                    .hashes(&live.paths, &a.path, &a.dv, a.plain_paths)?;
                paths.push(std::mem::replace(&mut a.path, StringArray::new_null(0)))?;
                adds.push((a, rows, hashes));
            }
        }
        if let Some(col) = batch.column_by_name("remove")
            && let Some((p, dv)) = remove_keys(path, col)?
        {
            let hashes = live.hasher.hashes(&live.paths, &p, &dv, false)?;
            file.removes.push((p, dv, hashes));
        }
        let n = u32::try_from(batch.num_rows()).unwrap_or(u32::MAX);
        first_row = first_row.saturating_add(n);
    }
    let paths = paths.finish()?;
    let lens: Vec<usize> = adds.iter().map(|(_, rows, _)| rows.len()).collect();
    share_paths(adds.iter_mut().map(|(a, _, _)| a), lens, &paths);
    Ok(Piece { file, adds })
}

/// A decoding thread or task of `path` that failed (`why`: it panicked,
/// or was cancelled), as an error naming the file.
pub(crate) fn decoding_failed(path: &str, why: impl std::fmt::Display) -> LogError {
    LogError::CheckpointParquet {
        path: path.to_string(),
        source: parquet::errors::ParquetError::General(format!("decoding failed: {why}")),
    }
}

/// Decode the non-file action rows of a batch through the commit parser.
fn non_file_actions(
    path: &str,
    batch: &RecordBatch,
    out: &mut CheckpointContent,
    sidecars: &mut Vec<SidecarLine>,
) -> Result<()> {
    for root in NON_FILE_ROOTS {
        let Some(col) = batch.column_by_name(root) else {
            continue;
        };
        if col.null_count() == col.len() {
            continue;
        }
        let mask = arrow_arith::boolean::is_not_null(col.as_ref())
            .map_err(|e| LogError::arrow("filtering checkpoint rows", e))?;
        let rows = arrow_select::filter::filter(col.as_ref(), &mask)
            .map_err(|e| LogError::arrow("filtering checkpoint rows", e))?;
        let schema = Arc::new(Schema::new(vec![Field::new(
            root,
            rows.data_type().clone(),
            true,
        )]));
        let one = RecordBatch::try_new(schema, vec![rows])
            .map_err(|e| LogError::arrow("checkpoint rows", e))?;
        let mut w = arrow_json::LineDelimitedWriter::new(Vec::new());
        w.write(&one)
            .map_err(|e| LogError::arrow("checkpoint rows to JSON", e))?;
        w.finish()
            .map_err(|e| LogError::arrow("checkpoint rows to JSON", e))?;
        let json = w.into_inner();
        parse_actions(path, &json, |_, action| {
            absorb(out, sidecars, action);
            Ok(())
        })
        .map_err(|e| match e {
            LogError::MalformedJson { source, .. } => LogError::CheckpointSchema {
                path: path.to_string(),
                column: root.to_string(),
                detail: source.to_string(),
            },
            other => other,
        })?;
    }
    Ok(())
}
