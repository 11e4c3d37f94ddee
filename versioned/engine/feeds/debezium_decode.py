"""Debezium's encodings of column values, decoded in Spark expressions (no Python per row).

A value's meaning comes from the semantic type its event schema names (``schemas.enable=true``:
the field's ``name`` and ``parameters.scale``), else from the table column's type:

==================================================  ==========================================
semantic type (schema ``name``)                     value in the event -> text handed on
==================================================  ==========================================
``io.debezium.time.Date``, Connect ``Date``         days since 1970-01-01 -> ``2024-03-06``
``io.debezium.time.Timestamp``, Connect             ms since the epoch ->
``Timestamp``                                       ``2018-06-20 06:37:03.000000``
``io.debezium.time.MicroTimestamp``                 µs since the epoch -> ``... 15:13:16.945104``
``io.debezium.time.NanoTimestamp``                  ns since the epoch -> ``... .945104123``
``io.debezium.time.Time``, Connect ``Time``         ms past midnight -> ``10:15:30.123000``
``io.debezium.time.MicroTime`` / ``NanoTime``       µs / ns past midnight
``io.debezium.time.ZonedTimestamp`` / ``ZonedTime`` ISO-8601 text with offset, read as written
``org.apache.kafka.connect.data.Decimal``           base64 of the big-endian two's-complement
                                                    unscaled value; ``parameters.scale``
``io.debezium.data.VariableScaleDecimal``           ``{"scale": s, "value": base64}``
==================================================  ==========================================

Without a schema (or a field the schema does not name): a DATE column reads an integer as
epoch days; a TIMESTAMP column reads an integer in the unit of the table property
``debezium.timestamp_unit`` (``ms``, ``us`` or ``ns``) and rejects it without one (ms, µs and
ns are all common, so guessing would corrupt values silently); a DECIMAL column reads a
decimal number as written, ``{"scale": .., "value": ..}`` as a VariableScaleDecimal, and other
base64 text as the unscaled value with the column's own scale.

Timestamps without a zone (``Timestamp``, ``MicroTimestamp``, ``NanoTimestamp``) are wall-clock
times encoded as if in UTC; they are handed on as wall-clock text, which the feed conversion
reads in the session time zone like any TIMESTAMP text without an offset (UTC by default).
Decoded values are text so that the one conversion of `versioned.engine.feeds.rows` types them
and rejects what does not fit, with the usual reasons. A value that does not decode is handed
on as written, and is rejected there unless it is valid as it stands (e.g. an ISO date).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.spark.bindings import let

DAYS = ("io.debezium.time.Date", "org.apache.kafka.connect.data.Date")
MILLI_TIMESTAMP = ("io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp")
MICRO_TIMESTAMP = ("io.debezium.time.MicroTimestamp",)
NANO_TIMESTAMP = ("io.debezium.time.NanoTimestamp",)
MILLI_TIME = ("io.debezium.time.Time", "org.apache.kafka.connect.data.Time")
MICRO_TIME = ("io.debezium.time.MicroTime",)
NANO_TIME = ("io.debezium.time.NanoTime",)
DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
TIMESTAMP_UNITS = {"ms": 1000, "us": 1, "ns": None}
TIMESTAMP_UNIT_PROPERTY = "debezium.timestamp_unit"

_FIELD = [
    T.StructField("field", T.StringType()),
    T.StructField("name", T.StringType()),
    T.StructField("type", T.StringType()),
    T.StructField("parameters", T.MapType(T.StringType(), T.StringType())),
]
SCHEMA_TYPE = T.StructType(
    [
        T.StructField(
            "fields",
            T.ArrayType(
                T.StructType([*_FIELD, T.StructField("fields", T.ArrayType(T.StructType(_FIELD)))])
            ),
        )
    ]
)
"""The part of a Kafka Connect JSON schema the decoding reads (field names, semantic types,
parameters), one level of nesting deep: the envelope's ``before``/``after`` or a flat row."""

