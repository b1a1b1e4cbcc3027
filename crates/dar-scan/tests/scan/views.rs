//! `ScanBuilder::with_view_types`: strings and binaries come out as
//! `Utf8View` / `BinaryView` at every depth, with the same rows as the
//! classic types: decoded columns, partition constants, column mapping,
//! schema evolution (on the shared tables), the row filter and residual conjuncts on view columns.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, MapBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use dar_scan::{Table, view_type};
use dar_testkit::ColumnMappingMode;
use dar_testkit::TableWriter;
use futures::TryStreamExt;
use object_store::ObjectStore;
use object_store::memory::InMemory;

use crate::common::{collect, int64s, rows};

/// `id`, `s` (string), `b` (binary), `st` (struct of a string), `l` (list
/// of strings), `m` (map of strings) and `p` (string partition column), in
/// two files (one per partition value); with column mapping `mode`.
async fn table(mode: ColumnMappingMode) -> Table {
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let st_fields = Fields::from(vec![Field::new("t", DataType::Utf8, true)]);
    let list_item = Arc::new(Field::new("element", DataType::Utf8, true));
    let mut m = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    let map_type = {
        let probe = m.finish();
        probe.data_type().clone()
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("s", DataType::Utf8, true),
        Field::new("b", DataType::Binary, true),
        Field::new("st", DataType::Struct(st_fields.clone()), true),
        Field::new("l", DataType::List(Arc::clone(&list_item)), true),
        Field::new("m", map_type, true),
        Field::new("p", DataType::Utf8, true),
    ]));
    let mut w = TableWriter::builder(
        Arc::clone(&store),
        object_store::path::Path::from("t"),
        Arc::clone(&schema),
    )
    .with_partition_columns(["p"])
    .with_column_mapping(mode)
    .create()
    .await
    .unwrap();
    for (part, ids) in [("north", 0..6i64), ("south", 6..10)] {
        let n = ids.clone().count();
        let text = |i: i64| (i % 3 != 2).then(|| format!("s{i:02}"));
        let mut l = ListBuilder::new(StringBuilder::new()).with_field(Arc::clone(&list_item));
        for i in ids.clone() {
            if i % 4 == 3 {
                l.append_null();
            } else {
                l.values().append_value(format!("a{i}"));
                l.values().append_null();
                l.append(true);
            }
        }
        for i in ids.clone() {
            m.keys().append_value(format!("k{i}"));
            m.values().append_option(text(i));
            m.append(i % 5 != 4).unwrap();
        }
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from_iter_values(ids.clone())),
                Arc::new(StringArray::from_iter(ids.clone().map(text))),
                Arc::new(BinaryArray::from_iter(
                    ids.clone()
                        .map(|i| (i % 2 == 0).then(|| vec![0xff, i as u8])),
                )),
                Arc::new(StructArray::new(
                    st_fields.clone(),
                    vec![Arc::new(StringArray::from_iter(
                        ids.clone().map(|i| text(i + 1)),
                    ))],
                    None,
                )),
                Arc::new(l.finish()),
                Arc::new(m.finish()),
                Arc::new(StringArray::from(vec![part; n])),
            ],
        )
        .unwrap();
        w.append(&batch).await.unwrap();
    }
    crate::common::table_over("memory://t", store).await
}

/// The batches of a scan of `t` with `filter`, views on or off.
async fn scan(t: &Table, filter: Option<&str>, views: bool) -> Vec<RecordBatch> {
    let mut b = t.scan().with_view_types(views);
    if let Some(f) = filter {
        b = b.with_predicate_sql(f);
    }
    collect(&b.build().unwrap()).await
}

