//! [`ScanOptions`]: what a scan-like plan reads (columns, predicate, limit)
//! and how (batch size, concurrency, order, view types), one value shared
//! by [`crate::ScanBuilder`] and [`crate::ChangesBuilder`]: an interface
//! (the CLI, Python, SQL) builds it once from its arguments and hands it to
//! either.

use dar_prune::Expr;

use crate::errors::error::{Result, ScanError};

/// Default rows per output batch.
pub const DEFAULT_BATCH_SIZE: usize = 8192;

/// A predicate as the caller gave it: an expression, or SQL text parsed at
/// build time.
#[derive(Debug, Clone)]
enum PredicateInput {
    Expr(Expr),
    Sql(String),
}

/// What a scan reads and how; consuming `with_*` setters. The same for a
/// scan ([`crate::ScanBuilder::with_options`]) and a change data feed
/// ([`crate::ChangesBuilder::with_options`]).
///
/// ```
/// use dar_scan::ScanOptions;
///
/// let options = ScanOptions::new()
///     .with_columns(["trip_id", "fare"])
///     .with_predicate_sql("trip_id BETWEEN 165 AND 175")
///     .with_limit(5);
/// assert_eq!(options.limit(), Some(5));
/// ```
#[derive(Debug, Clone)]
pub struct ScanOptions {
    columns: Option<Vec<Vec<String>>>,
    predicate: Option<PredicateInput>,
    limit: Option<usize>,
    batch_size: usize,
    concurrency: Option<usize>,
    ordered: bool,
    view_types: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            columns: None,
            predicate: None,
            limit: None,
            batch_size: DEFAULT_BATCH_SIZE,
            concurrency: None,
            ordered: true,
            view_types: false,
        }
    }
}

impl ScanOptions {
    /// Every column, every row, batches of [`DEFAULT_BATCH_SIZE`] in file
    /// order, classic string types.
    pub fn new() -> Self {
        Self::default()
    }

    /// Output columns, in this order: top-level names or dotted paths to
    /// struct fields (`"a.b"`, output as a column named `a.b`). An empty
    /// list reads no column: batches carry only row counts (a count).
    /// Default: every column of the table.
    pub fn with_columns(mut self, columns: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        self.columns = Some(
            columns
                .into_iter()
                .map(|c| c.as_ref().split('.').map(str::to_string).collect())
                .collect(),
        );
        self
    }

    /// Output columns as explicit paths (for names that contain dots).
    pub fn with_column_paths(mut self, paths: Vec<Vec<String>>) -> Self {
        self.columns = Some(paths);
        self
    }

    /// Only rows for which `predicate` is true (SQL three-valued logic).
    pub fn with_predicate(mut self, predicate: Expr) -> Self {
        self.predicate = Some(PredicateInput::Expr(predicate));
        self
    }

    /// Only rows for which the SQL text `predicate` is true (parsed by
    /// `dar_prune::parse_expr` when the plan is built).
    pub fn with_predicate_sql(mut self, predicate: impl Into<String>) -> Self {
        self.predicate = Some(PredicateInput::Sql(predicate.into()));
        self
    }

