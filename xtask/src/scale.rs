//! Fixture sizes: `quick` (minutes, for smoke runs) and `full` (the plan's
//! sizes, scaled for a 2-core, 24 GiB machine).

use clap::ValueEnum;

/// How big the fixtures are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scale {
    /// Small tables: every workload in a few minutes.
    Quick,
    /// The benchmark plan's sizes.
    Full,
}

/// Table sizes for one [`Scale`].
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    /// W1 big table: files and rows per file (40 columns).
    pub w1_files: usize,
    /// Rows per W1 file.
    pub w1_rows: usize,
    /// W1 reference table (14 columns, 2 DVs): files and rows per file.
    pub w1_ref_files: usize,
    /// Rows per W1 reference file.
    pub w1_ref_rows: usize,
    /// W2 text table: files and rows per file (6 text columns).
    pub w2_files: usize,
    /// Rows per W2 file.
    pub w2_rows: usize,
    /// W3/W4 DV table: files and rows per file (one deleted row per file).
    pub dv_files: usize,
    /// Rows per DV-table file.
    pub dv_rows: usize,
    /// W5: TPC-H scale factor of `lineitem`.
    pub w5_scale_factor: f64,
    /// W5: files (one TPC-H part each).
    pub w5_files: usize,
    /// W5: rows per row group.
    pub w5_row_group: usize,
    /// W5: rows per page.
    pub w5_page_rows: usize,
    /// W6 generated table: files, written `w6_files_per_commit` per commit,
    /// then a classic checkpoint.
    pub w6_files: usize,
    /// W6 files per commit.
    pub w6_files_per_commit: usize,
    /// W7 change-feed table: commits after version 0 (inserts, DV deletes
    /// and updates through `cdc` files, in a 2:1:1 cycle).
    pub w7_commits: usize,
    /// Rows per W7 insert.
    pub w7_rows: usize,
    /// W8 metadata-scale tables (log only, no data files): the active
    /// files of the `small`, `large` and `xlarge` tables of every
    /// checkpoint shape at their checkpoint.
    pub w8_files: [usize; 3],
}

impl Scale {
    /// The name used in paths and reports.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Full => "full",
        }
    }

    /// The sizes of this scale.
    pub fn sizes(self) -> Sizes {
        match self {
            Scale::Quick => Sizes {
                w1_files: 10,
                w1_rows: 5_000,
                w1_ref_files: 4,
                w1_ref_rows: 5_000,
                w2_files: 4,
                w2_rows: 300,
                dv_files: 20,
                dv_rows: 10_000,
                w5_scale_factor: 0.05,
                w5_files: 4,
                w5_row_group: 16_384,
                w5_page_rows: 4_096,
                w6_files: 2_000,
                w6_files_per_commit: 500,
                w7_commits: 200,
                w7_rows: 200,
                w8_files: [10_000, 50_000, 100_000],
            },
            Scale::Full => Sizes {
                w1_files: 250,
                w1_rows: 12_000,
                w1_ref_files: 8,
                w1_ref_rows: 25_000,
                w2_files: 16,
                w2_rows: 5_000,
                dv_files: 200,
                dv_rows: 100_000,
                w5_scale_factor: 1.0,
                w5_files: 8,
                w5_row_group: 131_072,
                w5_page_rows: 20_000,
                w6_files: 20_000,
                w6_files_per_commit: 1_000,
                w7_commits: 3_000,
                w7_rows: 400,
                w8_files: [100_000, 1_000_000, 10_000_000],
            },
        }
    }
}
