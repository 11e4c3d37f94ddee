"""Typing and checking the rows of a change feed: each row becomes typed or a dead letter.

`split_rows` takes a feed whose columns are already matched to the table (see `feed_schema`)
and returns two lazy DataFrames: the typed rows and the rejected ones with their reason.

Conversion rules (a value that breaks them rejects its row, with every reason listed; the
formats are documented in docs/input-formats.md):

* Text values (CSV, JSON, string columns) convert exactly or not at all
  (`versioned.engine.feeds.text_values`): integers must be whole and in range (``"1.0"`` is not an
  INT), FLOAT/DOUBLE must not overflow, DECIMAL values must fit the precision and must not
  have more decimal places than the scale, BOOLEAN takes ``true/false/t/f/1/0`` (any case),
  DATE is ``YYYY-MM-DD`` and TIMESTAMP ISO-8601 (a TIMESTAMP without an offset is in the
  session time zone). BINARY text is base64. An empty text is null for every type but
  STRING/VARCHAR/CHAR. Text must be valid UTF-8.
* Typed values (Parquet, DataFrames) convert between numeric and boolean types, and between
  DATE and TIMESTAMP, when nothing is lost: a fractional number is not an integer, a number
  other than 0/1 is not a BOOLEAN, a TIMESTAMP with a time of day is not a DATE, a number
  with more places than a DECIMAL's scale is refused. Nested values become JSON text for a
  STRING column. Any other pairing (e.g. DATE to INT) is a whole-batch `SchemaError`.
* Two table properties opt into lenient conversion, counted as ``coerced`` in the commit
  result: ``round_decimals=true`` rounds half-up to a DECIMAL's scale, and
  ``replace_invalid_utf8=true`` replaces invalid UTF-8 bytes with U+FFFD.
* ``VARCHAR(n)``/``CHAR(n)`` values longer than ``n`` are rejected (never truncated or padded).
* Primary-key and ordering values must not be null; NOT NULL columns must not be null.
* A partition value must not be the literal ``__HIVE_DEFAULT_PARTITION__`` (Hive's directory
  name of the null partition, which reads back as null) and its escaped directory name must
  fit a file name (255 bytes).
* A delete needs only its primary key, partition and ordering columns; its other values are
  neither checked nor used. A partial update may lack the partition columns outside the
  primary key (`versioned.engine.feeds.schema`): its deletes are found in any partition,
  its other rows cannot be placed and are rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import partial

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.op_codes import DELETE, UPDATE, normalise_op_code, op_code_problem
from versioned.engine.feeds.problems import Checked, Problem, any_of, column_problems, given
from versioned.engine.feeds.schema import required_columns
from versioned.engine.feeds.text_values import Lenience
from versioned.engine.feeds.value_conversion import convert_value, convertible
from versioned.engine.spark.observed_count import ObservedCount
from versioned.engine.spark.types import spark_type
from versioned.errors import SchemaError
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
# Optional: ``#problems:<column>``, what a reader found wrong with a record's value of a
# column (null: nothing), and whether a reader already coerced the record (e.g. replaced
# invalid UTF-8 of a JSON line).
IN_PROBLEMS = "#problems"
IN_COERCED = "#coerced"
# Optional: names of the columns whose stored value a row keeps (a partial update, or an
# unchanged TOAST value); passed on to ``rows`` under the same name (see kept_values).
IN_KEEP = "#keep"
REJECTED_FLAG = "#rejected"
"""A column of `SplitRows.checked`: whether a row is rejected."""
COERCED_FLAG = "#coerced_row"
"""A column of `SplitRows.checked`: whether an applicable row's values were coerced."""


@dataclass(frozen=True)
class SplitRows:
    """What `split_rows` makes of a feed; every frame is lazy."""

    rows: DataFrame
    """The applicable rows: the table's columns cast to its types, ``_op`` (``I``/``U``/``D``),
    ``_seq``, and ``#keep`` if the input has it."""
    rejected: Callable[[], DataFrame]
    """Builds the frame of ``_raw``, ``_reason``, ``_source`` (the reasons are many
    expressions: built only when asked for)."""
    counts: ObservedCount
    """Counts the rejected rows (``rejected``), the applied rows whose values were coerced
    (``coerced``) and the applied deletes (``deletes``) while an action reads ``rows``."""
    checked: DataFrame
    """Every row, applicable or not, with no observation: the table's columns cast to its
    types, ``_op``, ``_seq``, `REJECTED_FLAG` and `COERCED_FLAG` (and ``#keep`` if the
    input has it), for a writer that counts what it writes itself."""


def split_rows(
    frame: DataFrame,
    spec: TableSpec,
    present: Collection[str],
    *,
    source: str,
) -> SplitRows:
    """Type the rows of a matched feed and separate the rows that cannot be applied.

    Args:
        frame: One row per record with columns: each table column in ``present`` under its
            table name (text or typed values), ``#op`` (op code as written), ``#malformed``
            (why the record could not be parsed, else null), ``#raw``, ``#source``, ``#seq``,
            and optionally ``#problems:<column>`` and ``#coerced``.
        spec: The table.
        present: Table columns the frame has; the others read as null.
        source: What the feed is, for messages.

    Returns:
        The rows (a kept column is null and unchecked), the dead letters and their counts.

    Raises:
        SchemaError: A typed input column cannot convert to its table column's type.
    """
    input_types = {f.name: f.dataType for f in frame.schema.fields}
    _require_convertible(input_types, spec, present, source)
    lenience = Lenience.of(spec)
    op = normalise_op_code(F.col(IN_OP))
    keep = F.col(IN_KEEP) if IN_KEEP in frame.columns else None
    checked = _checked_columns(spec, present, input_types, op, keep, lenience)
    problems = [
        Problem(op.isNull(), lambda: op_code_problem(F.col(IN_OP), op)),
        *checked.problems,
    ]
    coerced = [F.col(IN_COERCED)] if IN_COERCED in input_types else []
    return _split_checked(
        frame, spec, op, checked.values, problems, coerced + checked.coerced, keep
    )


