//! The rule of what statistics may be used for (module `trust`): widened
//! float bounds from every source, impossible and self-contradicting
//! statistics, through JSON and `stats_parsed` alike.

use arrow_array::Float32Array;
use proptest::prelude::*;

use super::*;

/// A `double` column `x` that was a `float` (a `delta.typeChanges` entry).
fn widened_double() -> Vec<StatsColumn> {
    columns(json!([{
        "name": "x",
        "type": "double",
        "metadata": {"delta.typeChanges": [{"fromType": "float", "toType": "double"}]},
    }]))
}

/// A `stats_parsed` struct of one file with `numRecords` 1 and column `x`
/// bounded by `min` / `max` (arrays of one value, in any type).
fn parsed_bounds(min: ArrayRef, max: ArrayRef) -> StructArray {
    let mins = struct_of(vec![("x", min)], None);
    let maxs = struct_of(vec![("x", max)], None);
    StructArray::new(
        Fields::from(vec![
            Field::new("numRecords", A::Int64, true),
            Field::new("minValues", mins.data_type().clone(), true),
            Field::new("maxValues", maxs.data_type().clone(), true),
        ]),
        vec![Arc::new(Int64Array::from(vec![1])), mins, maxs],
        None,
    )
}

fn bounds(stats: &FileStats) -> (f64, f64) {
    let lo = min(stats, "x").as_primitive::<Float64Type>().value(0);
    let hi = max(stats, "x").as_primitive::<Float64Type>().value(0);
    (lo, hi)
}

