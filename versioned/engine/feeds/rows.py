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
  neither checked nor used.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.op_codes import DELETE, UPDATE, normalise_op_code, op_code_problem
from versioned.engine.feeds.schema import required_columns
from versioned.engine.feeds.text_values import REPLACE_INVALID_UTF8, ROUND_DECIMALS, Lenience
from versioned.engine.feeds.value_conversion import ConvertedValue, convert_value, convertible
from versioned.engine.spark.observed_count import ObservedCount
from versioned.engine.spark.types import max_length, spark_type
from versioned.errors import SchemaError
from versioned.layouts import orc_values
from versioned.schema import Column as TableColumn
from versioned.schema import TableSpec
from versioned.storage.partition_paths import (
    DEFAULT_PARTITION_NAME,
    MAX_SEGMENT_BYTES,
    escape_path_name,
    escaped_chars_pattern,
)

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
_IN_REJECTED = "#rejected"
_IN_COERCED = "#coerced_row"


_QUOTE_LIMIT = 60


def split_rows(
    frame: DataFrame, spec: TableSpec, present: Collection[str], *, source: str
) -> tuple[DataFrame, Callable[[], DataFrame], ObservedCount]:
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
        ``(rows, rejected, counts)``: ``rows`` has the table's columns cast to its types
        plus ``_op`` (``I``/``U``/``D``) and ``_seq`` (and ``#keep`` if ``frame`` has it: a
        kept column is null and unchecked); ``rejected`` builds the frame of ``_raw``,
        ``_reason``, ``_source`` (the reasons are many expressions: built only when asked
        for). Both frames are lazy. ``counts`` counts the rejected rows (``rejected``), the
        applied rows whose values were coerced (``coerced``) and the applied deletes
        (``deletes``) while an action reads ``rows``.

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
        _Problem(op.isNull(), lambda: op_code_problem(F.col(IN_OP), op)),
        *checked.problems,
    ]
    coerced = [F.col(IN_COERCED)] if IN_COERCED in input_types else []
    return _split_checked(
        frame, spec, op, checked.values, problems, coerced + checked.coerced, keep
    )


@dataclass(frozen=True)
class _Problem:
    """One way a row can be unusable: a cheap test, and the text saying why.

    Rows are tested with ``holds`` alone; ``message`` is built only for the rejected rows.
    Spark compiles the per-row code of a stage into one Java method, and the JVM interprets
    (never compiles) a method over 8000 bytes: the message texts of a wide table inline would
    make every row of a clean batch pay for them.
    """

    holds: Column  # true when the row has this problem (null counts as false)
    message: Callable[[], Column]
    """Builds the reason text, read only where ``holds`` is true (built only when the
    dead letters are: each text is several expressions, each a call into the JVM)."""

    def reason(self) -> Column:
        return F.when(self.holds, self.message())


@dataclass(frozen=True)
class _CheckedColumns:
    """The table's columns of a feed, typed, and what is wrong with them per row."""

    values: list[Column]  # one per table column, in table order
    problems: list[_Problem]  # why a row cannot be applied
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
) -> _CheckedColumns:
    """Convert each table column and list its problems; absent columns read as null."""
    is_delete = F.coalesce(op == F.lit(DELETE), F.lit(False))
    required = set(required_columns(spec))
    out = _CheckedColumns([], [], [])
    for column in spec.columns:
        target = spark_type(column.type)
        if column.name not in present:
            out.values.append(F.lit(None).cast(target).alias(column.name))
            continue
        src = F.col(column.name)
        converted = convert_value(src, input_types[column.name], target, lenience)
        value = converted.value
        checked = _Checked(None if column.name in required else ~is_delete)
        if keep is not None and column.name not in required:  # kept: neither read nor checked
            kept = F.coalesce(F.array_contains(keep, F.lit(column.name)), F.lit(False))
            value = F.when(~kept, value)
            checked = _Checked(~is_delete & ~kept)
        out.values.append(value.alias(column.name))
        out.problems.extend(
            _problems(column, spec, src, input_types[column.name], converted, lenience, checked)
        )
        found = f"{IN_PROBLEMS}:{column.name}"  # what the reader found, e.g. a JSON object
        if found in input_types:
            reported = F.col(f"`{found}`")
            out.problems.append(_Problem(checked(reported.isNotNull()), _given(reported)))
        for coerced, lenient in (
            (converted.inexact, lenience.round_decimals),
            (converted.bad_utf8, lenience.replace_invalid_utf8),
        ):
            if lenient and coerced is not None:
                out.coerced.append(checked(coerced))
    return out


