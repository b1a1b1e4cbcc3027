"""dar: read Delta Lake tables exactly, as Arrow data without a copy.

    import dar
    table = dar.Table("examples/data/sample")
    rows = table.scan(columns=["trip_id", "fare"], filter="fare > 50").to_table()

A `Scan` implements the Arrow PyCapsule interface (`__arrow_c_stream__`),
so `polars.from_arrow(scan)`, `pyarrow.table(scan)` and DuckDB take it as it
is. Errors are `DarError`s, one subclass per kind of failure, with dar's
one-line messages (those of the `dar` command, naming options as this
module does rather than as command-line flags).
"""

import datetime
import os
from typing import Any, Mapping, Optional, Sequence, Union

import pyarrow

__version__: str

class DarError(Exception):
    """Base class of every error dar raises; the message is dar's one-line message."""

class NotFoundError(DarError):
    """The table has no Delta log, or the version or timestamp is outside its history."""

class ProtocolUnsupportedError(DarError):
    """The table needs a reader version, feature, format or type that dar cannot read."""

class InvalidPredicateError(DarError):
    """The filter does not parse or does not fit the table schema."""

class InvalidArgumentError(DarError):
    """An argument is out of range or names nothing in the table (a column, a URI scheme, a storage option)."""

class StorageError(DarError):
    """The object store failed: a request, the credentials, or an object that is not there."""

class CorruptDataError(DarError):
    """The Delta log, a checkpoint, a data file or a deletion vector is malformed or inconsistent."""

class SchemaViolationError(CorruptDataError):
    """A data file breaks the schema the table declares: nulls in, or no values for, a column declared not null, or a column of another type."""

class PathRefusedError(DarError):
    """The log names a data or deletion-vector file dar may not read: outside the table root while paths are confined to it, or on another store."""

class InternalError(DarError):
    """dar itself failed (a decoder task stopped, an Arrow kernel failed): no input explains it; please report it."""

