//! The three statistics providers: the Delta file index
//! ([`FileStatistics`]), Parquet row-group statistics
//! ([`RowGroupStatistics`]) and the Parquet page index
//! ([`page_access_plan`]), plus a plain in-memory table of statistics
//! ([`StatisticsTable`]) the others build on.

mod access;
mod file;
mod page;
mod parquet_columns;
mod row_group;
mod table;

pub use access::{AccessPlan, RowGroupAccess};
pub use file::{FileStatistics, FileStatisticsBuilder};
pub use page::{page_access_plan, page_access_plan_with};
pub use parquet_columns::{ParquetColumn, ParquetColumns, predicate_projection};
pub use row_group::{RowGroupStatistics, access_plan};
pub use table::StatisticsTable;
