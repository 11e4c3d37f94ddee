"""Row values of Debezium events: each table column's value, decoded, per event form.

`envelope_row` and `flattened_row` read the op code and the raw row values of the two event
forms; `row_values` decodes them by their semantic type
(`versioned.engine.feeds.debezium_decode`) and marks TOAST placeholders, whose columns keep
their stored values (`versioned.engine.feeds.kept_values`).
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.debezium_decode import (
    Semantic,
    column_semantic,
    decode,
    integer_value,
)
from versioned.engine.feeds.debezium_options import DebeziumOptions
from versioned.engine.feeds.op_codes import DELETE, normalise_op_code
from versioned.engine.feeds.schema import required_columns
from versioned.engine.spark.bindings import Bindings
from versioned.engine.spark.types import spark_type
from versioned.schema import TableSpec


def row_values(
    spec: TableSpec,
    present: dict[str, str],
    raw: dict[str, tuple[Column, T.DataType]],
    is_delete: Column,
    schema: Column | None,
    envelope: bool,
    options: DebeziumOptions,
    bindings: Bindings,
) -> tuple[list[Column], list[Column], list[Column]]:
    """Per table column: the decoded value, why it cannot be used (or null), and whether it
    is the TOAST placeholder (the column's name in ``#keep``).

    The decoding uses a column's text and semantic type many times over, so they are bound
    (``bindings``: computed once per row in a projection below the values')."""
    required = set(required_columns(spec))
    columns: list[Column] = []
    problems: list[Column] = []
    keeps: list[Column] = []
    # The decodings are SQL text (`debezium_decode`): their inputs are bound columns.
    schema_sql = bindings.bind_sql(schema) if schema is not None else None
    for name, field in present.items():
        value, kind = raw[name]
        target = spark_type(spec.column(name).type)
        kept = F.lit(False)
        if name not in required and _may_hold_placeholder(kind):
            kept = _is_placeholder(value, kind, options) & ~is_delete
            keeps.append(F.when(kept, F.lit(name)))
        if _decodes(kind, target, schema is not None):
            text = bindings.bind_sql(_as_text(value, kind))
            described = column_semantic(schema_sql, field, envelope=envelope)
            semantic = Semantic(
                bindings.bind_sql(described.name, level=1),
                bindings.bind_sql(described.scale, level=1),
            )
            scale = target.scale if isinstance(target, T.DecimalType) else None
            decoded, problem = decode(
                text,
                target,
                semantic,
                column_scale=scale,
                timestamp_unit=options.timestamp_unit,
                number=bindings.bind_sql(integer_value(text), level=1),
            )
            value = F.expr(decoded)
            checked = ~kept & (F.lit(True) if name in required else ~is_delete)
            reason = F.concat(F.lit(f"column {name}: "), F.expr(problem))
            problems.append(F.when(checked, reason))
        columns.append(value.alias(name))
    return columns, problems, keeps


def envelope_row(
    event: Column, base: T.StructType, present: dict[str, str]
) -> tuple[Column, dict[str, tuple[Column, T.DataType]]]:
    """Op code and row values (with their types) of envelopes: ``after``, or ``before`` for a
    delete."""
    op_in = event.getField("op").cast("string")
    is_delete = F.coalesce(normalise_op_code(op_in) == F.lit(DELETE), F.lit(False))
    halves = {
        half: kind
        for half in ("before", "after")
        if isinstance(kind := field_type(base, (half,)), T.StructType)
    }
    values: dict[str, tuple[Column, T.DataType]] = {}
    for name, field in present.items():
        after = event.getField("after").getField(field)
        before = event.getField("before").getField(field)
        in_after = "after" in halves and field in halves["after"].fieldNames()
        in_before = "before" in halves and field in halves["before"].fieldNames()
        kind = halves["after" if in_after else "before"][field].dataType
        if in_after and in_before:
            value = F.when(is_delete, before).otherwise(after)
            if halves["before"][field].dataType != kind:  # typed frames whose halves differ
                value = F.when(is_delete, before.cast("string")).otherwise(after.cast("string"))
                kind = T.StringType()
        else:
            value = after if in_after else before
        values[name] = (value, kind)
    return op_in, values


def flattened_row(
    event: Column, base: T.StructType, present: dict[str, str]
) -> tuple[Column, dict[str, tuple[Column, T.DataType]]]:
    """Op code and row values of flattened rows: ``__deleted`` wins, then ``__op``."""
    names = base.fieldNames()
    deleted = (
        F.coalesce(
            F.lower(event.getField("__deleted").cast("string")) == F.lit("true"), F.lit(False)
        )
        if "__deleted" in names
        else F.lit(False)
    )
    op = event.getField("__op").cast("string") if "__op" in names else F.lit("r")
    values = {name: (event.getField(f), base[f].dataType) for name, f in present.items()}
    return F.when(deleted, F.lit("d")).otherwise(op), values


def _may_hold_placeholder(kind: T.DataType) -> bool:
    return isinstance(kind, T.StringType | T.BinaryType)


def _is_placeholder(value: Column, kind: T.DataType, options: DebeziumOptions) -> Column:
    if isinstance(kind, T.BinaryType):
        return F.coalesce(value == F.lit(bytearray(options.placeholder_bytes)), F.lit(False))
    return F.coalesce(value.isin(*options.placeholder_texts()), F.lit(False))


def _decodes(kind: T.DataType, target: T.DataType, has_schema: bool) -> bool:
    """Whether values of input type ``kind`` go through the decoding for a ``target`` column."""
    if isinstance(kind, T.StringType):
        return True
    integral = isinstance(kind, T.ByteType | T.ShortType | T.IntegerType | T.LongType)
    encoded = isinstance(kind, T.BinaryType | T.StructType)
    if isinstance(target, T.DateType | T.TimestampType):
        return integral
    if isinstance(target, T.StringType):
        return has_schema and (integral or encoded)
    return isinstance(target, T.NumericType) and encoded


def _as_text(value: Column, kind: T.DataType) -> Column:
    if isinstance(kind, T.BinaryType):
        return F.base64(value)
    if isinstance(kind, T.StructType | T.ArrayType | T.MapType):
        return F.to_json(value)
    return value.cast("string")


def field_type(struct: T.StructType, path: tuple[str, ...]) -> T.DataType | None:
    """The type of the field at ``path`` in nested structs, or None if there is none."""
    kind: T.DataType = struct
    for name in path:
        if not isinstance(kind, T.StructType) or name not in kind.fieldNames():
            return None
        kind = kind[name].dataType
    return kind
