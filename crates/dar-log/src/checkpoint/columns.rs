//! The projected `add` struct column of a checkpoint batch as raw
//! [`AddColumns`]: children cast to the expected types (a missing child is
//! all nulls; a child of another type is a schema error naming the file).

use std::sync::Arc;

use arrow_arith::boolean::{and, is_not_null, is_null};
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, MapArray, StringArray, StructArray, UInt32Array, new_null_array,
};
use arrow_schema::DataType;

use crate::add_columns::{AddColumns, AddStats, DvColumns};
use crate::error::{LogError, Result};

pub(super) fn schema_err(path: &str, column: &str, detail: impl Into<String>) -> LogError {
    LogError::CheckpointSchema {
        path: path.to_string(),
        column: column.to_string(),
        detail: detail.into(),
    }
}

/// Child `name` of `s` cast to `ty`, or all nulls when absent.
fn child(path: &str, s: &StructArray, name: &str, ty: &DataType) -> Result<ArrayRef> {
    match s.column_by_name(name) {
        None => Ok(new_null_array(ty, s.len())),
        Some(c) if c.data_type() == ty => Ok(Arc::clone(c)),
        Some(c) => arrow_cast::cast(c, ty)
            .map_err(|e| schema_err(path, name, format!("expected {ty}: {e}"))),
    }
}

fn string_child(path: &str, s: &StructArray, name: &str) -> Result<StringArray> {
    Ok(child(path, s, name, &DataType::Utf8)?
        .as_string::<i32>()
        .clone())
}

/// The `add` struct column of a checkpoint batch as raw columns (valid
/// rows only), and the row in the file of each (the batch starts at
/// `first_row`). Without stats leaves in the batch, the stats are all null.
pub(super) fn add_columns(
    path: &str,
    col: &ArrayRef,
    first_row: u32,
) -> Result<(AddColumns, UInt32Array)> {
    let s = col.as_struct_opt().ok_or_else(|| {
        schema_err(
            path,
            "add",
            format!("expected a struct, found {}", col.data_type()),
        )
    })?;
    let p = string_child(path, s, "path")?;
    let keep = is_not_null(s)
        .and_then(|a| and(&a, &is_not_null(&p)?))
        .map_err(|e| LogError::arrow("add rows", e))?;
    let int64 = |name: &str| -> Result<arrow_array::Int64Array> {
        Ok(child(path, s, name, &DataType::Int64)?
            .as_primitive()
            .clone())
    };
    let partition_values = match s.column_by_name("partitionValues") {
        Some(c) => c
            .as_map_opt()
            .cloned()
            .ok_or_else(|| schema_err(path, "add.partitionValues", "expected a map"))?,
        None => empty_maps(s.len())?,
    };
    let dv = dv_columns(path, s, "add.deletionVector")?;
    let struct_child = |name: &str| -> Result<Option<StructArray>> {
        match s.column_by_name(name) {
            None => Ok(None),
            Some(c) => c
                .as_struct_opt()
                .cloned()
                .map(Some)
                .ok_or_else(|| schema_err(path, &format!("add.{name}"), "expected a struct")),
        }
    };
    let all = AddColumns {
        path: p,
        partition_values,
        size: int64("size")?,
        modification_time: int64("modificationTime")?,
        stats: AddStats::Inline {
            json: string_child(path, s, "stats")?,
            parsed: struct_child("stats_parsed")?,
        },
        partition_values_parsed: struct_child("partitionValues_parsed")?,
        dv,
        plain_paths: false,
    };
    let n = u32::try_from(all.len()).unwrap_or(u32::MAX);
    if keep.true_count() == all.len() {
        let rows = (first_row..first_row.saturating_add(n)).collect();
        return Ok((all, rows));
    }
    let rows = keep
        .values()
        .set_indices()
        .map(|i| first_row.saturating_add(u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    Ok((all.filter(&keep)?, rows))
}

/// The deletion-vector descriptors of the `deletionVector` child of `s`
/// (`column` names it in errors); a null descriptor is no DV even if a
/// writer left its children set, and a missing child reads as nulls.
fn dv_columns(path: &str, s: &StructArray, column: &str) -> Result<DvColumns> {
    Ok(match s.column_by_name("deletionVector") {
        // No DV in the batch: nothing of the decoded columns is kept.
        Some(c) if c.null_count() == c.len() => DvColumns::absent(s.len()),
        Some(c) => {
            let d = c
                .as_struct_opt()
                .ok_or_else(|| schema_err(path, column, "expected a struct"))?;
            let absent = is_null(d).map_err(|e| LogError::arrow("dv", e))?;
            let nullify = |a: ArrayRef| -> Result<ArrayRef> {
                arrow_select::nullif::nullif(&a, &absent).map_err(|e| LogError::arrow("dv", e))
            };
            DvColumns {
                storage_type: nullify(Arc::new(string_child(path, d, "storageType")?))?
                    .as_string::<i32>()
                    .clone(),
                path_or_inline_dv: nullify(Arc::new(string_child(path, d, "pathOrInlineDv")?))?
                    .as_string::<i32>()
                    .clone(),
                offset: nullify(child(path, d, "offset", &DataType::Int32)?)?
                    .as_primitive()
                    .clone(),
                size_in_bytes: nullify(child(path, d, "sizeInBytes", &DataType::Int32)?)?
                    .as_primitive()
                    .clone(),
                cardinality: nullify(child(path, d, "cardinality", &DataType::Int64)?)?
                    .as_primitive()
                    .clone(),
            }
        }
        None => DvColumns::absent(s.len()),
    })
}

/// The keys of the `remove` rows of a checkpoint batch (its `remove`
/// struct column `col`): each valid row's path and DV, `None` when the
/// batch has none.
pub(super) fn remove_keys(path: &str, col: &ArrayRef) -> Result<Option<(StringArray, DvColumns)>> {
    if col.null_count() == col.len() {
        return Ok(None);
    }
    let s = col.as_struct_opt().ok_or_else(|| {
        schema_err(
            path,
            "remove",
            format!("expected a struct, found {}", col.data_type()),
        )
    })?;
    let p = string_child(path, s, "path")?;
    let dv = dv_columns(path, s, "remove.deletionVector")?;
    let keep = is_not_null(s)
        .and_then(|a| and(&a, &is_not_null(&p)?))
        .map_err(|e| LogError::arrow("remove rows", e))?;
    if keep.true_count() == 0 {
        return Ok(None);
    }
    let filter = |a: &dyn Array| {
        arrow_select::filter::filter(a, &keep).map_err(|e| LogError::arrow("remove rows", e))
    };
    let path_of = |a: ArrayRef| a.as_string::<i32>().clone();
    let dv = if dv.is_absent() {
        DvColumns::absent(keep.true_count())
    } else {
        DvColumns {
            storage_type: path_of(filter(&dv.storage_type)?),
            path_or_inline_dv: path_of(filter(&dv.path_or_inline_dv)?),
            offset: filter(&dv.offset)?.as_primitive().clone(),
            size_in_bytes: filter(&dv.size_in_bytes)?.as_primitive().clone(),
            cardinality: filter(&dv.cardinality)?.as_primitive().clone(),
        }
    };
    Ok(Some((path_of(filter(&p)?), dv)))
}

fn empty_maps(len: usize) -> Result<MapArray> {
    let mut b = arrow_array::builder::MapBuilder::new(
        None,
        arrow_array::builder::StringBuilder::new(),
        arrow_array::builder::StringBuilder::new(),
    );
    for _ in 0..len {
        b.append(true)
            .map_err(|e| LogError::arrow("partitionValues", e))?;
    }
    Ok(b.finish())
}