_DAY_US = 86_400_000_000
_INTEGER = r"^\s*-?[0-9]{1,19}\s*$"
_NUMBER = r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$"
_NOT_BASE64 = r"(?i)^\s*[+-]?(nan|inf|infinity)\s*$"


@dataclass(frozen=True)
class Semantic:
    """What one column's event schema says about its values, per row.

    Attributes:
        name: The semantic type (schema ``name``), null when the event has no schema or the
            schema names none.
        scale: ``parameters.scale`` as an int, null when absent.
    """

    name: Column
    scale: Column


def no_semantic() -> Semantic:
    """The semantic of values whose event has no schema."""
    return Semantic(F.lit(None).cast("string"), F.lit(None).cast("int"))


def column_semantic(schema: Column | None, field: str, *, envelope: bool) -> Semantic:
    """The semantic type of event field ``field`` in each row's schema (`SCHEMA_TYPE`).

    Args:
        schema: The parsed schema of each event, or None when the feed has none.
        field: The field's name in the event (``after``/``before`` field, or flat field).
        envelope: Events are before/after envelopes (else flat rows).
    """
    if schema is None:
        return no_semantic()
    fields = schema.getField("fields")

    def named(items: Column, name: str) -> Column:
        matches = F.filter(items, lambda x: x.getField("field") == F.lit(name))
        return F.try_element_at(matches, F.lit(1))

    if envelope:
        described = F.coalesce(
            *[named(named(fields, half).getField("fields"), field) for half in ("after", "before")]
        )
    else:
        described = named(fields, field)
    scale = F.try_element_at(described.getField("parameters"), F.lit("scale")).try_cast("int")
    return Semantic(described.getField("name"), scale)


def decode(
    text: Column,
    target: T.DataType,
    semantic: Semantic,
    *,
    column_scale: int | None = None,
    timestamp_unit: str | None = None,
    number: Column | None = None,
) -> tuple[Column, Column]:
    """Decode one column's event values for a column of type ``target``.

    Args:
        text: The values as text (JSON values as written; binary values as base64).
        target: The table column's Spark type.
        semantic: The values' semantic type per row (`column_semantic`).
        column_scale: The scale of a DECIMAL column (for base64 values without a schema).
        timestamp_unit: Unit of integer TIMESTAMP values without a schema (``ms``/``us``/``ns``).
        number: `integer_value` of ``text``, when the caller computes it once per row (the
            decodings use it many times over); else it is written out here.

    Returns:
        ``(value, problem)``: the value as text for the feed conversion (``text`` itself when
        nothing applies or decoding fails), and why the row cannot be used (or null).
    """
    if number is None:
        number = integer_value(text)
    cases = _named_cases(text, number, target, semantic)
    unnamed, problem = _unnamed_cases(
        text, number, target, semantic.name.isNull(), column_scale, timestamp_unit
    )
    cases += unnamed
    if not cases:
        return text, problem
    chosen = F.when(cases[0][0], cases[0][1])
    for condition, value in cases[1:]:
        chosen = chosen.when(condition, value)
    return F.coalesce(chosen, text), problem


def integer_value(text: Column) -> Column:
    """``text`` as a long when it is an integer (spaces around allowed), else null."""
    trimmed = F.trim(text)
    return F.when(F.regexp_like(trimmed, F.lit(_INTEGER)), trimmed.try_cast("long"))


_Case = tuple[Column, Column]  # (when, the value as text)


