"""dar tables as lazy Polars frames, through Polars' IO-plugin API
(`polars.io.plugins.register_io_source`).

Polars hands the source the projection, the row limit and the predicate of
the query. The projection always goes to the dar scan. The predicate goes
to it where it converts to dar's filter language, as a condition that every
row Polars keeps also satisfies (an `AND` keeps its convertible terms; an
`OR` or `NOT` converts whole or not at all), so the scan prunes files, row
groups and pages and filters rows. When only part of the predicate
converted, Polars applies the whole predicate to what the scan returns;
a whole conversion is the same condition (same null and comparison rules),
which dar evaluates exactly, so Polars does not evaluate it again. The row
limit goes to the scan only when the whole predicate converted.

The scan's batches are merged into batches of up to `MERGED_ROWS` rows
before each becomes a Polars frame: a selective scan's few rows come from
many pages, and each conversion costs per column.

What converts: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`) of a column
with a literal, `is_between`, `is_in` (a literal list), `is_null` /
`is_not_null`, `str.starts_with` (a plain prefix), `&`, `|`, `~`; on
integer, decimal (integer literals), string, boolean and date columns.
Float and timestamp comparisons stay in Polars (NaN and time-zone rules
differ between engines), as does anything else.

This file is part of the extension module: it is compiled into
`dar._polars` when `dar` is imported (Polars itself only when used).
"""

import io
import json
import re