/// The bounds of a file that holds the float `f`, written as its shortest
/// text, from each source: the JSON text, a `stats_parsed` written after
/// the widening (the text read as a double), and one written before (a
/// float leaf).
fn from_every_source(f: f32) -> Vec<(&'static str, (f64, f64))> {
    let text = format!("{f:?}");
    let json_stats = from_json(
        widened_double(),
        &format!(r#"{{"numRecords":1,"minValues":{{"x":{text}}},"maxValues":{{"x":{text}}}}}"#),
    );
    let as_double: f64 = text.parse().unwrap();
    let doubles = parsed_bounds(
        Arc::new(Float64Array::from(vec![as_double])),
        Arc::new(Float64Array::from(vec![as_double])),
    );
    let floats = parsed_bounds(
        Arc::new(Float32Array::from(vec![f])),
        Arc::new(Float32Array::from(vec![f])),
    );
    vec![
        ("json", bounds(&json_stats)),
        (
            "stats_parsed double",
            bounds(&from_parsed(widened_double(), &doubles)),
        ),
        (
            "stats_parsed float",
            bounds(&from_parsed(widened_double(), &floats)),
        ),
    ]
}

/// Issue 33 item 6: a checkpoint written after `float -> double` holds an
/// old file's bound `0.1` as the double 0.1, below the float
/// 0.100000001490116… the file holds: the bound must still bracket it, as
/// the JSON text's does.
#[test]
fn widened_float_bounds_bracket_the_float_from_every_source() {
    for f in [0.1f32, -0.1, 3.4, 1.0e-40, f32::MAX, 16_777_217.0, 0.0] {
        let held = f64::from(f);
        for (source, (lo, hi)) in from_every_source(f) {
            assert!(
                lo <= held && held <= hi,
                "{source}: {f:?} in [{lo:?}, {hi:?}]"
            );
            // And no looser than one float step.
            assert!(
                lo >= f64::from(f.next_down()),
                "{source}: {f:?}: min {lo:?}"
            );
            assert!(hi <= f64::from(f.next_up()), "{source}: {f:?}: max {hi:?}");
        }
    }
    // A column without a float in its history keeps its bounds exactly.
    let stats = from_json(
        columns(json!([{"name": "x", "type": "double"}])),
        r#"{"numRecords":1,"minValues":{"x":0.1},"maxValues":{"x":0.1}}"#,
    );
    assert_eq!(bounds(&stats), (0.1, 0.1));
}

/// One file per case, through JSON; the flag says whether the column's
/// statistics survive.
fn judged(cases: &[(&str, bool)]) -> FileStats {
    let cols = columns(json!([{"name": "i", "type": "long"}]));
    let mut b = StatsBuilder::new(cols);
    for (text, _) in cases {
        b.push_json(Some(text));
    }
    let stats = b.finish().unwrap();
    let c = stats.column("i").unwrap();
    let (lo, hi) = (min(&stats, "i"), max(&stats, "i"));
    for (row, (text, kept)) in cases.iter().enumerate() {
        assert_eq!(c.null_count.is_valid(row), *kept, "nullCount of {text}");
        let written = |key: &str| text.contains(&format!(r#""{key}":{{"i""#));
        assert_eq!(
            lo.is_valid(row),
            *kept && written("minValues"),
            "min of {text}"
        );
        assert_eq!(
            hi.is_valid(row),
            *kept && written("maxValues"),
            "max of {text}"
        );
    }
    stats
}

/// Issues 33 items 7 and 10: statistics that are impossible or contradict
/// themselves are read as unknown (never as an exact count or bound);
/// those the protocol allows are kept.
#[test]
fn impossible_and_contradictory_stats_are_unknown() {
    let cases = [
        // Sane.
        (
            r#"{"numRecords":3,"minValues":{"i":1},"maxValues":{"i":5},"nullCount":{"i":1}}"#,
            true,
        ),
        // Every value null, yet bounds.
        (
            r#"{"numRecords":3,"minValues":{"i":1},"maxValues":{"i":5},"nullCount":{"i":3}}"#,
            false,
        ),
        // The same with only a maximum.
        (
            r#"{"numRecords":3,"maxValues":{"i":5},"nullCount":{"i":3}}"#,
            false,
        ),
        // Under wide bounds the protocol allows it (every live row null).
        (
            r#"{"numRecords":3,"minValues":{"i":1},"maxValues":{"i":5},"nullCount":{"i":3},"tightBounds":false}"#,
            true,
        ),
        // More nulls than rows.
        (
            r#"{"numRecords":3,"minValues":{"i":1},"maxValues":{"i":5},"nullCount":{"i":4}}"#,
            false,
        ),
        // A negative null count.
        (
            r#"{"numRecords":3,"minValues":{"i":1},"maxValues":{"i":5},"nullCount":{"i":-1}}"#,
            false,
        ),
        // min > max.
        (
            r#"{"numRecords":3,"minValues":{"i":9},"maxValues":{"i":5},"nullCount":{"i":0}}"#,
            false,
        ),
        // A negative numRecords: the file has no statistics at all.
        (
            r#"{"numRecords":-3,"minValues":{"i":1},"maxValues":{"i":5},"nullCount":{"i":0}}"#,
            false,
        ),
        // All null and no bounds: sane.
        (r#"{"numRecords":3,"nullCount":{"i":3}}"#, true),
    ];
    let stats = judged(&cases);
    assert_eq!(stats.impossible, vec![7]);
    assert!(stats.num_records.is_null(7));
    assert_eq!(stats.num_records.value(0), 3);
    assert_eq!(stats.column("i").unwrap().contradictory, 6);

    // Finishing the finished statistics again (as a checkpoint's retained
    // parts are) changes and counts nothing.
    let mut again = StatsBuilder::new(columns(json!([{"name": "i", "type": "long"}])));
    again.extend_stats(stats.clone()).unwrap();
    let again = again.finish().unwrap();
    assert_eq!(again.impossible, vec![7]);
    assert_eq!(again.column("i").unwrap().contradictory, 6);
    assert_eq!(
        again.column("i").unwrap().null_count,
        stats.column("i").unwrap().null_count
    );
}

/// The same rule for a checkpoint's `stats_parsed`.
#[test]
fn contradictory_stats_parsed_are_unknown() {
    let cols = columns(json!([{"name": "i", "type": "long"}]));
    let mins = struct_of(vec![("i", Arc::new(Int64Array::from(vec![1, 1, 1])))], None);
    let maxs = struct_of(vec![("i", Arc::new(Int64Array::from(vec![5, 5, 5])))], None);
    let nulls = struct_of(vec![("i", Arc::new(Int64Array::from(vec![0, 2, 0])))], None);
    let parsed = StructArray::new(
        Fields::from(vec![
            Field::new("numRecords", A::Int64, true),
            Field::new("minValues", mins.data_type().clone(), true),
            Field::new("maxValues", maxs.data_type().clone(), true),
            Field::new("nullCount", nulls.data_type().clone(), true),
        ]),
        vec![
            Arc::new(Int64Array::from(vec![2, 2, -2])),
            mins,
            maxs,
            nulls,
        ],
        None,
    );
    let stats = from_parsed(cols, &parsed);
    let lo = min(&stats, "i");
    assert_eq!(
        (0..3).map(|r| lo.is_valid(r)).collect::<Vec<_>>(),
        [true, false, false]
    );
    assert_eq!(stats.impossible, vec![2]);
    assert!(stats.num_records.is_null(2));
}

proptest! {
    /// Issue 33 item 6, as a property: whatever float a file written
    /// before `float -> double` holds, the bounds read from any source
    /// bracket it, so pruning with them never drops its row. Files written
    /// after the widening hold doubles: their bounds only loosen, by at
    /// most one float step.
    #[test]
    fn widened_float_bounds_always_bracket_the_value(bits in any::<u32>(), d in any::<f64>()) {
        let f = f32::from_bits(bits);
        prop_assume!(f.is_finite());
        let held = f64::from(f);
        for (source, (lo, hi)) in from_every_source(f) {
            prop_assert!(lo <= held && held <= hi, "{}: {:?} in [{:?}, {:?}]", source, f, lo, hi);
        }
        prop_assume!(d.is_finite() && d.abs() < f64::from(f32::MAX));
        let stats = from_json(
            widened_double(),
            &format!(r#"{{"numRecords":1,"minValues":{{"x":{d:?}}},"maxValues":{{"x":{d:?}}}}}"#),
        );
        let (lo, hi) = bounds(&stats);
        prop_assert!(lo <= d && d <= hi);
        let near = d as f32;
        prop_assert!(lo >= f64::from(near.next_down()) && hi <= f64::from(near.next_up()));
    }
}
