"""Typing and checking the rows of a change feed: each row becomes typed or a dead letter.

`split_rows` takes a feed whose columns are already matched to the table (see `feed_schema`)
and returns two lazy DataFrames: the typed rows and the rejected ones with their reason.

Conversion rules (a value that breaks them rejects its row, with every reason listed):

* Text values (CSV, JSON, string columns) convert with Spark's ``try_cast``: integers must be
  whole (``"1.0"`` is not an INT), decimals round half-up to the column's scale and must fit
  its precision, BOOLEAN takes ``true/false/t/f/yes/no/y/n/1/0``, DATE and TIMESTAMP take ISO-8601
  (a TIMESTAMP without an offset is in the session time zone). BINARY text is base64. An empty
  text is null for every type but STRING/VARCHAR/CHAR.
* Typed values (Parquet, DataFrames) convert between numeric and boolean types, and between
  DATE and TIMESTAMP; a fractional number that is not whole is not an integer. Nested values
  become JSON text for a STRING column. Any other pairing (e.g. DATE to INT) is a whole-batch
  `SchemaError`.
* ``VARCHAR(n)``/``CHAR(n)`` values longer than ``n`` are rejected (never truncated or padded).
* Primary-key and ordering values must not be null; NOT NULL columns must not be null.
* A delete needs only its primary key, partition and ordering columns; its other values are
  neither checked nor used.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feed_schema import required_columns
from versioned.engine.op_codes import DELETE, UPDATE, normalise_op_code, op_code_problem
from versioned.engine.spark_types import max_length, spark_type
from versioned.errors import SchemaError
from versioned.schema import Column as TableColumn
from versioned.schema import TableSpec

# Columns of a Feed besides the table's.
OP = "_op"
SEQ = "_seq"
RAW = "_raw"
REASON = "_reason"
SOURCE = "_source"
# Working columns of the readers and of the frame `split_rows` reads. '#' cannot occur in a
# table column name, so they never clash with one.
IN_OP = "#op"
IN_MALFORMED = "#malformed"
IN_RAW = "#raw"
IN_SOURCE = "#source"
IN_SEQ = "#seq"
IN_RECORD = "#record"  # the input record as one struct, so input names never clash with ours
# Optional: names of the columns whose stored value a row keeps (a partial update, or an
# unchanged TOAST value); passed on to ``rows`` under the same name (see kept_values).
IN_KEEP = "#keep"
_IN_REASON = "#reason"

_NUMERIC = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_TEMPORAL = (T.DateType, T.TimestampType, T.TimestampNTZType)
_NESTED = (T.StructType, T.ArrayType, T.MapType)
_QUOTE_LIMIT = 60


class ObservedCount:
    """A count Spark takes while an action reads a DataFrame, without a job of its own.

    Reading it never blocks: before an action has read the whole frame it is None (and the
    caller counts with a job of its own).
    """

    def __init__(self, frame: DataFrame, condition: Column, name: str) -> None:
        self._observation = Observation()
        self.frame = frame.observe(
            self._observation, F.count(F.when(condition, F.lit(1))).alias(name)
        )
        self._name = name

    def value(self) -> int | None:
        """The count, once an action has read the frame; else None."""
        try:  # pyspark has no public non-blocking read; `get` waits for ever
            done = self._observation._jo.future().isCompleted()  # type: ignore[union-attr]
        except Exception:  # another Spark build: count with a job instead
            return None
        return int(self._observation.get[self._name]) if done else None


def split_rows(
    frame: DataFrame, spec: TableSpec, present: Collection[str], *, source: str
) -> tuple[DataFrame, DataFrame, ObservedCount]:
    """Type the rows of a matched feed and separate the rows that cannot be applied.

    Args:
        frame: One row per record with columns: each table column in ``present`` under its
            table name (text or typed values), ``#op`` (op code as written), ``#malformed``
            (why the record could not be parsed, else null), ``#raw``, ``#source``, ``#seq``.
        spec: The table.
        present: Table columns the frame has; the others read as null.
        source: What the feed is, for messages.

    Returns:
        ``(rows, rejected, rejections)``: ``rows`` has the table's columns cast to its types
        plus ``_op`` (``I``/``U``/``D``) and ``_seq`` (and ``#keep`` if ``frame`` has it: a
        kept column is null and unchecked); ``rejected`` has ``_raw``, ``_reason``,
        ``_source``. Both are lazy. ``rejections`` counts the rejected rows while an action
        reads ``rows``.

    Raises:
        SchemaError: A typed input column cannot convert to its table column's type.
    """
    input_types = {f.name: f.dataType for f in frame.schema.fields}
    incompatible = [
        f"{name} ({input_types[name].simpleString().upper()} in the feed, "
        f"{spec.column(name).type} in the table)"
        for name in spec.column_names
        if name in present
        and not _convertible(input_types[name], spark_type(spec.column(name).type))
    ]
    if incompatible:
        raise SchemaError(
            f"{source} has column(s) of a type table {spec.name} cannot take: "
            f"{', '.join(incompatible)}; cast them in the feed or fix the table definition",
            source=source,
        )

    op = normalise_op_code(F.col(IN_OP))
    is_delete = F.coalesce(op == F.lit(DELETE), F.lit(False))
    required = set(required_columns(spec))
    keep = [F.col(IN_KEEP)] if IN_KEEP in frame.columns else []
    values: list[Column] = []
    reasons: list[Column] = [op_code_problem(F.col(IN_OP), op)]
    for column in spec.columns:
        target = spark_type(column.type)
        if column.name not in present:
            values.append(F.lit(None).cast(target).alias(column.name))
            continue
        src = F.col(column.name)
        value, failed = _convert(src, input_types[column.name], target)
        checked = F.lit(True) if column.name in required else ~is_delete
        if keep and column.name not in required:  # a kept value is neither read nor checked
            kept = F.coalesce(F.array_contains(keep[0], F.lit(column.name)), F.lit(False))
            value = F.when(~kept, value)
            checked = checked & ~kept
        values.append(value.alias(column.name))
        reasons.extend(
            _problems(column, spec, src, input_types[column.name], value, failed, checked)
        )

    combined = F.concat_ws("; ", *reasons)
    reason = (
        F.when(F.col(IN_MALFORMED).isNotNull(), F.col(IN_MALFORMED))
        .when(combined != F.lit(""), combined)
        .otherwise(F.lit(None).cast("string"))
    )
    checked_rows = frame.select(
        *values,
        op.alias(OP),
        F.col(IN_SEQ).cast("long").alias(SEQ),
        reason.alias(_IN_REASON),
        F.col(IN_RAW).cast("string").alias(IN_RAW),
        F.col(IN_SOURCE).cast("string").alias(IN_SOURCE),
        *keep,
    )
    rejections = ObservedCount(checked_rows, F.col(_IN_REASON).isNotNull(), "rejected")
    rows = rejections.frame.where(F.col(_IN_REASON).isNull()).select(
        *spec.column_names, OP, SEQ, *keep
    )
    rejected = checked_rows.where(F.col(_IN_REASON).isNotNull()).select(
        F.col(IN_RAW).alias(RAW), F.col(_IN_REASON).alias(REASON), F.col(IN_SOURCE).alias(SOURCE)
    )
    return rows, rejected, rejections


def op_input(op_column: str | None, get: Callable[[str], Column]) -> Column:
    """The ``#op`` column: the op codes read by ``get`` from ``op_column``, or ``U``
    (upsert) for every row when the feed has no op-code column."""
    op = F.lit(UPDATE) if op_column is None else get(op_column).cast("string")
    return op.alias(IN_OP)


def _convertible(src: T.DataType, dst: T.DataType) -> bool:
    if isinstance(src, T.StringType | T.NullType) or src == dst:
        return True
    if isinstance(dst, T.StringType):
        return True
    if isinstance(src, (*_NUMERIC, T.DecimalType, T.BooleanType)):
        return isinstance(dst, (*_NUMERIC, T.DecimalType, T.BooleanType))
    if isinstance(src, _TEMPORAL):
        return isinstance(dst, T.DateType | T.TimestampType)
    return False


def _convert(src: Column, src_type: T.DataType, target: T.DataType) -> tuple[Column, Column]:
    """``(value, failed)``: the converted value and whether a non-null input did not convert."""
    null = F.lit(None).cast(target)
    if isinstance(src_type, T.NullType):
        return null, F.lit(False)
    if isinstance(src_type, T.StringType):
        if isinstance(target, T.StringType):
            return src, F.lit(False)
        text = F.trim(src)
        converted = (
            F.try_to_binary(text, F.lit("base64"))
            if isinstance(target, T.BinaryType)
            else text.try_cast(target)
        )
        value = F.when(text == F.lit(""), null).otherwise(converted)
        return value, src.isNotNull() & (text != F.lit("")) & value.isNull()
    if src_type == target:
        return src, F.lit(False)
    if isinstance(src_type, _NESTED):
        return F.to_json(src), F.lit(False)
    value = src.try_cast(target)
    failed = src.isNotNull() & value.isNull()
    fractional = isinstance(src_type, T.FloatType | T.DoubleType) or (
        isinstance(src_type, T.DecimalType) and src_type.scale > 0
    )
    if fractional and isinstance(target, _INTEGRAL):
        failed = failed | (value.isNotNull() & (value.cast(src_type) != src))
    return value, failed


def _problems(
    column: TableColumn,
    spec: TableSpec,
    src: Column,
    src_type: T.DataType,
    value: Column,
    failed: Column,
    checked: Column,
) -> list[Column]:
    name, type_name = column.name, column.type
    article = "an" if type_name[0] in "AEIOU" else "a"
    problems = [
        F.when(
            checked & failed,
            F.concat(
                F.lit(f"column {name}: '"),
                _quoted(_as_text(src, src_type)),
                F.lit(f"' is not {article} {type_name}"),
            ),
        )
    ]
    limit = max_length(type_name)
    if limit is not None:
        problems.append(
            F.when(
                checked & (F.length(value) > F.lit(limit)),
                F.concat(
                    F.lit(f"column {name}: '"),
                    _quoted(value),
                    F.lit(f"' is longer than {type_name}"),
                ),
            )
        )
    is_null = value.isNull() & ~failed
    if name in spec.primary_key:
        problems.append(F.when(is_null, F.lit(f"primary key column {name} is null")))
    elif name == spec.ordering_column:
        problems.append(F.when(is_null, F.lit(f"ordering column {name} is null")))
    elif not column.nullable:
        problems.append(F.when(checked & is_null, F.lit(f"column {name} is NOT NULL but null")))
    return problems


def _as_text(src: Column, src_type: T.DataType) -> Column:
    if isinstance(src_type, T.BinaryType):
        return F.base64(src)
    return src.cast("string")


def _quoted(text: Column) -> Column:
    return F.when(
        F.length(text) > F.lit(_QUOTE_LIMIT),
        F.concat(F.substring(text, 1, _QUOTE_LIMIT), F.lit("...")),
    ).otherwise(text)