@dataclass(frozen=True)
class _Checked:
    """Which rows a column's checks apply to: all of them (``only`` None), or those where
    ``only`` holds (not deletes, not kept values)."""

    only: Column | None

    def __call__(self, condition: Column) -> Column:
        return condition if self.only is None else self.only & condition


def _split_checked(
    frame: DataFrame,
    spec: TableSpec,
    op: Column,
    values: list[Column],
    problems: list[_Problem],
    coerced: list[Column],
    keep: Column | None,
) -> tuple[DataFrame, Callable[[], DataFrame], ObservedCount]:
    """The applicable rows, the dead letters (built when called), and the observation
    counting them."""
    malformed = F.col(IN_MALFORMED)
    rejected_if = malformed.isNotNull() | F.coalesce(
        _any([p.holds for p in problems]), F.lit(False)
    )
    any_coerced = F.coalesce(_any(coerced), F.lit(False))
    kept = [keep] if keep is not None else []
    checked_rows = frame.select(
        *values,
        op.alias(OP),
        F.col(IN_SEQ).cast("long").alias(SEQ),
        rejected_if.alias(_IN_REJECTED),
        any_coerced.alias(_IN_COERCED),
        *kept,
    )
    rejected_row = F.col(_IN_REJECTED)
    counts = ObservedCount(
        checked_rows,
        rejected_row,
        "rejected",
        coerced=~rejected_row & F.col(_IN_COERCED),
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

    return rows, rejected, counts


def op_input(op_column: str | None, get: Callable[[str], Column]) -> Column:
    """The ``#op`` column: the op codes read by ``get`` from ``op_column``, or ``U``
    (upsert) for every row when the feed has no op-code column."""
    op = F.lit(UPDATE) if op_column is None else get(op_column).cast("string")
    return op.alias(IN_OP)


def _given(message: Column) -> Callable[[], Column]:
    return lambda: message


def _any(flags: list[Column]) -> Column:
    """Whether any flag holds: true, or false or null (callers coalesce null to false)."""
    if not flags:
        return F.lit(False)
    if len(flags) == 1:
        return flags[0]
    # One call into the JVM instead of one per flag. Like the OR of the flags it is true
    # when any flag is; else false or null, which callers read as false.
    return F.greatest(*flags)


def _problems(
    column: TableColumn,
    spec: TableSpec,
    src: Column,
    src_type: T.DataType,
    converted: ConvertedValue,
    lenience: Lenience,
    checked: _Checked,
) -> list[_Problem]:
    name, type_name, value = column.name, column.type, converted.value
    article = "an" if type_name[0] in "AEIOU" else "a"

    def quoting(text: str) -> Callable[[], Column]:
        def message() -> Column:
            shown = _quoted(F.make_valid_utf8(_as_text(src, src_type)))
            return F.concat(F.lit(f"column {name}: '"), shown, F.lit(text))

        return message

    def literal(text: str) -> Callable[[], Column]:
        return lambda: F.lit(text)

    problems = []
    if converted.failed is not None:
        problems.append(
            _Problem(checked(converted.failed), quoting(f"' is not {article} {type_name}"))
        )
    if not lenience.round_decimals and converted.inexact is not None:
        problems.append(
            _Problem(
                checked(converted.inexact),
                quoting(
                    f"' has more decimal places than {type_name} keeps; round it in the "
                    f"feed, or set table property {ROUND_DECIMALS}=true"
                ),
            )
        )
    if not lenience.replace_invalid_utf8 and converted.bad_utf8 is not None:
        problems.append(
            _Problem(
                checked(converted.bad_utf8),
                quoting(
                    "' is not valid UTF-8 (shown with U+FFFD); fix the encoding, or set "
                    f"table property {REPLACE_INVALID_UTF8}=true"
                ),
            )
        )
    limit = max_length(type_name)
    if limit is not None:
        problems.append(
            _Problem(
                checked(F.length(value) > F.lit(limit)),
                lambda: F.concat(
                    F.lit(f"column {name}: '"),
                    _quoted(F.make_valid_utf8(value)),
                    F.lit(f"' is longer than {type_name}"),
                ),
            )
        )
    if name in spec.partition_by:
        problems.extend(_partition_problems(name, value))
    if spec.file_format == "orc":
        problems.extend(_orc_problems(type_name, value, checked, quoting))
    is_null = value.isNull()
    if converted.failed is not None:
        is_null = is_null & ~converted.failed
    if name in spec.primary_key:
        problems.append(_Problem(is_null, literal(f"primary key column {name} is null")))
    elif name == spec.ordering_column:
        problems.append(_Problem(is_null, literal(f"ordering column {name} is null")))
    elif not column.nullable:
        problems.append(_Problem(checked(is_null), literal(f"column {name} is NOT NULL but null")))
    return problems


def _orc_problems(
    type_name: str, value: Column, checked: _Checked, quoting: Callable[[str], Callable[[], Column]]
) -> list[_Problem]:
    """Values ORC files do not give back as written, dead-lettered rather than changed:
    a day the hybrid calendar skips, and a time in the last second before 1970 with a
    fraction, which ORC's Java readers read one second later (its seconds are stored
    rounded toward zero, its fraction apart)."""
    first, last = (F.lit(day) for day in orc_values.GAP_DAYS)
    if type_name == "DATE":
        day = F.unix_date(value)
        return [
            _Problem(
                checked(day.between(first, last)),
                quoting(f"' {orc_values.GAP_DATE}"),
            )
        ]
    if type_name == "TIMESTAMP":
        micros = F.unix_micros(value)
        day = F.floor(micros / F.lit(orc_values.DAY_MICROS))
        last_second = (micros > F.lit(-1_000_000)) & (micros < F.lit(0))
        return [
            _Problem(
                checked(day.between(first, last)),
                quoting(f"' {orc_values.GAP_TIMESTAMP}"),
            ),
            _Problem(
                checked(last_second),
                quoting(f"' {orc_values.LAST_SECOND}"),
            ),
        ]
    return []


def _partition_problems(name: str, value: Column) -> list[_Problem]:
    """A partition value must not name the null partition, and must fit a directory name."""
    text = value.cast("string")
    escaped = F.length(text) - F.length(F.regexp_replace(text, escaped_chars_pattern(), ""))
    prefix = len(escape_path_name(name).encode()) + 1
    size = F.lit(prefix) + F.octet_length(text) + 2 * escaped
    # Escaping turns a byte into at most three: only a value that could be too long is
    # matched against the pattern (``&`` does not evaluate its right side when the left
    # is false).
    may_be_long = F.lit(prefix) + 3 * F.octet_length(text) > F.lit(MAX_SEGMENT_BYTES)
    return [
        _Problem(
            text == F.lit(DEFAULT_PARTITION_NAME),
            lambda: F.lit(
                f"partition column {name}: '{DEFAULT_PARTITION_NAME}' is Hive's name of the "
                "null partition and would read back as null; send null (or an empty value) "
                "for the default partition"
            ),
        ),
        _Problem(
            may_be_long & (size > F.lit(MAX_SEGMENT_BYTES)),
            lambda: F.concat(
                F.lit(f"partition column {name}: '"),
                _quoted(F.make_valid_utf8(text)),
                F.lit("' makes a directory name of "),
                size.cast("string"),
                F.lit(f" bytes, longer than the {MAX_SEGMENT_BYTES} file systems allow"),
            ),
        ),
    ]


def _as_text(src: Column, src_type: T.DataType) -> Column:
    if isinstance(src_type, T.BinaryType):
        return F.base64(src)
    return src.cast("string")


def _quoted(text: Column) -> Column:
    return F.when(
        F.length(text) > F.lit(_QUOTE_LIMIT),
        F.concat(F.substring(text, 1, _QUOTE_LIMIT), F.lit("...")),
    ).otherwise(text)
