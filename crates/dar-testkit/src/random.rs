//! Seeded random tables for equivalence tests: a reader's result must equal
//! [`TableWriter::snapshot_rows`] (up to row order).
//!
//! One seed picks everything: how many appends and rows, each file's layout
//! (row groups of 1-20 rows, pages of 1-8 rows, page index, dictionary,
//! codec), nulls in every nullable column, strings longer than the stats
//! prefix, partition values needing escapes (and null), DV deletes (inline,
//! in DV files, merged with earlier DVs), a removed file, a checkpoint in
//! the middle and, optionally, column mapping.
//!
//! ```
//! use std::sync::Arc;
//! use dar_testkit::random::{RandomTableOptions, write_random_table};
//! use object_store::{memory::InMemory, path::Path};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), dar_testkit::TestkitError> {
//! let table = write_random_table(Arc::new(InMemory::new()), Path::from("r"), 7, &RandomTableOptions::default()).await?;
//! let expected = table.snapshot_rows()?;
//! assert_eq!(expected.num_rows() as u64, table.live_rows());
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use object_store::ObjectStore;
use object_store::path::Path;

use crate::error::{Result, TestkitError};
use crate::naming::Ids;
use crate::{Codec, ColumnMappingMode, DvStorage, ParquetOptions, TableWriter};

/// What a random table may contain. Defaults: up to 4 appends of up to 60
/// rows, partitioned by `p`, DVs, a checkpoint, removes, no column mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RandomTableOptions {
    appends: usize,
    max_rows: usize,
    partitioned: bool,
    deletion_vectors: bool,
    checkpoint: bool,
    removes: bool,
    column_mapping: bool,
}

impl Default for RandomTableOptions {
    fn default() -> Self {
        Self {
            appends: 4,
            max_rows: 60,
            partitioned: true,
            deletion_vectors: true,
            checkpoint: true,
            removes: true,
            column_mapping: false,
        }
    }
}

impl RandomTableOptions {
    /// At most this many appends (at least 1 is made).
    pub fn with_appends(mut self, appends: usize) -> Self {
        self.appends = appends.max(1);
        self
    }

    /// At most this many rows per append (at least 1).
    pub fn with_max_rows(mut self, rows: usize) -> Self {
        self.max_rows = rows.max(1);
        self
    }

    /// Partition by `p` (otherwise `p` is a plain column).
    pub fn with_partitioned(mut self, on: bool) -> Self {
        self.partitioned = on;
        self
    }

    /// Delete rows through DVs.
    pub fn with_deletion_vectors(mut self, on: bool) -> Self {
        self.deletion_vectors = on;
        self
    }

    /// Write a checkpoint after the middle append.
    pub fn with_checkpoint(mut self, on: bool) -> Self {
        self.checkpoint = on;
        self
    }

    /// Sometimes remove a whole file.
    pub fn with_removes(mut self, on: bool) -> Self {
        self.removes = on;
        self
    }

    /// Let the seed pick a column mapping mode (none, name or id).
    pub fn with_column_mapping(mut self, on: bool) -> Self {
        self.column_mapping = on;
        self
    }
}

