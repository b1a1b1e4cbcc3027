//! Which leaf columns per-file statistics may cover (protocol §8.1, §12.5).

use std::collections::HashMap;

use super::mapping::ColumnMappingMode;
use super::types::{DataType, PrimitiveType, StructField, StructType, join_path};
use crate::error::{LogError, Result};

/// Table property: how many leading leaf columns get stats (`-1` = all).
pub const NUM_INDEXED_COLS_KEY: &str = "delta.dataSkippingNumIndexedCols";
/// Table property: an explicit, comma-separated list of columns with stats.
pub const STATS_COLUMNS_KEY: &str = "delta.dataSkippingStatsColumns";
/// Default of [`NUM_INDEXED_COLS_KEY`].
pub const DEFAULT_NUM_INDEXED_COLS: i64 = 32;

/// One leaf column that per-file stats may describe.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsColumn {
    /// Logical names from the top-level field down to the leaf.
    pub logical_path: Vec<String>,
    /// Physical names (the keys inside `minValues`/`maxValues`/`nullCount`).
    pub physical_path: Vec<String>,
    /// The leaf's current Delta type (arrays, maps and variants are leaves too).
    pub data_type: DataType,
    /// The types the leaf had before type widening (`delta.typeChanges`):
    /// files written then carry stats in one of them.
    pub earlier_types: Vec<PrimitiveType>,
}

impl StatsColumn {
    /// Whether `minValues`/`maxValues` exist for this type (only `nullCount`
    /// otherwise).
    pub fn has_min_max(&self) -> bool {
        self.data_type
            .as_primitive()
            .is_some_and(|p| p.has_min_max_stats())
    }

    /// Dot-joined logical path, for messages and lookups.
    pub fn logical_name(&self) -> String {
        join_path(&self.logical_path)
    }
}

/// Which columns writers collect stats for: `delta.dataSkippingStatsColumns`
/// when set, else the first `delta.dataSkippingNumIndexedCols` leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatsColumnsConfig {
    num_indexed_cols: i64,
    stats_columns: Option<Vec<Vec<String>>>,
}

impl Default for StatsColumnsConfig {
    fn default() -> Self {
        Self {
            num_indexed_cols: DEFAULT_NUM_INDEXED_COLS,
            stats_columns: None,
        }
    }
}

impl StatsColumnsConfig {
    /// Reads both properties from the table configuration. A value that does
    /// not parse is an error naming the property and the value.
    pub fn from_configuration(configuration: &HashMap<String, String>) -> Result<Self> {
        let mut config = Self::default();
        if let Some(value) = configuration.get(NUM_INDEXED_COLS_KEY) {
            let n = value
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= -1)
                .ok_or_else(|| LogError::InvalidTableProperty {
                    key: NUM_INDEXED_COLS_KEY.to_owned(),
                    value: value.clone(),
                })?;
            config = config.with_num_indexed_cols(n);
        }
        if let Some(value) = configuration.get(STATS_COLUMNS_KEY) {
            let columns =
                parse_column_list(value).ok_or_else(|| LogError::InvalidTableProperty {
                    key: STATS_COLUMNS_KEY.to_owned(),
                    value: value.clone(),
                })?;
            config = config.with_stats_columns(columns);
        }
        Ok(config)
    }

    /// Sets how many leading leaf columns have stats (`-1` = all).
    pub fn with_num_indexed_cols(mut self, n: i64) -> Self {
        self.num_indexed_cols = n;
        self
    }

    /// Sets an explicit list of logical column paths (a struct means all its
    /// leaves). It takes precedence over the leaf count.
    pub fn with_stats_columns(mut self, columns: Vec<Vec<String>>) -> Self {
        self.stats_columns = Some(columns);
        self
    }
}

