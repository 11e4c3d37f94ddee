"""What makes a feed row unusable, per table column: each problem a cheap per-row test and the
reason text built only for the rejected rows (`versioned.engine.feeds.rows` lists them for
each column and splits the rows by them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.text_values import REPLACE_INVALID_UTF8, ROUND_DECIMALS, Lenience
from versioned.engine.feeds.value_conversion import ConvertedValue
from versioned.engine.spark.types import max_length
from versioned.schema import Column as TableColumn
from versioned.schema import TableSpec
from versioned.storage.partition_paths import (
    DEFAULT_PARTITION_NAME,
    MAX_SEGMENT_BYTES,
    escape_path_name,
    escaped_chars_pattern,
)
from versioned.values import orc_values

_QUOTE_LIMIT = 60


@dataclass(frozen=True)
class Problem:
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
class Checked:
    """Which rows a column's checks apply to: all of them (``only`` None), or those where
    ``only`` holds (not deletes, not kept values)."""

    only: Column | None

    def __call__(self, condition: Column) -> Column:
        return condition if self.only is None else self.only & condition


def given(message: Column) -> Callable[[], Column]:
    return lambda: message


def any_of(flags: list[Column]) -> Column:
    """Whether any flag holds: true, or false or null (callers coalesce null to false)."""
    if not flags:
        return F.lit(False)
    if len(flags) == 1:
        return flags[0]
    # One call into the JVM instead of one per flag. Like the OR of the flags it is true
    # when any flag is; else false or null, which callers read as false.
    return F.greatest(*flags)


def column_problems(
    column: TableColumn,
    spec: TableSpec,
    src: Column,
    src_type: T.DataType,
    converted: ConvertedValue,
    lenience: Lenience,
    checked: Checked,
) -> list[Problem]:
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
            Problem(checked(converted.failed), quoting(f"' is not {article} {type_name}"))
        )
    if not lenience.round_decimals and converted.inexact is not None:
        problems.append(
            Problem(
                checked(converted.inexact),
                quoting(
                    f"' has more decimal places than {type_name} keeps; round it in the "
                    f"feed, or set table property {ROUND_DECIMALS}=true"
                ),
            )
        )
    if not lenience.replace_invalid_utf8 and converted.bad_utf8 is not None:
        problems.append(
            Problem(
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
            Problem(
                checked(F.length(value) > F.lit(limit)),
                lambda: F.concat(
                    F.lit(f"column {name}: '"),
                    _quoted(F.make_valid_utf8(value)),
                    F.lit(f"' is longer than {type_name}"),
                ),
            )
        )
    if name in spec.partition_by:
        problems.extend(_partition_problems(name, type_name, value))
    if spec.file_format == "orc":
        problems.extend(_orc_problems(type_name, value, checked, quoting))
    is_null = value.isNull()
    if converted.failed is not None:
        is_null = is_null & ~converted.failed
    if name in spec.primary_key:
        problems.append(Problem(is_null, literal(f"primary key column {name} is null")))
    elif name == spec.ordering_column:
        problems.append(Problem(is_null, literal(f"ordering column {name} is null")))
    elif not column.nullable:
        problems.append(Problem(checked(is_null), literal(f"column {name} is NOT NULL but null")))
    return problems


def _orc_problems(
    type_name: str, value: Column, checked: Checked, quoting: Callable[[str], Callable[[], Column]]
) -> list[Problem]:
    """Values ORC files do not give back as written, dead-lettered rather than changed:
    a day the hybrid calendar skips, and a time in the last second before 1970 with a
    fraction, which ORC's Java readers read one second later (its seconds are stored
    rounded toward zero, its fraction apart)."""
    first, last = (F.lit(day) for day in orc_values.GAP_DAYS)
    if type_name == "DATE":
        day = F.unix_date(value)
        return [
            Problem(
                checked(day.between(first, last)),
                quoting(f"' {orc_values.GAP_DATE}"),
            )
        ]
    if type_name == "TIMESTAMP":
        micros = F.unix_micros(value)
        day = F.floor(micros / F.lit(orc_values.DAY_MICROS))
        last_second = (micros > F.lit(-1_000_000)) & (micros < F.lit(0))
        return [
            Problem(
                checked(day.between(first, last)),
                quoting(f"' {orc_values.GAP_TIMESTAMP}"),
            ),
            Problem(
                checked(last_second),
                quoting(f"' {orc_values.LAST_SECOND}"),
            ),
        ]
    return []


_PLAIN_TEXT_LENGTHS = {"BOOLEAN": 5, "TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20}
"""Types whose values' text is ASCII that no path escaping touches, at most this long, and
never Hive's name of the null partition: such a partition value needs no check per row
unless the column's name is long (one check less per row of a first load)."""


def _partition_problems(name: str, type_name: str, value: Column) -> list[Problem]:
    """A partition value must not name the null partition, and must fit a directory name."""
    prefix = len(escape_path_name(name).encode()) + 1
    longest = _PLAIN_TEXT_LENGTHS.get(type_name)
    if longest is not None and prefix + longest <= MAX_SEGMENT_BYTES:
        return []
    text = value.cast("string")
    escaped = F.length(text) - F.length(F.regexp_replace(text, escaped_chars_pattern(), ""))
    size = F.lit(prefix) + F.octet_length(text) + 2 * escaped
    # Escaping turns a byte into at most three: only a value that could be too long is
    # matched against the pattern (``&`` does not evaluate its right side when the left
    # is false).
    may_be_long = F.lit(prefix) + 3 * F.octet_length(text) > F.lit(MAX_SEGMENT_BYTES)
    return [
        Problem(
            text == F.lit(DEFAULT_PARTITION_NAME),
            lambda: F.lit(
                f"partition column {name}: '{DEFAULT_PARTITION_NAME}' is Hive's name of the "
                "null partition and would read back as null; send null (or an empty value) "
                "for the default partition"
            ),
        ),
        Problem(
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