class Table:
    """A Delta table at one version, opened from a path or a `file://`, `s3://`, `az://`, `abfss://`, `https://<account>.blob.core.windows.net/...` or `gs://` URI.

    The log is replayed when the table is opened (with the GIL released), so
    errors about the table surface at once.

    Args:
        uri: a path, or a `file://`, `s3://`, `az://` / `abfs[s]://` /
            `https://<account>.blob.core.windows.net/<container>/...` or
            `gs://` URI.
        version: read this version (time travel).
        timestamp: read the newest version committed at or before this
            time: milliseconds since the epoch (int), RFC 3339 text or
            milliseconds (str, as `dar --timestamp`), or a `datetime`
            (naive ones are local time).
        storage_options: object-store settings, as `dar --storage-option`
            (`aws_endpoint`, `aws_region`, `aws_access_key_id`,
            `azure_storage_account_key`, `azure_storage_sas_token`,
            `google_service_account`, ...); the usual `AWS_*`, `AZURE_*`
            and `GOOGLE_*` environment variables are read too, options
            given here win.
        confine_paths: refuse every data or deletion-vector file outside
            the table root (absolute paths elsewhere, files on other
            stores), as `dar --confine-paths`, for tables you do not trust.
        data_cache_bytes: memory budget of the table's cache of fetched
            byte ranges, shared by all its scans, so that a repeated query
            fetches none of the bytes an earlier one fetched (0 turns it
            off). Default: 256 MiB on object storage, off on local disk.
            Hits and misses are in `metrics()["io"]["cache"]`.
        cache_dir: also keep fetched footers, page indexes, pages, deletion
            vectors and checkpoints in files under this directory (in a
            `dar-cache-v2` folder of their own), so that later processes
            skip those requests (as `dar --cache-dir`). The directory must be
            private to the user (it is created so when missing) and outside
            the table. An entry is served only when the object's store,
            path, size and version match (checked with the store once per
            file) and its checksums hold.
        cache_dir_bytes: budget of `cache_dir` for every process sharing it
            (default: the folder's own, 8 GiB for a new one).
        stats_for_filter: a filter (as `scan(filter=...)` takes it) known
            before the table opens: the file statistics of the columns it
            names are parsed while the table opens, from a checkpoint in
            the pass that reads its counts rather than in a second pass at
            the first scan. Results are the same; other columns' statistics
            are still parsed when a filter first needs them. A filter that
            does not parse selects none (its scan raises the error).

    Raises:
        NotFoundError: no Delta log, or a version or timestamp outside the history.
        ProtocolUnsupportedError: a reader version or feature dar cannot read.
        InvalidArgumentError: a negative version, a timestamp that does not
            parse, a bad URI or storage option, a `cache_dir` inside the
            table or writable by other users.
        StorageError: the object store failed.
        CorruptDataError: the log or a checkpoint is broken.
    """

    def __init__(
        self,
        uri: Union[str, "os.PathLike[str]"],
        *,
        version: Optional[int] = None,
        timestamp: Union[int, str, datetime.datetime, None] = None,
        storage_options: Optional[Mapping[str, str]] = None,
        confine_paths: bool = False,
        data_cache_bytes: Optional[int] = None,
        cache_dir: Union[str, "os.PathLike[str]", None] = None,
        cache_dir_bytes: Optional[int] = None,
        stats_for_filter: Optional[str] = None,
    ) -> None: ...
    @property
    def uri(self) -> str:
        """The table URI (credentials removed)."""
    @property
    def version(self) -> int:
        """The loaded version."""
    @property
    def schema(self) -> pyarrow.Schema:
        """The logical schema (every field nullable; under column mapping the fields carry their physical name and id as metadata)."""
    @property
    def partition_columns(self) -> list[str]:
        """The partition columns, in order."""
    @property
    def protocol(self) -> dict[str, Any]:
        """The protocol and what dar reads of it, as `dar info --json` says.

        `min_reader_version`, `min_writer_version`, `reader_features`,
        `writer_features` (lists, or None below reader 3 / writer 7);
        `features`: one dict per feature, listed or implied by the legacy
        versions (`name`, `kind`: `reader-writer`/`writer`/`unknown`,
        `source`, `required_by_readers`, `dar`: `reads`/`not needed`/
        `refused`, `meaning`: what it means for a reader); `dar_reads`,
        `refused` (the features that stop dar) and `verdict` (one line).
        """
    @property
    def metadata(self) -> dict[str, Any]:
        """`id`, `name`, `description`, `format_provider`, `format_options`, `schema_string`, `partition_columns`, `created_time` (ms), `configuration`."""
    def to_polars(self) -> Any:
        """A lazy `polars.LazyFrame` over the table, through Polars' IO-plugin API.

        The projection always goes into dar's scan; the predicate where it
        converts to dar's filter (comparisons of a column with a literal,
        `is_between`, `is_in`, `is_null`/`is_not_null`, `str.starts_with`,
        `&`, `|`, `~`, on integer, decimal, string, boolean and date
        columns; an `&` keeps its convertible terms); the row limit
        (`head`, `n_rows`) when the whole predicate converts. Polars
        applies the whole predicate to what the scan returns, so the rows
        are always Polars' own answer. Needs the `polars` package.
        """
    def __datafusion_table_provider__(self, session: Any = None) -> Any:
        """The table as a DataFusion table provider (a `datafusion_table_provider` PyCapsule).

        `datafusion.SessionContext().register_table("t", table)` calls it
        (DataFusion Python 55; the same minor of DataFusion as dar's). SQL
        over `t` gets dar's filter, projection and limit pushdown and
        statistics; the scan reads this table's snapshot with its storage
        options. `session`, which DataFusion passes, is not needed.
        """
    def files(self, *, full: bool = False) -> pyarrow.Table:
        """The active files, with the columns of `dar files` (`full=True`: those of `dar files --format csv`)."""
    def refresh(self) -> None:
        """Moves to the newest version, replaying only the new commits."""
    def scan(
        self,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        view_types: bool = False,
    ) -> Scan:
        """Describes a scan.

        Args:
            columns: the columns, in order (`a.b` for a struct field); all by default.
            filter: a SQL predicate, as `dar scan --filter` (comparisons,
                AND/OR/NOT, IN, BETWEEN, IS NULL, LIKE 'prefix%'), used for
                pruning and then applied exactly.
            limit: at most this many rows.
            batch_size: rows per batch.
            view_types: strings and binaries as `string_view` / `binary_view`
                (at any depth), decoded without copying each value; for
                consumers that take views (pyarrow 16 and later, Polars,
                DuckDB, DataFusion). Off by default, so schemas hold
                `string` / `binary` as pyarrow < 16 and most code expects.

        Raises:
            InvalidArgumentError: an unknown column, a limit or batch size
                out of range (negative, 0 for `batch_size`, 2**63 or more).
            InvalidPredicateError: a filter that does not parse or fit the schema.

        Reading the scan raises `StorageError`, `CorruptDataError`,
        `SchemaViolationError`, `PathRefusedError` or `InternalError`.
        """

    def changes(
        self,
        start: Union[int, str, datetime.datetime],
        end: Optional[Union[int, str, datetime.datetime]] = None,
        columns: Optional[Sequence[str]] = None,
        filter: Optional[str] = None,
        limit: Optional[int] = None,
        batch_size: Optional[int] = None,
        view_types: bool = False,
    ) -> Scan:
        """Describes the change data feed of versions `start` to `end` as a scan.

        Args:
            start: the first version (`int`), or a time (`datetime` or RFC 3339
                `str`): the first commit at or after it (a time after the last
                commit raises).
            end: the last version, or a time: the last commit at or before it
                (the latest version for a time after the last commit); the
                latest version by default. Times resolve to versions as time
                travel resolves them. Each row's `_commit_timestamp` is its
                commit's: the in-commit timestamp where in-commit timestamps
                are on at that commit, else the commit file's time.
            columns: the table's columns, in order; all by default. The change
                columns `_change_type`, `_commit_version` and `_commit_timestamp`
                always follow.
            filter: a SQL predicate, as for `scan`; it may name the change columns.
            limit: at most this many rows.
            batch_size: rows per batch.
            view_types: as for `scan`.

        Raises:
            InvalidArgumentError: a start after the end or beyond the latest
                version, a time outside the history, an unknown column.
            ProtocolUnsupportedError: the change data feed off at a version of
                the range, or a schema change it cannot reconcile.
            NotFoundError: a commit of the range removed by log cleanup.
        """