/// Splits `a, b.c, \`d.e\`` into paths; backticks quote names, doubled
/// backticks escape one. `None` on an unterminated quote or an empty name.
fn parse_column_list(list: &str) -> Option<Vec<Vec<String>>> {
    let mut columns = Vec::new();
    let mut path = Vec::new();
    let mut name = String::new();
    let mut quoted = false;
    let mut chars = list.chars().peekable();
    let finish_name = |name: &mut String, path: &mut Vec<String>| -> Option<()> {
        let trimmed = name.trim();
        if trimmed.is_empty() {
            return None;
        }
        path.push(trimmed.to_owned());
        name.clear();
        Some(())
    };
    while let Some(c) = chars.next() {
        match c {
            '`' if quoted && chars.peek() == Some(&'`') => {
                chars.next();
                name.push('`');
            }
            '`' => quoted = !quoted,
            '.' if !quoted => finish_name(&mut name, &mut path)?,
            ',' if !quoted => {
                finish_name(&mut name, &mut path)?;
                columns.push(std::mem::take(&mut path));
            }
            c => name.push(c),
        }
    }
    if quoted {
        return None;
    }
    if !name.trim().is_empty() || !path.is_empty() {
        finish_name(&mut name, &mut path)?;
        columns.push(path);
    }
    Some(columns)
}

impl StructType {
    /// The leaf columns that per-file stats may describe, in schema order:
    /// partition columns (logical top-level names) excluded, `void` columns
    /// skipped (no writer stores them), then either the configured column
    /// list or the first `num_indexed_cols` leaves. Arrays, maps and variants
    /// count as one leaf each and carry only `nullCount`.
    pub fn stats_columns(
        &self,
        mode: ColumnMappingMode,
        partition_columns: &[String],
        config: &StatsColumnsConfig,
    ) -> Result<Vec<StatsColumn>> {
        let mut leaves = Vec::new();
        let mut logical = Vec::new();
        let mut physical = Vec::new();
        for field in &self.fields {
            if partition_columns
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&field.name))
            {
                continue;
            }
            logical.push(field.name.clone());
            physical.push(field.physical_name(mode)?.to_owned());
            collect_leaves(field, mode, &mut logical, &mut physical, &mut leaves)?;
            logical.pop();
            physical.pop();
        }
        let mut leaves = match &config.stats_columns {
            Some(wanted) => leaves
                .into_iter()
                .filter(|leaf| wanted.iter().any(|w| is_prefix_ci(w, &leaf.logical_path)))
                .collect(),
            None if config.num_indexed_cols < 0 => leaves,
            None => {
                let n = usize::try_from(config.num_indexed_cols).unwrap_or(usize::MAX);
                leaves.truncate(n);
                leaves
            }
        };
        // In `id` mode data is matched by field id, but the stats JSON is
        // keyed by physical name, which says which column only when no other
        // column ever had it. Delta generates `col-<uuid>` names, unique by
        // construction; any other physical name (tables converted from
        // Iceberg keep theirs) may have belonged to a dropped column whose
        // stats old files still carry, so those stats are not used.
        if mode == ColumnMappingMode::Id {
            leaves.retain(|leaf| leaf.physical_path.iter().all(|p| is_generated_name(p)));
        }
        Ok(leaves)
    }
}

/// `col-` and a UUID: the physical names Delta generates.
fn is_generated_name(name: &str) -> bool {
    name.strip_prefix("col-")
        .is_some_and(|rest| rest.len() == 36 && uuid_shaped(rest))
}

fn uuid_shaped(text: &str) -> bool {
    text.bytes().enumerate().all(|(i, b)| match i {
        8 | 13 | 18 | 23 => b == b'-',
        _ => b.is_ascii_hexdigit(),
    })
}

fn is_prefix_ci(prefix: &[String], path: &[String]) -> bool {
    prefix.len() <= path.len()
        && prefix
            .iter()
            .zip(path)
            .all(|(a, b)| a.eq_ignore_ascii_case(b))
}

fn collect_leaves(
    field: &StructField,
    mode: ColumnMappingMode,
    logical: &mut Vec<String>,
    physical: &mut Vec<String>,
    out: &mut Vec<StatsColumn>,
) -> Result<()> {
    match &field.data_type {
        DataType::Struct(s) => {
            for child in &s.fields {
                logical.push(child.name.clone());
                physical.push(child.physical_name(mode)?.to_owned());
                collect_leaves(child, mode, logical, physical, out)?;
                logical.pop();
                physical.pop();
            }
        }
        DataType::Primitive(PrimitiveType::Void) => {}
        other => out.push(StatsColumn {
            logical_path: logical.clone(),
            physical_path: physical.clone(),
            data_type: other.clone(),
            earlier_types: super::widening::earlier_types(field),
        }),
    }
    Ok(())
}

#[cfg(test)]
pub(super) fn parse_column_list_for_tests(list: &str) -> Option<Vec<Vec<String>>> {
    parse_column_list(list)
}