#[tokio::test]
async fn every_byte_column_is_a_view_with_the_same_rows() {
    for mode in [
        ColumnMappingMode::None,
        ColumnMappingMode::Name,
        ColumnMappingMode::Id,
    ] {
        let t = table(mode).await;
        for filter in [
            None,
            // Row filter on a view column, then a residual on the struct.
            Some("s >= 's03' AND st.t IS NOT NULL"),
            Some("s IN ('s00', 's04', 's07') OR p = 'south'"),
            Some("s LIKE 's0%' AND p = 'north'"),
        ] {
            let classic = scan(&t, filter, false).await;
            let views = scan(&t, filter, true).await;
            assert_eq!(rows(&views), rows(&classic), "{mode:?} {filter:?}");
            assert!(!views.is_empty(), "{filter:?} matched nothing");
            for b in &views {
                for (f, c) in b.schema().fields().iter().zip(b.columns()) {
                    let classic_type = t
                        .schema()
                        .field_with_name(f.name())
                        .unwrap()
                        .data_type()
                        .clone();
                    assert_eq!(f.data_type(), &view_type(&classic_type), "{}", f.name());
                    assert_eq!(c.data_type(), f.data_type(), "{}", f.name());
                }
            }
        }
        // The values themselves, not only their rendering.
        let views = scan(&t, Some("id = 4"), true).await;
        let b = &views[0];
        assert_eq!(b.column(1).as_string_view().value(0), "s04");
        assert_eq!(b.column(2).as_binary_view().value(0), &[0xff, 4]);
        // `st.t` is the next id's text: none for 5.
        assert!(b.column(3).as_struct().column(0).is_null(0));
        let l = b.column(4).as_list::<i32>();
        assert_eq!(l.value(0).as_string_view().value(0), "a4");
        assert_eq!(b.column(6).as_string_view().value(0), "north");
    }
}

#[tokio::test]
async fn a_projection_of_struct_fields_and_the_change_feed_take_views() {
    let t = table(ColumnMappingMode::None).await;
    let plan = t
        .scan()
        .with_columns(["st.t", "id"])
        .with_predicate_sql("st.t = 's03'")
        .with_view_types(true)
        .build()
        .unwrap();
    assert_eq!(plan.schema().field(0).data_type(), &DataType::Utf8View);
    let got = collect(&plan).await;
    assert_eq!(int64s(&got, 1), vec![2]);
    assert_eq!(got[0].column(0).as_string_view().value(0), "s03");
}

/// Every shared table that dar reads, at its latest version: the same rows
/// with views as without, every byte column a view; and with a predicate
/// on its first top-level string column, the same rows again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_shared_table_reads_the_same_rows_as_views() {
    let Some(root) = dar_testdata::root() else {
        return;
    };
    let mut read = 0;
    let mut filtered = 0;
    for group in ["dat", "kernel", "kernel/partition_cm"] {
        for e in std::fs::read_dir(root.join(group)).unwrap() {
            let p = e.unwrap().path();
            let table = if group == "dat" { p.join("delta") } else { p };
            if !table.join("_delta_log").is_dir() {
                continue;
            }
            let uri = table.to_str().unwrap();
            let Ok(t) = Table::open(uri).await else {
                continue;
            };
            let Ok(classic) = t
                .scan()
                .build()
                .unwrap()
                .execute()
                .try_collect::<Vec<_>>()
                .await
            else {
                // Log-only tables (no data files) read neither way.
                continue;
            };
            let views = collect(&t.scan().with_view_types(true).build().unwrap()).await;
            assert_eq!(rows(&views), rows(&classic), "{uri}");
            for b in &views {
                for (f, c) in b.schema().fields().iter().zip(b.columns()) {
                    let want = view_type(t.schema().field_with_name(f.name()).unwrap().data_type());
                    assert_eq!(c.data_type(), &want, "{uri}: {}", f.name());
                }
            }
            read += 1;
            let string = t
                .schema()
                .fields()
                .iter()
                .find(|f| f.data_type() == &DataType::Utf8 && !f.name().contains(['.', '`', ' ']))
                .map(|f| f.name().clone());
            if let Some(name) = string {
                let filter = format!("{name} >= 'b' OR {name} IS NULL");
                let classic = scan(&t, Some(&filter), false).await;
                let views = scan(&t, Some(&filter), true).await;
                assert_eq!(rows(&views), rows(&classic), "{uri}: {filter}");
                filtered += 1;
            }
        }
    }
    assert!(read >= 35, "only {read} shared tables were read");
    assert!(filtered >= 10, "only {filtered} tables had a string column");
}