/// The schema of random tables: every nullable except `id` (unique,
/// increasing); `p` is the partition column when partitioned.
pub fn random_schema() -> SchemaRef {
    let st = Fields::from(vec![
        Field::new("x", DataType::Int32, true),
        Field::new("y", DataType::Utf8, true),
    ]);
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("i", DataType::Int32, true),
        Field::new("l", DataType::Int64, true),
        Field::new("d", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("dt", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("dec", DataType::Decimal128(9, 2), true),
        Field::new("st", DataType::Struct(st), true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

/// Writes a random table for `seed` at `root` (which must be empty) and
/// returns its writer, which keeps the rows ([`TableWriter::snapshot_rows`]).
pub async fn write_random_table(
    store: Arc<dyn ObjectStore>,
    root: Path,
    seed: u64,
    options: &RandomTableOptions,
) -> Result<TableWriter> {
    let mut rng = Rng(Ids::new(seed ^ 0x5EED));
    let mapping = match (options.column_mapping, rng.below(3)) {
        (false, _) | (true, 0) => ColumnMappingMode::None,
        (true, 1) => ColumnMappingMode::Name,
        (true, _) => ColumnMappingMode::Id,
    };
    let mut builder = TableWriter::builder(store, root, random_schema())
        .with_seed(seed)
        .with_column_mapping(mapping)
        .with_deletion_vectors(options.deletion_vectors)
        .with_kept_rows(true);
    if options.partitioned {
        builder = builder.with_partition_columns(["p"]);
    }
    let mut table = builder.create().await?;
    let appends = 1 + rng.below(options.appends as u64) as usize;
    let mut next_id = 0i64;
    for append in 0..appends {
        table.set_parquet_options(random_layout(&mut rng));
        let rows = 1 + rng.below(options.max_rows as u64) as usize;
        let batch =
            random_batch(&mut rng, next_id, rows).map_err(TestkitError::arrow("random batch"))?;
        next_id += rows as i64;
        table.append(&batch).await?;
        if options.deletion_vectors && rng.below(2) == 0 {
            random_delete(&mut rng, &mut table).await?;
        }
        if options.removes && table.files().count() > 1 && rng.below(5) == 0 {
            let paths: Vec<String> = table.files().map(|f| f.path.clone()).collect();
            let victim = &paths[rng.below(paths.len() as u64) as usize];
            table.remove_files(&[victim]).await?;
        }
        if options.checkpoint && append == appends / 2 {
            table.checkpoint().await?;
        }
    }
    Ok(table)
}

struct Rng(Ids);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.0.next_u64() % n }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn random_layout(rng: &mut Rng) -> ParquetOptions {
    let codec = [Codec::Snappy, Codec::Zstd, Codec::Uncompressed][rng.below(3) as usize];
    ParquetOptions::default()
        .with_row_group_rows(1 + rng.below(20) as usize)
        .with_page_rows(1 + rng.below(8) as usize)
        .with_page_index(rng.below(4) != 0)
        .with_dictionary(rng.below(2) == 0)
        .with_codec(codec)
}

async fn random_delete(rng: &mut Rng, table: &mut TableWriter) -> Result<()> {
    let files: Vec<(String, u64)> = table
        .files()
        .map(|f| (f.path.clone(), f.num_records))
        .collect();
    let (path, rows) = &files[rng.below(files.len() as u64) as usize];
    let count = 1 + rng.below((*rows).min(5));
    let deleted: Vec<u64> = (0..count).map(|_| rng.below(*rows)).collect();
    let storage = match rng.below(3) {
        0 => DvStorage::Inline,
        1 => DvStorage::File,
        _ => DvStorage::FileWithPrefix("dv".into()),
    };
    table.delete_rows(path, &deleted, storage).await?;
    Ok(())
}

fn random_batch(
    rng: &mut Rng,
    first_id: i64,
    rows: usize,
) -> Result<RecordBatch, arrow_schema::ArrowError> {
    const WORDS: [&str; 6] = ["apple", "Banana", "cherry", "δelta", "", "zeta"];
    const PARTS: [&str; 3] = ["a", "b/c", "d e"];
    let schema = random_schema();
    let mut col = |percent_null: u64, f: &mut dyn FnMut(&mut Rng) -> i64| -> Vec<Option<i64>> {
        (0..rows)
            .map(|_| {
                if rng.chance(percent_null) {
                    None
                } else {
                    Some(f(rng))
                }
            })
            .collect()
    };
    let i = col(15, &mut |r| r.below(101) as i64 - 50);
    let l = col(10, &mut |r| r.below(1 << 40) as i64 - (1 << 39));
    let d = col(10, &mut |r| r.below(400) as i64 - 200);
    let s = col(15, &mut |r| r.below(8) as i64);
    let b = col(20, &mut |r| r.below(2) as i64);
    let dt = col(10, &mut |r| 19_000 + r.below(60) as i64);
    let ts = col(10, &mut |r| {
        1_700_000_000_000_000 + r.below(10_000_000_000) as i64
    });
    let dec = col(10, &mut |r| r.below(2_000_000) as i64 - 1_000_000);
    let x = col(15, &mut |r| r.below(10) as i64);
    let y = col(15, &mut |r| r.below(6) as i64);
    let p = col(15, &mut |r| r.below(3) as i64);
    let st_valid: Vec<bool> = (0..rows).map(|_| !rng.chance(10)).collect();
    let word = |v: i64| match v {
        // Longer than the 32-character stats prefix (ASCII, and with a
        // two-byte character right at the cut).
        6 => "long-shared-prefix-for-truncation-6".to_owned(),
        7 => format!("{}é-7", "x".repeat(31)),
        v => WORDS[v as usize].to_owned(),
    };
    let st_fields = match schema.field(9).data_type() {
        DataType::Struct(fields) => fields.clone(),
        _ => {
            return Err(arrow_schema::ArrowError::SchemaError(
                "st is a struct".into(),
            ));
        }
    };
    let st = StructArray::try_new(
        st_fields,
        vec![
            Arc::new(Int32Array::from_iter(x.iter().map(|v| v.map(|v| v as i32)))) as ArrayRef,
            Arc::new(StringArray::from_iter(
                y.iter().map(|v| v.map(|v| WORDS[v as usize])),
            )),
        ],
        Some(st_valid.into()),
    )?;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(
            first_id..first_id + rows as i64,
        )),
        Arc::new(Int32Array::from_iter(i.iter().map(|v| v.map(|v| v as i32)))),
        Arc::new(Int64Array::from(l)),
        Arc::new(Float64Array::from_iter(
            d.iter().map(|v| v.map(|v| v as f64 / 4.0)),
        )),
        Arc::new(StringArray::from_iter(s.iter().map(|v| v.map(word)))),
        Arc::new(BooleanArray::from_iter(b.iter().map(|v| v.map(|v| v == 1)))),
        Arc::new(Date32Array::from_iter(
            dt.iter().map(|v| v.map(|v| v as i32)),
        )),
        Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
        Arc::new(
            Decimal128Array::from_iter(dec.iter().map(|v| v.map(i128::from)))
                .with_precision_and_scale(9, 2)?,
        ),
        Arc::new(st),
        Arc::new(StringArray::from_iter(
            p.iter().map(|v| v.map(|v| PARTS[v as usize])),
        )),
    ];
    RecordBatch::try_new(schema, columns)
}
