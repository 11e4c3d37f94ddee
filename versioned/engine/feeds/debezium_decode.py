"""Debezium's encodings of column values, decoded in Spark SQL expressions (no Python per row).

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

The decodings are written as SQL text, one `F.expr` per column: built from PySpark's Column
functions they took some 1,800 py4j round trips a column (about 9 s for a 16-column table on
each batch, before Spark saw a row); as text the JVM parses each column's expression in one
call. The inputs are SQL expressions too: references to columns bound beforehand
(`versioned.engine.spark.bindings.Bindings.bind_sql`). String constants that are not plain
text go in as base64 (`sql_text`), so the caller's string-literal settings cannot change them.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from pyspark.sql import types as T

from versioned.engine.spark.bindings import lambda_variable, let

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
_PLAIN = re.compile(r"[A-Za-z0-9 _.,:;?!()+*/<>=@#$%&|~^\[\]{}-]*")


def sql_text(value: str) -> str:
    """A SQL expression for the string ``value``: a literal when it is plain text, else its
    UTF-8 bytes as base64 (no quote or backslash reaches the SQL parser, whatever the
    session's ``spark.sql.parser.escapedStringLiterals``)."""
    if _PLAIN.fullmatch(value):
        return f"'{value}'"
    encoded = base64.b64encode(value.encode()).decode()
    return f"CAST(unbase64('{encoded}') AS STRING)"


@dataclass(frozen=True)
class Semantic:
    """What one column's event schema says about its values, per row (SQL expressions).

    Attributes:
        name: The semantic type (schema ``name``), null when the event has no schema or the
            schema names none.
        scale: ``parameters.scale`` as an int, null when absent.
    """

    name: str
    scale: str


def no_semantic() -> Semantic:
    """The semantic of values whose event has no schema."""
    return Semantic("CAST(NULL AS STRING)", "CAST(NULL AS INT)")


def column_semantic(schema: str | None, field: str, *, envelope: bool) -> Semantic:
    """The semantic type of event field ``field`` in each row's schema (`SCHEMA_TYPE`).

    Args:
        schema: The parsed schema of each event (a SQL expression), or None when the feed
            has none.
        field: The field's name in the event (``after``/``before`` field, or flat field).
        envelope: Events are before/after envelopes (else flat rows).
    """
    if schema is None:
        return no_semantic()
    fields = f"({schema}).`fields`"

    def named(items: str, name: str) -> str:
        x = lambda_variable()
        return f"try_element_at(filter({items}, {x} -> {x}.`field` = {sql_text(name)}), 1)"

    if envelope:
        halves = [named(f"({named(fields, half)}).`fields`", field) for half in ("after", "before")]
        described = f"coalesce({', '.join(halves)})"
    else:
        described = named(fields, field)
    scale = f"try_cast(try_element_at(({described}).`parameters`, 'scale') AS INT)"
    return Semantic(f"({described}).`name`", scale)


def decode(
    text: str,
    target: T.DataType,
    semantic: Semantic,
    *,
    column_scale: int | None = None,
    timestamp_unit: str | None = None,
    number: str | None = None,
) -> tuple[str, str]:
    """Decode one column's event values for a column of type ``target``.

    Args:
        text: The values as text (JSON values as written; binary values as base64), a SQL
            expression (best a bound column: it is used many times over).
        target: The table column's Spark type.
        semantic: The values' semantic type per row (`column_semantic`).
        column_scale: The scale of a DECIMAL column (for base64 values without a schema).
        timestamp_unit: Unit of integer TIMESTAMP values without a schema (``ms``/``us``/``ns``).
        number: `integer_value` of ``text``, when the caller computes it once per row (the
            decodings use it many times over); else it is written out here.

    Returns:
        ``(value, problem)`` as SQL expressions: the value as text for the feed conversion
        (``text`` itself when nothing applies or decoding fails), and why the row cannot be
        used (or null).
    """
    if number is None:
        number = integer_value(text)
    cases = _named_cases(text, number, target, semantic)
    unnamed, problem = _unnamed_cases(
        text, number, target, f"({semantic.name} IS NULL)", column_scale, timestamp_unit
    )
    cases += unnamed
    if not cases:
        return text, problem
    chosen = " ".join(f"WHEN {condition} THEN {value}" for condition, value in cases)
    return f"coalesce(CASE {chosen} END, {text})", problem


def integer_value(text: str) -> str:
    """``text`` as a long when it is an integer (spaces around allowed), else null."""
    trimmed = f"trim({text})"
    integer = f"regexp_like({trimmed}, {sql_text(_INTEGER)})"
    return f"CASE WHEN {integer} THEN try_cast({trimmed} AS BIGINT) END"


_Case = tuple[str, str]  # (when, the value as text)


def _named_cases(text: str, number: str, target: T.DataType, semantic: Semantic) -> list[_Case]:
    """Decodings chosen by the values' semantic type, those that can feed a ``target`` column."""
    name = semantic.name

    def named(*names: str) -> str:
        return f"({name} IN ({', '.join(sql_text(n) for n in names)}))"

    temporal = isinstance(target, T.DateType | T.TimestampType)
    textual = isinstance(target, T.StringType)
    numeric = isinstance(target, T.NumericType)
    cases: list[_Case] = []
    if temporal or textual:
        cases += [
            (named(*DAYS), _date_text(number)),
            (named(*MILLI_TIMESTAMP), _timestamp_text(f"try_multiply({number}, 1000)")),
            (named(*MICRO_TIMESTAMP), _timestamp_text(number)),
            (named(*NANO_TIMESTAMP), _nano_timestamp_text(number)),
        ]
    if textual:
        cases += [
            (named(*MILLI_TIME), _time_text(f"try_multiply({number}, 1000)")),
            (named(*MICRO_TIME), _time_text(number)),
            (named(*NANO_TIME), _nano_time_text(number)),
        ]
    if numeric or textual:
        cases += [
            (named(DECIMAL), decimal_text(text, semantic.scale)),
            (named(VARIABLE_SCALE_DECIMAL), _variable_scale_text(text)),
        ]
    return cases


def _unnamed_cases(
    text: str,
    number: str,
    target: T.DataType,
    unnamed: str,
    column_scale: int | None,
    timestamp_unit: str | None,
) -> tuple[list[_Case], str]:
    """Decodings of values without a semantic type, by the ``target`` type alone, and why a
    value cannot be decoded (an integer TIMESTAMP of unknown unit), or null."""
    trimmed = f"trim({text})"
    problem = "CAST(NULL AS STRING)"
    integral = f"({unnamed} AND {number} IS NOT NULL)"
    if isinstance(target, T.DateType):
        return [(integral, _date_text(number))], problem
    if isinstance(target, T.TimestampType):
        if timestamp_unit is not None:
            return [(integral, _integer_timestamp(number, timestamp_unit))], problem
        message = sql_text(
            "' is an integer TIMESTAMP without a schema (ms, µs or ns?); send "
            "schemas (value.converter.schemas.enable=true) or set table property "
            f"{TIMESTAMP_UNIT_PROPERTY} to ms, us or ns"
        )
        problem = f"CASE WHEN {integral} THEN concat({sql_text(chr(39))}, {trimmed}, {message}) END"
        return [], problem
    if isinstance(target, T.DecimalType):
        scale = str(column_scale if column_scale is not None else 0)
        return [
            (f"({unnamed} AND startswith({trimmed}, '{{'))", _variable_scale_text(text)),
            (
                f"({unnamed} AND NOT regexp_like({trimmed}, {sql_text(_NUMBER)})"
                f" AND NOT regexp_like({trimmed}, {sql_text(_NOT_BASE64)}))",
                decimal_text(text, scale),
            ),
        ], problem
    return [], problem


def decimal_text(base64_text: str, scale: str) -> str:
    """Decimal text of a base64 big-endian two's-complement unscaled value (null if invalid).

    Up to 16 bytes (DECIMAL(38)) are read: the hex digits are split into two unsigned 64-bit
    halves combined in DECIMAL(38,0); a negative value is read as the complement plus one.
    Each step is bound once (`let`): written out, the steps' reuse made a tree of over a
    hundred copies of the base64 decoding per column.
    """

    def of_digits(digits: str, scale: str) -> str:
        negative = f"(substring({digits}, 1, 1) >= '8')"
        magnitude_hex = (
            f"CASE WHEN {negative} THEN translate({digits}, '0123456789ABCDEF', "
            f"'FEDCBA9876543210') ELSE {digits} END"
        )

        def of_padded(padded: str) -> str:
            high = f"try_cast(conv(substring({padded}, 1, 16), 16, 10) AS DECIMAL(38,0))"
            low = f"try_cast(conv(substring({padded}, 17, 16), 16, 10) AS DECIMAL(38,0))"
            two_64 = f"CAST({2**64}BD AS DECIMAL(38,0))"
            return let(
                f"try_add(try_multiply({high}, {two_64}), {low})",
                lambda magnitude: (
                    f"CASE WHEN {negative} THEN try_add({magnitude}, 1) ELSE {magnitude} END"
                ),
            )

        valid = f"(length({digits}) > 0 AND length({digits}) <= 32)"
        sign = f"CASE WHEN {negative} THEN '-' ELSE '' END"
        return let(
            let(f"lpad({magnitude_hex}, 32, '0')", of_padded),
            lambda absolute: (
                f"CASE WHEN {valid} AND {absolute} IS NOT NULL AND {scale} IS NOT NULL THEN "
                f"concat({sign}, "
                f"{_scaled(f'CAST(CAST({absolute} AS DECIMAL(38,0)) AS STRING)', scale)}) END"
            ),
        )

    digits = f"hex(try_to_binary(trim({base64_text}), 'base64'))"
    return let(scale, lambda bound_scale: let(digits, lambda d: of_digits(d, bound_scale)))


def _scaled(text: str, scale: str) -> str:
    """The unscaled integer ``text`` with ``scale`` digits after the point (scale >= 0) or
    ``-scale`` zeros appended (scale < 0)."""

    def of_text(text: str) -> str:
        # lpad cuts a longer text down, so pad to at least the text's own length
        padded = f"lpad({text}, greatest(length({text}), ({scale}) + 1), '0')"
        return let(
            padded,
            lambda padded: (
                f"CASE WHEN ({scale}) > 0 THEN concat(left({padded}, length({padded}) - "
                f"({scale})), '.', right({padded}, {scale})) "
                f"ELSE concat({text}, repeat('0', -({scale}))) END"
            ),
        )

    return let(text, of_text)


def _variable_scale_text(text: str) -> str:
    return let(
        f"from_json({text}, 'scale INT, value STRING')",
        lambda parsed: decimal_text(f"{parsed}.`value`", f"{parsed}.`scale`"),
    )


def _date_text(days: str) -> str:
    return f"CAST(date_add(CAST('1970-01-01' AS DATE), try_cast({days} AS INT)) AS STRING)"


def _floor_div(value: str, divisor: int) -> str:
    """Exact floor division of a long by a positive constant."""
    exact = f"try_subtract({value}, pmod({value}, {divisor}))"
    return f"CAST(round({exact} / {divisor}) AS BIGINT)"


def _time_text(micros: str, nanos: str | None = None) -> str:
    """``HH:mm:ss.ffffff`` (plus three digits of nanoseconds when they are not zero)."""
    in_range = f"({micros} >= 0 AND {micros} < {_DAY_US})"

    def two(value: str) -> str:
        return f"lpad(CAST({value} AS STRING), 2, '0')"

    parts = [
        two(_floor_div(micros, 3_600_000_000)),
        "':'",
        two(_floor_div(f"pmod({micros}, 3600000000)", 60_000_000)),
        "':'",
        two(_floor_div(f"pmod({micros}, 60000000)", 1_000_000)),
        "'.'",
        f"lpad(CAST(pmod({micros}, 1000000) AS STRING), 6, '0')",
    ]
    if nanos is not None:
        parts.append(
            f"CASE WHEN {nanos} != 0 THEN lpad(CAST({nanos} AS STRING), 3, '0') ELSE '' END"
        )
    return f"CASE WHEN {in_range} THEN concat({', '.join(parts)}) END"


def _timestamp_text(micros: str, nanos: str | None = None) -> str:
    days = _floor_div(micros, _DAY_US)
    time = _time_text(f"pmod({micros}, {_DAY_US})", nanos)
    return f"concat({_date_text(days)}, ' ', {time})"


def _nano_timestamp_text(nanos: str) -> str:
    return _timestamp_text(_floor_div(nanos, 1000), f"pmod({nanos}, 1000)")


def _nano_time_text(nanos: str) -> str:
    return _time_text(_floor_div(nanos, 1000), f"pmod({nanos}, 1000)")


def _integer_timestamp(number: str, unit: str) -> str:
    if unit == "ns":
        return _nano_timestamp_text(number)
    return _timestamp_text(f"try_multiply({number}, {TIMESTAMP_UNITS[unit]})")
