"""The rules for text values (CSV fields, JSON values, streamed records), Spark-free.

One statement of docs/input-formats.md that both readers use: Spark's change-feed reader
(`versioned.engine.feeds.text_values`) and the Arrow one of the streaming clients
(`versioned.values.arrow_text`). Patterns are written in the common subset of Java regular
expressions and RE2 (no look-around), so each engine runs the same text.
"""

from __future__ import annotations

from dataclasses import dataclass

from versioned.errors import SchemaError
from versioned.schema import TableSpec

# Table properties opting into lossy conversion (value "true"); each coerced row is counted.
ROUND_DECIMALS = "round_decimals"
REPLACE_INVALID_UTF8 = "replace_invalid_utf8"

BOOLEANS = {"true": True, "t": True, "1": True, "false": False, "f": False, "0": False}
# Non-string types ignore surrounding spaces (only ' ', as Spark's trim); empty text is null.
TRIMMED = " "
# ISO-8601 calendar dates with a four-digit year; year 0000 is refused separately (see
# `without_year_zero`), impossible days (2023-02-29, month 13) by the cast.
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
# Date, optional time (to the minute, second, or up to microseconds; further fraction digits
# must be zero), optional offset (Z, +HH, +HHMM, +HH:MM). Without an offset: UTC (the Spark
# session time zone).
TIMESTAMP_PATTERN = (
    r"^\d{4}-\d{2}-\d{2}"
    r"([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6}0{0,3})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$"
)
YEAR_ZERO = "0000"
INTEGER_PATTERN = r"^[+-]?\d+$"
# A number as java.math.BigDecimal reads it: sign, digits, fraction, exponent.
DECIMAL_PATTERN = r"^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,6}))?$"
INFINITY_PATTERN = r"^(?i)[+-]?inf(inity)?$"
# FLOAT/DOUBLE text: decimal or scientific notation, NaN, Infinity (Java would also take hex
# floats and a d/f suffix).
FLOATING_PATTERN = r"^(?i)[+-]?((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|nan|inf|infinity)$"
ZERO_PATTERN = r"^[+-]?0*\.?0*([eE][+-]?\d+)?$"

QUOTE_LIMIT = 60  # characters of a value a message shows


def without_year_zero(pattern: str) -> str:
    """``pattern`` (anchored with ``^``) refusing year 0000, with a Java look-ahead."""
    return f"^(?!{YEAR_ZERO})" + pattern[1:]


@dataclass(frozen=True)
class Lenience:
    """Which lossy conversions a table allows (its properties); each is counted."""

    round_decimals: bool = False
    replace_invalid_utf8: bool = False

    @classmethod
    def of(cls, spec: TableSpec) -> Lenience:
        """The table's choice.

        Raises:
            SchemaError: A property is set to something other than true or false.
        """
        flags = {}
        for name in (ROUND_DECIMALS, REPLACE_INVALID_UTF8):
            raw = str(spec.properties.get(name, "false")).strip().lower()
            if raw not in ("true", "false"):
                raise SchemaError(
                    f"table {spec.name} has property {name}={raw!r}; set it to true or false",
                    property=name,
                )
            flags[name] = raw == "true"
        return cls(flags[ROUND_DECIMALS], flags[REPLACE_INVALID_UTF8])


def article(type_name: str) -> str:
    """``an INT``, ``a STRING``."""
    return f"{'an' if type_name[0] in 'AEIOU' else 'a'} {type_name}"


def not_a_value(column: str, type_name: str) -> tuple[str, str]:
    """The text around a value that is not of its column's type."""
    return f"column {column}: '", f"' is not {article(type_name)}"


def too_many_places(column: str, type_name: str) -> tuple[str, str]:
    """The text around a DECIMAL value with more places than its column's scale."""
    return (
        f"column {column}: '",
        f"' has more decimal places than {type_name} keeps; round it in the feed, or set "
        f"table property {ROUND_DECIMALS}=true",
    )


def invalid_utf8(column: str) -> tuple[str, str]:
    """The text around a value that is not valid UTF-8 (shown with U+FFFD)."""
    return (
        f"column {column}: '",
        "' is not valid UTF-8 (shown with U+FFFD); fix the encoding, or set table property "
        f"{REPLACE_INVALID_UTF8}=true",
    )


def too_long(column: str, type_name: str) -> tuple[str, str]:
    """The text around a VARCHAR/CHAR value longer than its column allows."""
    return f"column {column}: '", f"' is longer than {type_name}"


def null_problem(spec: TableSpec, column: str) -> str | None:
    """Why a null in ``column`` rejects its row, or ``None`` if a null is fine."""
    if column in spec.primary_key:
        return f"primary key column {column} is null"
    if column == spec.ordering_column:
        return f"ordering column {column} is null"
    if not spec.column(column).nullable:
        return f"column {column} is NOT NULL but null"
    return None