    /// At most `limit` rows; all I/O stops once they are out.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Rows per batch (default 8,192).
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size;
        self
    }

    /// Files read at the same time (default: chosen for the store, see
    /// [`crate::default_files_in_flight`]).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// Batches in file (or commit) order (default), or as soon as any file
    /// yields them.
    pub fn with_ordered(mut self, ordered: bool) -> Self {
        self.ordered = ordered;
        self
    }

    /// Strings and binaries (at any depth) as `Utf8View` / `BinaryView`,
    /// decoded straight from the pages without copying each value into one
    /// buffer (default false: `Utf8` / `Binary`). For consumers that take
    /// views: DataFusion, Polars, DuckDB, pyarrow 16 and later.
    pub fn with_view_types(mut self, on: bool) -> Self {
        self.view_types = on;
        self
    }

    /// The output columns asked for (`None`: every column).
    pub fn columns(&self) -> Option<&[Vec<String>]> {
        self.columns.as_deref()
    }

    /// The row limit.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// Files read at the same time, when set.
    pub fn concurrency(&self) -> Option<usize> {
        self.concurrency
    }

    /// The options as the parts of a spec: the output columns (`None`:
    /// the caller's default) and the predicate, parsed.
    pub(crate) fn resolve(self) -> Result<ResolvedOptions> {
        let predicate =
            match self.predicate {
                None => None,
                Some(PredicateInput::Expr(e)) => Some(e),
                Some(PredicateInput::Sql(s)) => Some(dar_prune::parse_expr(&s).map_err(
                    |source| ScanError::Predicate {
                        source: Box::new(source),
                    },
                )?),
            };
        Ok(ResolvedOptions {
            columns: self.columns,
            predicate,
            batch_size: self.batch_size,
            limit: self.limit,
            ordered: self.ordered,
            view_types: self.view_types,
        })
    }
}

/// [`ScanOptions`] with the predicate parsed: what a spec takes.
#[derive(Debug)]
pub(crate) struct ResolvedOptions {
    pub(crate) columns: Option<Vec<Vec<String>>>,
    pub(crate) predicate: Option<Expr>,
    pub(crate) batch_size: usize,
    pub(crate) limit: Option<usize>,
    pub(crate) ordered: bool,
    pub(crate) view_types: bool,
}

/// The [`ScanOptions`] setters on a builder that holds its options in a
/// field `options`, each forwarding to the option's own (one definition,
/// two builders).
macro_rules! scan_option_setters {
    ($builder:ident) => {
        impl $builder {
            /// All scan options at once (see [`crate::ScanOptions`]),
            /// replacing any set before.
            pub fn with_options(mut self, options: crate::ScanOptions) -> Self {
                self.options = options;
                self
            }

            /// See [`crate::ScanOptions::with_columns`].
            pub fn with_columns(
                mut self,
                columns: impl IntoIterator<Item = impl AsRef<str>>,
            ) -> Self {
                self.options = self.options.with_columns(columns);
                self
            }

            /// See [`crate::ScanOptions::with_column_paths`].
            pub fn with_column_paths(mut self, paths: Vec<Vec<String>>) -> Self {
                self.options = self.options.with_column_paths(paths);
                self
            }

            /// See [`crate::ScanOptions::with_predicate`].
            pub fn with_predicate(mut self, predicate: dar_prune::Expr) -> Self {
                self.options = self.options.with_predicate(predicate);
                self
            }

            /// See [`crate::ScanOptions::with_predicate_sql`].
            pub fn with_predicate_sql(mut self, predicate: impl Into<String>) -> Self {
                self.options = self.options.with_predicate_sql(predicate);
                self
            }

            /// See [`crate::ScanOptions::with_limit`].
            pub fn with_limit(mut self, limit: usize) -> Self {
                self.options = self.options.with_limit(limit);
                self
            }

            /// See [`crate::ScanOptions::with_batch_size`].
            pub fn with_batch_size(mut self, batch_size: usize) -> Self {
                self.options = self.options.with_batch_size(batch_size);
                self
            }

            /// See [`crate::ScanOptions::with_concurrency`].
            pub fn with_concurrency(mut self, concurrency: usize) -> Self {
                self.options = self.options.with_concurrency(concurrency);
                self
            }

            /// See [`crate::ScanOptions::with_ordered`].
            pub fn with_ordered(mut self, ordered: bool) -> Self {
                self.options = self.options.with_ordered(ordered);
                self
            }

            /// See [`crate::ScanOptions::with_view_types`].
            pub fn with_view_types(mut self, on: bool) -> Self {
                self.options = self.options.with_view_types(on);
                self
            }
        }
    };
}

pub(crate) use scan_option_setters;