def _named_cases(
    text: Column, number: Column, target: T.DataType, semantic: Semantic
) -> list[_Case]:
    """Decodings chosen by the values' semantic type, those that can feed a ``target`` column."""
    name = semantic.name
    temporal = isinstance(target, T.DateType | T.TimestampType)
    textual = isinstance(target, T.StringType)
    numeric = isinstance(target, T.NumericType)
    cases: list[_Case] = []
    if temporal or textual:
        cases += [
            (name.isin(*DAYS), _date_text(number)),
            (name.isin(*MILLI_TIMESTAMP), _timestamp_text(F.try_multiply(number, F.lit(1000)))),
            (name.isin(*MICRO_TIMESTAMP), _timestamp_text(number)),
            (name.isin(*NANO_TIMESTAMP), _nano_timestamp_text(number)),
        ]
    if textual:
        cases += [
            (name.isin(*MILLI_TIME), _time_text(F.try_multiply(number, F.lit(1000)))),
            (name.isin(*MICRO_TIME), _time_text(number)),
            (name.isin(*NANO_TIME), _nano_time_text(number)),
        ]
    if numeric or textual:
        cases += [
            (name == F.lit(DECIMAL), decimal_text(text, semantic.scale)),
            (name == F.lit(VARIABLE_SCALE_DECIMAL), _variable_scale_text(text)),
        ]
    return cases


def _unnamed_cases(
    text: Column,
    number: Column,
    target: T.DataType,
    unnamed: Column,
    column_scale: int | None,
    timestamp_unit: str | None,
) -> tuple[list[_Case], Column]:
    """Decodings of values without a semantic type, by the ``target`` type alone, and why a
    value cannot be decoded (an integer TIMESTAMP of unknown unit), or null."""
    trimmed = F.trim(text)
    problem = F.lit(None).cast("string")
    if isinstance(target, T.DateType):
        return [(unnamed & number.isNotNull(), _date_text(number))], problem
    if isinstance(target, T.TimestampType):
        if timestamp_unit is not None:
            return [
                (unnamed & number.isNotNull(), _integer_timestamp(number, timestamp_unit))
            ], problem
        problem = F.when(
            unnamed & number.isNotNull(),
            F.concat(
                F.lit("'"),
                trimmed,
                F.lit(
                    "' is an integer TIMESTAMP without a schema (ms, µs or ns?); send "
                    "schemas (value.converter.schemas.enable=true) or set table property "
                    f"{TIMESTAMP_UNIT_PROPERTY} to ms, us or ns"
                ),
            ),
        )
        return [], problem
    if isinstance(target, T.DecimalType):
        scale = F.lit(column_scale if column_scale is not None else 0)
        return [
            (unnamed & trimmed.startswith("{"), _variable_scale_text(text)),
            (
                unnamed
                & ~F.regexp_like(trimmed, F.lit(_NUMBER))
                & ~F.regexp_like(trimmed, F.lit(_NOT_BASE64)),
                decimal_text(text, scale),
            ),
        ], problem
    return [], problem


def decimal_text(base64: Column, scale: Column) -> Column:
    """Decimal text of a base64 big-endian two's-complement unscaled value (null if invalid).

    Up to 16 bytes (DECIMAL(38)) are read: the hex digits are split into two unsigned 64-bit
    halves combined in DECIMAL(38,0); a negative value is read as the complement plus one.
    Each step is bound once (`let`): written out, the steps' reuse made a tree of over a
    hundred copies of the base64 decoding per column.
    """

    def of_digits(digits: Column, scale: Column) -> Column:
        negative = F.substring(digits, 1, 1) >= F.lit("8")
        magnitude_hex = F.when(
            negative, F.translate(digits, "0123456789ABCDEF", "FEDCBA9876543210")
        ).otherwise(digits)

        def of_padded(padded: Column) -> Column:
            high = F.conv(F.substring(padded, 1, 16), 16, 10).try_cast("decimal(38,0)")
            low = F.conv(F.substring(padded, 17, 16), 16, 10).try_cast("decimal(38,0)")
            two_64 = F.lit(Decimal(2**64)).cast("decimal(38,0)")
            return let(
                F.try_add(F.try_multiply(high, two_64), low),
                lambda magnitude: F.when(negative, F.try_add(magnitude, F.lit(1))).otherwise(
                    magnitude
                ),
            )

        valid = (F.length(digits) > F.lit(0)) & (F.length(digits) <= F.lit(32))
        sign = F.when(negative, F.lit("-")).otherwise(F.lit(""))
        return let(
            let(F.lpad(magnitude_hex, 32, "0"), of_padded),
            lambda absolute: F.when(
                valid & absolute.isNotNull() & scale.isNotNull(),
                F.concat(sign, _scaled(absolute.cast("decimal(38,0)").cast("string"), scale)),
            ),
        )

    digits = F.hex(F.try_to_binary(F.trim(base64), F.lit("base64")))
    return let(scale, lambda bound_scale: let(digits, lambda d: of_digits(d, bound_scale)))