class Scan:
    """A described scan: consume it with `to_table()`, `to_reader()`, `count()`,
    or hand it to anything that takes an Arrow stream. Each consumption runs
    the scan anew; the GIL is released while it works and Ctrl-C cancels it."""

    @property
    def schema(self) -> pyarrow.Schema:
        """The schema of the rows."""
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """Runs the scan as an `arrow_array_stream` PyCapsule (batches as they are decoded, no copy); `requested_schema` is ignored."""
    def to_reader(self) -> pyarrow.RecordBatchReader:
        """Runs the scan as a `pyarrow.RecordBatchReader`; read errors raise `DarError`s."""
    def to_table(self) -> pyarrow.Table:
        """Runs the scan into a `pyarrow.Table` (one chunk per batch)."""
    def count(self) -> int:
        """The number of rows the scan returns (from the log's statistics where they are exact)."""
    def metrics(self) -> dict[str, Any]:
        """What the latest run did: files, row groups, pages pruned; rows deleted, filtered, returned; `stage_seconds`; `io` per object class, with `local_reads` (blocking calls reading local files) and `local_buffers_reused` (local reads into a buffer an earlier read handed back)."""

def protocol(
    uri: Union[str, "os.PathLike[str]"],
    *,
    version: Optional[int] = None,
    timestamp: Union[int, str, datetime.datetime, None] = None,
    storage_options: Optional[Mapping[str, str]] = None,
) -> dict[str, Any]:
    """The protocol of the table at `uri` as `Table.protocol` gives it, for
    tables dar refuses too (only the log is replayed): `verdict` says
    whether dar reads the table or which features stop it.

    Raises:
        NotFoundError: no Delta log, or a version or timestamp outside the history.
        InvalidArgumentError: a bad URI, version, timestamp or storage option.
        StorageError: the object store failed.
        CorruptDataError: the log or a checkpoint is broken.
    """

def scan_polars(uri: Union[str, "os.PathLike[str]"], **options: Any) -> Any:
    """`dar.Table(uri, **options).to_polars()`: a lazy `polars.LazyFrame`
    over the Delta table at `uri` (`options` as for `dar.Table`)."""