_OPS = {"Eq": "=", "NotEq": "<>", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIP = {"Lt": "Gt", "LtEq": "GtEq", "Gt": "Lt", "GtEq": "LtEq", "Eq": "Eq", "NotEq": "NotEq"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: Rows per batch handed to Polars (small batches merged up to it).
MERGED_ROWS = 65536

#: What the most recent scan of a lazy frame pushed into dar: `columns`,
#: `filter` (dar's filter text, or None), `exact` (whether the whole
#: predicate converted), `limit`, `scan` (the `dar.Scan`, whose
#: `metrics()` tell what was pruned) and `frames` (how many Polars frames
#: its batches became). For tests and curious users.
last_pushdown = None


def _kind(dtype):
    """The class of a Polars dtype that decides which literals compare
    exactly: int, decimal, str, bool, date; None for the others."""
    import polars as pl

    if dtype.is_integer():
        return "int"
    if isinstance(dtype, pl.Decimal):
        return "decimal"
    if dtype == pl.String:
        return "str"
    if dtype == pl.Boolean:
        return "bool"
    if dtype == pl.Date:
        return "date"
    return None


# Integer types a signed or unsigned integer column widens to without
# loss, as Polars casts a column to its literal's type (`IN (1)` in SQL
# is Int64 against an Int32 column).
_WIDER = {
    "Int16": {"Int8", "UInt8"},
    "Int32": {"Int8", "Int16", "UInt8", "UInt16"},
    "Int64": {"Int8", "Int16", "Int32", "UInt8", "UInt16", "UInt32"},
}


def _column(node, schema):
    """`(sql name, kind)` of a top-level column node (or of a lossless
    widening cast of an integer column), or None."""
    if isinstance(node, dict) and set(node) == {"Cast"}:
        cast = node["Cast"]
        inner = cast.get("expr") if isinstance(cast, dict) else None
        target = cast.get("dtype", {}).get("Literal") if isinstance(cast, dict) else None
        if not isinstance(inner, dict) or set(inner) != {"Column"} or inner["Column"] not in schema:
            return None
        source = str(schema[inner["Column"]])
        if source == target or source in _WIDER.get(target, ()):
            return _column(inner, schema)
        return None
    if not isinstance(node, dict) or set(node) != {"Column"}:
        return None
    name = node["Column"]
    if name not in schema:
        return None
    kind = _kind(schema[name])
    if kind is None:
        return None
    quoted = name if _IDENT.match(name) else '"' + name.replace('"', '""') + '"'
    return quoted, kind


def _sql_string(text):
    return "'" + text.replace("'", "''") + "'"


def _literal(node, kind):
    """The SQL text of a literal node comparable with a column of `kind`
    exactly, or None."""
    if not isinstance(node, dict) or set(node) != {"Literal"}:
        return None
    lit = node["Literal"]
    value = lit.get("Dyn") or lit.get("Scalar")
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (tag, v), = value.items()
    if kind in ("int", "decimal"):
        ints = {"Int", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"}
        if tag in ints and isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        # Polars casts a literal to a decimal column's type: [unscaled,
        # precision, scale], the exact value it compares with.
        if (
            kind == "decimal"
            and tag == "Decimal"
            and isinstance(v, list)
            and len(v) == 3
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            and 0 <= v[2] <= 76
        ):
            import decimal

            value = decimal.Decimal(v[0]).scaleb(-v[2])
            return format(value, "f")
        return None
    if kind == "str" and tag == "String" and isinstance(v, str):
        return _sql_string(v)
    if kind == "bool" and tag == "Boolean" and isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if kind == "date" and tag == "Date" and isinstance(v, int):
        import datetime

        day = datetime.date(1970, 1, 1) + datetime.timedelta(days=v)
        return f"DATE '{day.isoformat()}'"
    return None


def _list_literal(node, kind):
    """The SQL items of a literal list (`is_in`), or None."""
    import polars as pl

    # `is_in([...])` holds its list as a list scalar; SQL's `IN (...)`
    # (`pl.sql_expr`) as a series of one list.
    try:
        literal = node["Literal"]
        if "Series" in literal:
            outer = pl.read_ipc_stream(io.BytesIO(bytes(literal["Series"]))).to_series().to_list()
            if len(outer) != 1 or not isinstance(outer[0], list):
                return None
            values = outer[0]
        else:
            raw = literal["Scalar"]["List"]
            values = pl.read_ipc_stream(io.BytesIO(bytes(raw))).to_series().to_list()
    except Exception:
        return None
    items = []
    for v in values:
        if v is None:
            return None
        if kind in ("int", "decimal") and isinstance(v, int) and not isinstance(v, bool):
            items.append(str(v))
        elif kind == "str" and isinstance(v, str):
            items.append(_sql_string(v))
        elif kind == "date" and hasattr(v, "isoformat") and not hasattr(v, "hour"):
            items.append(f"DATE '{v.isoformat()}'")
        else:
            return None
    return items if items else None


def _convert(node, schema):
    """`(sql, exact)`: a dar filter that every row satisfying `node` also
    satisfies (None: nothing converts), and whether it is equivalent."""
    if not isinstance(node, dict) or len(node) != 1:
        return None, False
    (tag, body), = node.items()
    if tag == "Column":
        # A boolean column as the whole condition (`filter(pl.col("b"))`,
        # or what Polars makes of `b == True`).
        col = _column(node, schema)
        if col is not None and col[1] == "bool":
            return f"{col[0]} = TRUE", True
        return None, False
    if tag == "BinaryExpr":
        op = body.get("op")
        if op in ("And", "LogicalAnd"):
            left, le = _convert(body["left"], schema)
            right, re_ = _convert(body["right"], schema)
            parts = [p for p in (left, right) if p is not None]
            if not parts:
                return None, False
            return " AND ".join(f"({p})" for p in parts), le and re_ and len(parts) == 2
        if op in ("Or", "LogicalOr"):
            left, le = _convert(body["left"], schema)
            right, re_ = _convert(body["right"], schema)
            if left is None or right is None:
                return None, False
            return f"({left}) OR ({right})", le and re_
        if op in _OPS:
            col = _column(body["left"], schema)
            lit_node, sql_op = body["right"], op
            if col is None:
                col = _column(body["right"], schema)
                lit_node, sql_op = body["left"], _FLIP[op]
            if col is None:
                return None, False
            lit = _literal(lit_node, col[1])
            if lit is None:
                return None, False
            return f"{col[0]} {_OPS[sql_op]} {lit}", True
        return None, False
    if tag == "Function":
        function, inputs = body.get("function"), body.get("input", [])
        if function == {"Boolean": "Not"} and len(inputs) == 1:
            inner, exact = _convert(inputs[0], schema)
            if inner is None or not exact:
                return None, False
            return f"NOT ({inner})", True
        if function in ({"Boolean": "IsNull"}, {"Boolean": "IsNotNull"}) and len(inputs) == 1:
            if not isinstance(inputs[0], dict) or set(inputs[0]) != {"Column"}:
                return None, False
            name = inputs[0]["Column"]
            if name not in schema:
                return None, False
            quoted = name if _IDENT.match(name) else '"' + name.replace('"', '""') + '"'
            neg = " NOT" if function["Boolean"] == "IsNotNull" else ""
            return f"{quoted} IS{neg} NULL", True
        # `is_in` is a boolean function; SQL's `IN` (`pl.sql_expr`) one of its own.
        if isinstance(function, dict) and ("Boolean" in function or "Sql" in function) and len(inputs) == 2:
            b = function.get("Boolean", function.get("Sql"))
            if isinstance(b, dict) and "IsIn" in b and not b["IsIn"].get("nulls_equal", False):
                col = _column(inputs[0], schema)
                if col is None:
                    return None, False
                items = _list_literal(inputs[1], col[1])
                if items is None:
                    return None, False
                return f"{col[0]} IN ({', '.join(items)})", True
        if isinstance(function, dict) and "Boolean" in function and len(inputs) == 3:
            b = function["Boolean"]
            if isinstance(b, dict) and "IsBetween" in b:
                col = _column(inputs[0], schema)
                if col is None:
                    return None, False
                low, high = _literal(inputs[1], col[1]), _literal(inputs[2], col[1])
                closed = b["IsBetween"].get("closed")
                ops = {"Both": (">=", "<="), "Left": (">=", "<"), "Right": (">", "<="), "None": (">", "<")}
                if low is None or high is None or closed not in ops:
                    return None, False
                lo, hi = ops[closed]
                return f"{col[0]} {lo} {low} AND {col[0]} {hi} {high}", True
        if function == {"StringExpr": "StartsWith"} and len(inputs) == 2:
            col = _column(inputs[0], schema)
            if col is None or col[1] != "str":
                return None, False
            lit = _literal(inputs[1], "str")
            prefix = lit[1:-1].replace("''", "'") if lit else None
            if prefix is None or any(c in prefix for c in "%_\\"):
                return None, False
            return f"{col[0]} LIKE {_sql_string(prefix + '%')}", True
    return None, False


def to_filter(predicate, schema):
    """`(filter, exact)` for a Polars expression over a frame of `schema`
    (a Polars schema): dar filter text implied by the predicate (None when
    nothing converts) and whether it is the whole predicate."""
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:
        return None, False
    return _convert(tree, schema)


def scan(table):
    """A `polars.LazyFrame` over `table` (a `dar.Table`), its projection,
    predicate and row limit pushed into dar's scan where they convert."""
    try:
        import polars as pl
        from polars.io.plugins import register_io_source
    except ImportError as e:  # pragma: no cover - polars is a test dependency
        raise ImportError("Table.to_polars() needs the polars package") from e

    schema = pl.from_arrow(table.schema.empty_table()).schema

    def source(with_columns, predicate, n_rows, batch_size):
        global last_pushdown
        sql, exact = (None, True) if predicate is None else to_filter(predicate, schema)
        columns = None
        if with_columns is not None:
            columns = list(with_columns)
            if predicate is not None:
                for name in predicate.meta.root_names():
                    if name not in columns:
                        columns.append(name)
        limit = n_rows if exact else None
        # Polars holds strings as views: dar decodes them straight into
        # views, and Polars takes them without converting.
        dar_scan = table.scan(
            columns=columns, filter=sql, limit=limit, batch_size=batch_size, view_types=True
        )
        pushdown = {
            "columns": columns,
            "filter": sql,
            "exact": exact,
            "limit": limit,
            "scan": dar_scan,
            "frames": 0,
        }
        last_pushdown = pushdown
        left = n_rows
        # Merged up to the batch size Polars asks for (or the row limit,
        # so a limit is not held up by the merging).
        rows = batch_size or MERGED_ROWS
        if n_rows is not None:
            rows = min(rows, n_rows)
        for batch in dar_scan._to_merged_reader(max(1, rows)):
            if left is not None and left <= 0:
                break
            frame = pl.from_arrow(batch)
            if predicate is not None and not exact:
                frame = frame.filter(predicate)
            if with_columns is not None and columns != list(with_columns):
                frame = frame.select(with_columns)
            if left is not None:
                frame = frame.head(left)
                left -= frame.height
            pushdown["frames"] += 1
            yield frame

    return register_io_source(
        source,
        schema=schema,
        validate_schema=True,
        explain_name="dar",
        explain_detail=table.uri,
    )


def scan_polars(uri, **options):
    """`dar.Table(uri, **options).to_polars()`: a lazy Polars frame over the
    Delta table at `uri` (the options of `dar.Table`)."""
    import dar

    return dar.Table(uri, **options).to_polars()
