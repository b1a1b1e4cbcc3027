//! A Parquet footer, and each column's page index, checked before parquet
//! decodes them ([`crate::thrift_walk`] over the structures of
//! [`crate::footer_types`]):
//!
//! - every length they claim fits in their bytes: parquet sized vectors by
//!   such claims (2^31-1 row groups in a 1 KB footer, 2^31-1 page
//!   locations, 2^31-1 children of a schema group) and the failed
//!   allocation aborted the process;
//! - a schema group claims no more children than schema elements follow
//!   it, and the schema nests at most [`MAX_SCHEMA_DEPTH`] levels: parquet
//!   builds and converts the schema tree recursively, and a 50 KB footer
//!   nesting 5,000 groups overflowed the thread's stack.
//!
//! ```text
//! FileMetaData { 1: i32 version, 2: list<SchemaElement> schema, ... }
//! SchemaElement { ..., 4: string name, 5: i32 num_children, ... }
//! ```
//!
//! The schema is a flat list in depth-first order, each group giving its
//! number of children; the depth is the height of the stack of groups
//! still open.

use std::ops::Range;

use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

use crate::footer_types::{
    COLUMN_INDEX, FILE_META_DATA, NUM_CHILDREN, OFFSET_INDEX, SCHEMA_ELEMENT,
};
use crate::thrift_walk::{Def, NoVisit, Refusal, Ty, Visit, Walk, walk_struct};

/// The deepest schema nesting accepted (root = 1). Spark's and every other
/// writer's real schemas stay far below it.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// The schema as the footer's walk meets it.
#[derive(Default)]
struct Schema {
    /// Elements in the schema list.
    size: u64,
    /// Elements seen.
    index: u64,
    /// `num_children` of the element being read.
    children: i64,
    /// Children each open group still waits for.
    open: Vec<u64>,
    deepest: usize,
}

fn is_schema_element(def: &Def) -> bool {
    def.name == SCHEMA_ELEMENT.name
}

impl Visit for Schema {
    fn list(&mut self, elem: Ty, size: u64) -> Walk<()> {
        if let Ty::Struct(def) = elem
            && is_schema_element(def)
        {
            // parquet keeps the last schema list of a footer with two.
            self.size = size;
            self.index = 0;
            self.open.clear();
        }
        Ok(())
    }

    fn int(&mut self, def: &'static Def, id: i16, value: i64) -> Walk<()> {
        if is_schema_element(def) && id == NUM_CHILDREN {
            // parquet reads an i32 as the low 32 bits of the varint.
            self.children = i64::from(value as i32);
        }
        Ok(())
    }

    fn end(&mut self, def: &'static Def) -> Walk<()> {
        if !is_schema_element(def) {
            return Ok(());
        }
        let children = std::mem::take(&mut self.children);
        let left = self.size.saturating_sub(self.index + 1);
        if children > 0 && children as u64 > left {
            return Err(Refusal::Children {
                element: self.index,
                claimed: children,
                left,
            });
        }
        self.index += 1;
        // This element fills one slot of the innermost open group.
        while self.open.last() == Some(&0) {
            self.open.pop();
        }
        if let Some(top) = self.open.last_mut() {
            *top -= 1;
        }
        if children > 0 {
            self.open.push(children as u64);
            self.deepest = self.deepest.max(self.open.len());
            if self.deepest > MAX_SCHEMA_DEPTH {
                return Err(Refusal::TooDeep(self.deepest));
            }
        }
        Ok(())
    }
}

/// Checks the footer `bytes` (the Thrift `FileMetaData`, without the
/// trailing length and magic); returns how deep its schema nests.
pub(crate) fn check_footer(bytes: &[u8]) -> Walk<usize> {
    let mut schema = Schema::default();
    walk_struct(bytes, &FILE_META_DATA, &mut schema)?;
    Ok(schema.deepest.max(1))
}

/// Checks the bytes of one column chunk's column index.
pub(crate) fn check_column_index(bytes: &[u8]) -> Walk<()> {
    walk_struct(bytes, &COLUMN_INDEX, &mut NoVisit)
}

/// Checks the bytes of one column chunk's offset index.
pub(crate) fn check_offset_index(bytes: &[u8]) -> Walk<()> {
    walk_struct(bytes, &OFFSET_INDEX, &mut NoVisit)
}

/// The page indexes a read asks for: column indexes, offset indexes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageIndexes {
    /// Column indexes (page statistics).
    pub(crate) columns: bool,
    /// Offset indexes (page locations).
    pub(crate) offsets: bool,
}

/// Where one column chunk's index lies, as parquet computes it from the
/// footer (a negative offset or length: none).
fn index_range(offset: Option<i64>, length: Option<i32>) -> Option<Range<u64>> {
    let offset = u64::try_from(offset?).ok()?;
    let length = u64::try_from(length?).ok()?;
    Some(offset..offset + length)
}

/// One page index: its kind, row group, column and byte range.
type IndexAt = (&'static str, usize, usize, Range<u64>);

impl PageIndexes {
    /// Every index asked for that the footer points at.
    fn each(self, metadata: &ParquetMetaData) -> impl Iterator<Item = IndexAt> + '_ {
        let chunks = metadata
            .row_groups()
            .iter()
            .enumerate()
            .flat_map(|(g, rg)| {
                rg.columns()
                    .iter()
                    .enumerate()
                    .map(move |(c, chunk)| (g, c, chunk))
            });
        chunks.flat_map(move |(g, c, chunk): (usize, usize, &ColumnChunkMetaData)| {
            let column = index_range(chunk.column_index_offset(), chunk.column_index_length())
                .filter(|_| self.columns)
                .map(|r| ("column index", g, c, r));
            let offset = index_range(chunk.offset_index_offset(), chunk.offset_index_length())
                .filter(|_| self.offsets)
                .map(|r| ("offset index", g, c, r));
            column.into_iter().chain(offset)
        })
    }

    /// The byte range covering every index asked for (the one parquet
    /// reads them from), if any.
    pub(crate) fn span(self, metadata: &ParquetMetaData) -> Option<Range<u64>> {
        self.each(metadata)
            .map(|(.., r)| r)
            .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end))
    }

    /// Checks every index asked for in `bytes`, the bytes of the span
    /// starting at `start`; a refusal says which index and why.
    pub(crate) fn check(
        self,
        metadata: &ParquetMetaData,
        start: u64,
        bytes: &[u8],
    ) -> Result<(), String> {
        for (kind, g, c, r) in self.each(metadata) {
            let at = |refusal: &dyn std::fmt::Display| {
                format!("its {kind} of row group {g}, column {c} {refusal}")
            };
            let slice = usize::try_from(r.start - start)
                .ok()
                .zip(usize::try_from(r.end - start).ok())
                .and_then(|(a, b)| bytes.get(a..b))
                .ok_or_else(|| at(&"lies outside the bytes read for it"))?;
            let checked = match kind {
                "column index" => check_column_index(slice),
                _ => check_offset_index(slice),
            };
            checked.map_err(|refusal| at(&refusal))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