@dataclass(frozen=True)
class CheckedColumns:
    """The table's columns of a feed, typed, and what is wrong with them per row."""

    values: list[Column]  # one per table column, in table order
    problems: list[Problem]  # why a row cannot be applied
    coerced: list[Column]  # whether a lenient conversion changed a row's value


def _require_convertible(
    input_types: dict[str, T.DataType], spec: TableSpec, present: Collection[str], source: str
) -> None:
    """Refuse the batch when a typed input column cannot convert to its column's type."""
    incompatible = [
        f"{name} ({input_types[name].simpleString().upper()} in the feed, "
        f"{spec.column(name).type} in the table)"
        for name in spec.column_names
        if name in present
        and not convertible(input_types[name], spark_type(spec.column(name).type))
    ]
    if incompatible:
        raise SchemaError(
            f"{source} has column(s) of a type table {spec.name} cannot take: "
            f"{', '.join(incompatible)}; cast them in the feed or fix the table definition",
            source=source,
        )


def _checked_columns(
    spec: TableSpec,
    present: Collection[str],
    input_types: dict[str, T.DataType],
    op: Column,
    keep: Column | None,
    lenience: Lenience,
) -> CheckedColumns:
    """Convert each table column and list its problems; absent columns read as null."""
    is_delete = F.coalesce(op == F.lit(DELETE), F.lit(False))
    required = set(required_columns(spec))
    out = CheckedColumns([], [], [])
    for column in spec.columns:
        target = spark_type(column.type)
        if column.name not in present:
            out.values.append(F.lit(None).cast(target).alias(column.name))
            if column.name in spec.partition_by:  # only a delete goes without it
                out.problems.append(Problem(~is_delete, partial(_unplaced, column.name)))
            continue
        src = F.col(column.name)
        converted = convert_value(src, input_types[column.name], target, lenience)
        value = converted.value
        checked = Checked(None if column.name in required else ~is_delete)
        if keep is not None and column.name not in required:  # kept: neither read nor checked
            kept = F.coalesce(F.array_contains(keep, F.lit(column.name)), F.lit(False))
            value = F.when(~kept, value)
            checked = Checked(~is_delete & ~kept)
        out.values.append(value.alias(column.name))
        out.problems.extend(
            column_problems(
                column, spec, src, input_types[column.name], converted, lenience, checked
            )
        )
        found = f"{IN_PROBLEMS}:{column.name}"  # what the reader found, e.g. a JSON object
        if found in input_types:
            reported = F.col(f"`{found}`")
            out.problems.append(Problem(checked(reported.isNotNull()), given(reported)))
        for coerced, lenient in (
            (converted.inexact, lenience.round_decimals),
            (converted.bad_utf8, lenience.replace_invalid_utf8),
        ):
            if lenient and coerced is not None:
                out.coerced.append(checked(coerced))
    return out


def _unplaced(name: str) -> Column:
    return F.lit(
        f"partition column {name} is not in the feed: an insert or update names its "
        "partition (only a delete may leave it out: it finds its key's row in any partition)"
    )


def _split_checked(
    frame: DataFrame,
    spec: TableSpec,
    op: Column,
    values: list[Column],
    problems: list[Problem],
    coerced: list[Column],
    keep: Column | None,
) -> SplitRows:
    """The applicable rows, the dead letters (built when called), the observation counting
    them, and every row checked."""
    malformed = F.col(IN_MALFORMED)
    rejected_if = malformed.isNotNull() | F.coalesce(
        any_of([p.holds for p in problems]), F.lit(False)
    )
    any_coerced = F.coalesce(any_of(coerced), F.lit(False))
    kept = [keep] if keep is not None else []
    checked_rows = frame.select(
        *values,
        op.alias(OP),
        F.col(IN_SEQ).cast("long").alias(SEQ),
        rejected_if.alias(REJECTED_FLAG),
        any_coerced.alias(COERCED_FLAG),
        *kept,
    )
    rejected_row = F.col(REJECTED_FLAG)
    counts = ObservedCount(
        checked_rows,
        rejected_row,
        "rejected",
        coerced=~rejected_row & F.col(COERCED_FLAG),
        deletes=~rejected_row & (F.col(OP) == F.lit(DELETE)),
    )
    rows = counts.frame.where(~rejected_row).select(*spec.column_names, OP, SEQ, *kept)

    def rejected() -> DataFrame:
        # The reasons are built from the input, for the rejected rows only.
        reason = F.when(malformed.isNotNull(), malformed).otherwise(
            F.concat_ws("; ", *[p.reason() for p in problems])
        )
        return frame.where(rejected_if).select(
            # the dead-letter file is UTF-8 JSON
            F.make_valid_utf8(F.col(IN_RAW).cast("string")).alias(RAW),
            reason.alias(REASON),
            F.col(IN_SOURCE).cast("string").alias(SOURCE),
        )

    return SplitRows(rows, rejected, counts, checked_rows)


def op_input(op_column: str | None, get: Callable[[str], Column]) -> Column:
    """The ``#op`` column: the op codes read by ``get`` from ``op_column``, or ``U``
    (upsert) for every row when the feed has no op-code column."""
    op = F.lit(UPDATE) if op_column is None else get(op_column).cast("string")
    return op.alias(IN_OP)
