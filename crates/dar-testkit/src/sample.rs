//! THE SAMPLE TABLE of the repository (`examples/data/sample`): a small
//! partitioned "trips" table that shows pruning and deletion vectors.
//!
//! ```text
//! version  what                                          files after
//!   0      create: partitioned by `day`, DVs enabled            0
//!   1      3 days x 80 rows (one file per day)                  3
//!   2      60 more rows for 2024-01-01 (a second file)          4
//!   3      DVs on the 01-01 and 01-02 files, one shared DV file 4
//!   4      an inline DV on the 01-03 file; checkpoint at 4      4
//!   5      70 rows for 2024-01-04                               5
//!   6      more deletes on the 01-01 file (DV merged)           5
//!   7      the second 01-01 file removed                        4
//! ```
//!
//! Files have 40-row row groups and 10-row pages; trips are in pickup
//! order within a file, so filters on `pickup_ts` or `trip_id` prune row
//! groups and pages. Regenerate with
//! `cargo run -p dar-testkit -- sample examples/data/sample`.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, RecordBatch,
    StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use object_store::ObjectStore;
use object_store::path::Path;

use crate::error::{Result, TestkitError};
use crate::{DvStorage, ParquetOptions, TableWriter};

/// The version of the sample's checkpoint.
pub const SAMPLE_CHECKPOINT_VERSION: u64 = 4;

/// What [`write_sample`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleSummary {
    /// The latest version (7).
    pub version: u64,
    /// Live data files.
    pub files: usize,
    /// Rows a reader must return.
    pub live_rows: u64,
    /// Rows of live files deleted by DVs.
    pub deleted_rows: u64,
}

/// Writes the sample table at `root` (which must be empty).
pub async fn write_sample(store: Arc<dyn ObjectStore>, root: Path) -> Result<SampleSummary> {
    let schema = trips_schema();
    let layout = ParquetOptions::default()
        .with_row_group_rows(40)
        .with_page_rows(10);
    let mut table = TableWriter::builder(store, root, schema.clone())
        .with_partition_columns(["day"])
        .with_deletion_vectors(true)
        .with_parquet_options(layout)
        .with_seed(20240101)
        .with_property("delta.checkpointInterval", "4")
        .create()
        .await?;
    let mut trips = Trips::new(schema);

    // v1: three days, one file each.
    let first = table
        .append(&trips.batch(&[(0, 80), (1, 80), (2, 80)])?)
        .await?;
    // v2: a second, later file for day 0.
    let second = table.append(&trips.batch(&[(0, 60)])?).await?;
    // v3: deletes in two files, both DVs in one shared DV file.
    let (day0, day1, day2) = (
        &first.added[0].path,
        &first.added[1].path,
        &first.added[2].path,
    );
    table
        .delete_rows_in(&[(day0, &[3, 4, 41]), (day1, &[0, 79])], DvStorage::File)
        .await?;
    // v4: an inline DV.
    table
        .delete_rows(day2, &[10, 11, 12], DvStorage::Inline)
        .await?;
    table.checkpoint().await?;
    // v5: after the checkpoint, a new day.
    table.append(&trips.batch(&[(3, 70)])?).await?;
    // v6: more deletes in a file that already has a DV (merged).
    table.delete_rows(day0, &[50, 51], DvStorage::File).await?;
    // v7: the second day-0 file is removed.
    table.remove_files(&[&second.added[0].path]).await?;

    let files: Vec<_> = table.files().collect();
    Ok(SampleSummary {
        version: table.version(),
        files: files.len(),
        live_rows: table.live_rows(),
        deleted_rows: files.iter().map(|f| f.num_records - f.live_rows()).sum(),
    })
}

/// The sample's logical schema.
pub fn trips_schema() -> SchemaRef {
    let payment = Fields::from(vec![
        Field::new("method", DataType::Utf8, true),
        Field::new("tip", DataType::Decimal128(6, 2), true),
    ]);
    Arc::new(Schema::new(vec![
        Field::new("trip_id", DataType::Int64, false),
        Field::new(
            "pickup_ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("vendor", DataType::Utf8, true),
        Field::new("passengers", DataType::Int32, true),
        Field::new("distance_km", DataType::Float64, true),
        Field::new("fare", DataType::Decimal128(8, 2), true),
        Field::new("payment", DataType::Struct(payment), true),
        Field::new("day", DataType::Date32, false),
    ]))
}

/// Deterministic trips: a xorshift generator, ids counting up, pickups in
/// time order within a day.
struct Trips {
    schema: SchemaRef,
    state: u64,
    next_id: i64,
}

impl Trips {
    fn new(schema: SchemaRef) -> Self {
        Self {
            schema,
            state: 0x2545_F491_4F6C_DD1D,
            next_id: 1,
        }
    }

    fn next(&mut self, below: u64) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state % below
    }

    /// `(day offset from 2024-01-01, rows)` per group.
    fn batch(&mut self, days: &[(i32, usize)]) -> Result<RecordBatch> {
        self.try_batch(days)
            .map_err(TestkitError::arrow("sample batch"))
    }

    fn try_batch(&mut self, days: &[(i32, usize)]) -> Result<RecordBatch, ArrowError> {
        const VENDORS: [&str; 4] = ["Lakeside Cabs", "Metro Taxi", "Northwind", "Zip Rides"];
        const METHODS: [&str; 3] = ["card", "cash", "wallet"];
        let (mut id, mut ts, mut vendor, mut passengers, mut distance, mut fare) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        let (mut method, mut tip, mut payment_valid, mut day) = (vec![], vec![], vec![], vec![]);
        for &(offset, rows) in days {
            let day_start_us = (1_704_067_200 + i64::from(offset) * 86_400) * 1_000_000;
            let mut at = day_start_us + 5 * 3_600 * 1_000_000;
            for _ in 0..rows {
                at += (60 + self.next(600) as i64) * 1_000_000 + self.next(1_000_000) as i64;
                id.push(self.next_id);
                self.next_id += 1;
                ts.push(at);
                vendor.push((self.next(20) != 0).then(|| VENDORS[self.next(4) as usize]));
                passengers.push((self.next(10) != 0).then(|| 1 + self.next(4) as i32));
                let km = (50 + self.next(3_000)) as f64 / 100.0;
                distance.push(Some(km));
                fare.push(Some(250 + (km * 180.0) as i128 + self.next(300) as i128));
                let paid = self.next(15) != 0;
                payment_valid.push(paid);
                method.push(paid.then(|| METHODS[self.next(3) as usize]));
                tip.push(paid.then(|| self.next(1_500) as i128));
                day.push(19_723 + offset);
            }
        }
        let payment_fields = match self.schema.field(6).data_type() {
            DataType::Struct(fields) => fields.clone(),
            other => {
                return Err(ArrowError::SchemaError(format!(
                    "payment is {other}, not a struct"
                )));
            }
        };
        let payment = StructArray::try_new(
            payment_fields,
            vec![
                Arc::new(StringArray::from(method)) as ArrayRef,
                Arc::new(Decimal128Array::from(tip).with_precision_and_scale(6, 2)?),
            ],
            Some(payment_valid.into()),
        )?;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(id)),
            Arc::new(TimestampMicrosecondArray::from(ts).with_timezone("UTC")),
            Arc::new(StringArray::from(vendor)),
            Arc::new(Int32Array::from(passengers)),
            Arc::new(Float64Array::from(distance)),
            Arc::new(Decimal128Array::from(fare).with_precision_and_scale(8, 2)?),
            Arc::new(payment),
            Arc::new(Date32Array::from(day)),
        ];
        RecordBatch::try_new(self.schema.clone(), columns)
    }
}
