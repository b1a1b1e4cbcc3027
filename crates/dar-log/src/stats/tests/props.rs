//! Property tests of the stats builder.

use proptest::prelude::*;

use super::*;

proptest! {
    /// Arbitrary text never panics the builder; rows stay aligned.
    #[test]
    fn arbitrary_stats_text_never_panics(texts in proptest::collection::vec(
        prop_oneof![
            "\\PC{0,40}",
            r#"\{"(numRecords|minValues|maxValues|nullCount|tightBounds)":[-0-9.eE"a-z{}\[\],:\\]{0,30}\}"#,
        ],
        0..8,
    )) {
        let mut b = StatsBuilder::new(all_types());
        for t in &texts {
            b.push_json(Some(t));
        }
        let stats = b.finish().unwrap();
        prop_assert_eq!(stats.len(), texts.len());
        for c in &stats.columns {
            prop_assert_eq!(c.null_count.len(), texts.len());
            if let Some(m) = &c.min_values {
                prop_assert_eq!(m.len(), texts.len());
            }
        }
    }

    /// Values written the way Delta-Spark writes stats parse back exactly.
    #[test]
    fn spark_stats_round_trip(
        long in any::<i64>(),
        double in any::<f64>().prop_filter("finite", |d| d.is_finite()),
        unscaled in -(10i128.pow(20) - 1)..10i128.pow(20),
        millis in -30_000_000_000_000i64..250_000_000_000_000,
        offset_minutes in -14 * 60i64..=14 * 60,
    ) {
        let cols = columns(json!([
            {"name": "l", "type": "long"},
            {"name": "d", "type": "double"},
            {"name": "dec", "type": "decimal(20,10)"},
            {"name": "ts", "type": "timestamp"},
        ]));
        let digits = unscaled.unsigned_abs().to_string();
        let padded = format!("{digits:0>11}");
        let (int, frac) = padded.split_at(padded.len() - 10);
        let sign = if unscaled < 0 { "-" } else { "" };
        let offset = chrono::FixedOffset::east_opt((offset_minutes * 60) as i32).unwrap();
        let ts = chrono::DateTime::from_timestamp_millis(millis).unwrap().with_timezone(&offset);
        let text = format!(
            r#"{{"numRecords":1,"minValues":{{"l":{long},"d":{double:?},"dec":{sign}{int}.{frac}}},"maxValues":{{"ts":"{}"}}}}"#,
            ts.format("%Y-%m-%dT%H:%M:%S%.3f%:z")
        );
        let mut b = StatsBuilder::new(cols);
        b.push_json(Some(&text));
        let stats = b.finish().unwrap();
        prop_assert_eq!(min(&stats, "l").as_primitive::<Int64Type>().value(0), long);
        prop_assert_eq!(min(&stats, "d").as_primitive::<Float64Type>().value(0), double);
        prop_assert_eq!(min(&stats, "dec").as_primitive::<Decimal128Type>().value(0), unscaled, "{}", text);
        prop_assert_eq!(
            max(&stats, "ts").as_primitive::<TimestampMicrosecondType>().value(0),
            millis * 1000
        );
    }
}
