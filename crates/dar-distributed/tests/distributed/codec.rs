//! `DeltaScanCodec` round-trips scans whose tasks carry arbitrary partition
//! values: NaN, ±Infinity and -0.0 doubles and floats, decimals of any
//! size, nulls, strings, bytes (the values that once failed on workers
//! with "invalid type: null, expected f64").

use std::sync::Arc;

use dar_datafusion::{DeltaScanExec, register_delta_table};
use dar_distributed::{DeltaScanCodec, WorkerStores};
use dar_io::StorageOptions;
use dar_prune::Scalar;
use dar_scan::Table;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
use proptest::prelude::*;
use serde_json::Value;

use crate::common::{encoded_scans, single, write_many_files};

/// Equality that treats NaN as equal to itself and tells -0.0 from 0.0.
fn same(a: &Scalar, b: &Scalar) -> bool {
    match (a, b) {
        (Scalar::Float32(x), Scalar::Float32(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Scalar::Float64(x), Scalar::Float64(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

fn special_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.0),
        any::<f64>(),
    ]
}

fn special_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(f32::NAN),
        Just(f32::INFINITY),
        Just(f32::NEG_INFINITY),
        Just(-0.0f32),
        any::<f32>(),
    ]
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop_oneof![
        Just(Scalar::Null),
        any::<bool>().prop_map(Scalar::Boolean),
        any::<i8>().prop_map(Scalar::Int8),
        any::<i16>().prop_map(Scalar::Int16),
        any::<i32>().prop_map(Scalar::Int32),
        any::<i64>().prop_map(Scalar::Int64),
        special_f32().prop_map(Scalar::Float32),
        special_f64().prop_map(Scalar::Float64),
        (any::<i128>(), 1u8..=38, -10i8..=38).prop_map(|(value, precision, scale)| {
            Scalar::Decimal128 {
                value,
                precision,
                scale,
            }
        }),
        ".*".prop_map(Scalar::Utf8),
        proptest::collection::vec(any::<u8>(), 0..16).prop_map(Scalar::Binary),
        any::<i32>().prop_map(Scalar::Date32),
        any::<i64>().prop_map(Scalar::Timestamp),
        any::<i64>().prop_map(Scalar::TimestampNtz),
    ]
}

/// Partition values of one task.
type Values = Vec<(String, Scalar)>;

/// Partitions of tasks, each task its partition values.
fn groups() -> impl Strategy<Value = Vec<Vec<Values>>> {
    let values = proptest::collection::vec(("[a-z]{1,8}", scalar()), 0..6);
    proptest::collection::vec(proptest::collection::vec(values, 0..4), 1..4)
}

/// The encoded scan of a real two-file table, as JSON (the template whose
/// tasks the property replaces), the codec of a worker for it, and the
/// table's directory.
fn template() -> (Value, DeltaScanCodec, tempfile::TempDir) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bytes = runtime.block_on(async {
        let many = write_many_files(dir.path(), 2, 3).await;
        let ctx = single();
        register_delta_table(&ctx, "many", Table::open(&many).await.unwrap()).unwrap();
        let plan = ctx
            .sql("SELECT * FROM many")
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        encoded_scans(&plan).remove(0)
    });
    let codec = DeltaScanCodec::new(Arc::new(WorkerStores::new(
        "worker test",
        StorageOptions::new(),
    )));
    (serde_json::from_slice(&bytes).unwrap(), codec, dir)
}

fn decode(codec: &DeltaScanCodec, bytes: &[u8]) -> Arc<dyn ExecutionPlan> {
    codec
        .try_decode(
            bytes,
            &[],
            &TaskContext::default(),
            &DefaultPhysicalProtoConverter {},
        )
        .unwrap()
}

fn encode(codec: &DeltaScanCodec, plan: Arc<dyn ExecutionPlan>) -> Vec<u8> {
    let mut buf = Vec::new();
    codec
        .try_encode(plan, &mut buf, &DefaultPhysicalProtoConverter {})
        .unwrap();
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn scans_with_any_partition_values_round_trip(groups in groups()) {
        thread_local! {
            static TEMPLATE: (Value, DeltaScanCodec, tempfile::TempDir) = template();
        }
        TEMPLATE.with(|(template, codec, _dir)| {
            let task = template["partitions"]
                .as_array()
                .and_then(|p| p.iter().flat_map(|g| g.as_array()).flatten().next())
                .cloned()
                .unwrap();
            let mut scan = template.clone();
            scan["partitions"] = Value::Array(
                groups
                    .iter()
                    .map(|group| {
                        Value::Array(
                            group
                                .iter()
                                .map(|values| {
                                    let mut t = task.clone();
                                    t["partition_values"] = serde_json::to_value(values).unwrap();
                                    t
                                })
                                .collect(),
                        )
                    })
                    .collect(),
            );
            let bytes = serde_json::to_vec(&scan).unwrap();

            let decoded = decode(codec, &bytes);
            let exec = decoded.downcast_ref::<DeltaScanExec>().unwrap();
            let got: Vec<Vec<&Values>> = exec
                .file_groups()
                .iter()
                .map(|g| g.iter().map(|t| &t.partition_values).collect())
                .collect();
            prop_assert_eq!(got.len(), groups.len());
            for (got, want) in got.iter().zip(&groups) {
                prop_assert_eq!(got.len(), want.len());
                for (got, want) in got.iter().zip(want) {
                    prop_assert_eq!(got.len(), want.len());
                    for ((gn, gv), (wn, wv)) in got.iter().zip(want) {
                        prop_assert_eq!(gn, wn);
                        prop_assert!(same(gv, wv), "{gv:?} came back for {wv:?}");
                    }
                }
            }

            // Encoding what was decoded gives the same bytes again.
            let again = encode(codec, Arc::clone(&decoded));
            let twice = encode(codec, decode(codec, &again));
            prop_assert_eq!(again, twice);
            Ok(())
        })?;
    }
}