def _scaled(text: Column, scale: Column) -> Column:
    """The unscaled integer ``text`` with ``scale`` digits after the point (scale >= 0) or
    ``-scale`` zeros appended (scale < 0)."""

    def of_text(text: Column) -> Column:
        # lpad cuts a longer text down, so pad to at least the text's own length
        padded = F.lpad(text, F.greatest(F.length(text), scale + F.lit(1)), "0")
        return let(
            padded,
            lambda padded: F.when(
                scale > F.lit(0),
                F.concat(
                    F.left(padded, F.length(padded) - scale),
                    F.lit("."),
                    F.right(padded, scale),
                ),
            ).otherwise(F.concat(text, F.repeat(F.lit("0"), -scale))),
        )

    return let(text, of_text)


def _variable_scale_text(text: Column) -> Column:
    return let(
        F.from_json(text, "scale INT, value STRING"),
        lambda parsed: decimal_text(parsed.getField("value"), parsed.getField("scale")),
    )


def _date_text(days: Column) -> Column:
    epoch = F.lit("1970-01-01").cast("date")
    return F.date_add(epoch, days.try_cast("int")).cast("string")


def _floor_div(value: Column, divisor: int) -> Column:
    """Exact floor division of a long by a positive constant."""
    exact = F.try_subtract(value, F.pmod(value, F.lit(divisor)))
    return F.round(exact / F.lit(divisor)).cast("long")


def _time_text(micros: Column, nanos: Column | None = None) -> Column:
    """``HH:mm:ss.ffffff`` (plus three digits of nanoseconds when they are not zero)."""
    in_range = (micros >= F.lit(0)) & (micros < F.lit(_DAY_US))
    parts = [
        F.lpad(_floor_div(micros, 3_600_000_000).cast("string"), 2, "0"),
        F.lit(":"),
        F.lpad(_floor_div(F.pmod(micros, F.lit(3_600_000_000)), 60_000_000).cast("string"), 2, "0"),
        F.lit(":"),
        F.lpad(_floor_div(F.pmod(micros, F.lit(60_000_000)), 1_000_000).cast("string"), 2, "0"),
        F.lit("."),
        F.lpad(F.pmod(micros, F.lit(1_000_000)).cast("string"), 6, "0"),
    ]
    if nanos is not None:
        parts.append(
            F.when(nanos != F.lit(0), F.lpad(nanos.cast("string"), 3, "0")).otherwise(F.lit(""))
        )
    return F.when(in_range, F.concat(*parts))


def _timestamp_text(micros: Column, nanos: Column | None = None) -> Column:
    days = _floor_div(micros, _DAY_US)
    time = _time_text(F.pmod(micros, F.lit(_DAY_US)), nanos)
    return F.concat(_date_text(days), F.lit(" "), time)


def _nano_timestamp_text(nanos: Column) -> Column:
    return _timestamp_text(_floor_div(nanos, 1000), F.pmod(nanos, F.lit(1000)))


def _nano_time_text(nanos: Column) -> Column:
    return _time_text(_floor_div(nanos, 1000), F.pmod(nanos, F.lit(1000)))


def _integer_timestamp(number: Column, unit: str) -> Column:
    if unit == "ns":
        return _nano_timestamp_text(number)
    return _timestamp_text(F.try_multiply(number, F.lit(TIMESTAMP_UNITS[unit])))
