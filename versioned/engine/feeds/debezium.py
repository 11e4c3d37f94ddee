"""Debezium change events as feed rows.

Two forms are read, each optionally wrapped as ``{"schema": ..., "payload": {...}}`` (the
Kafka JSON converter with ``schemas.enable=true``):

* the envelope ``{"before": {...}, "after": {...}, "op": "c|u|d|r|t", "ts_ms": ..., "source":
  {...}}``: the row is ``after``, except for deletes, whose row (and key) is ``before``;
* the flattened row of the ``ExtractNewRecordState`` transform: the row's columns plus fields
  prefixed ``__`` (``__op``, ``__deleted``, ``__lsn``, ``__source_ts_ms``, ...). ``__deleted =
  true`` makes the row a delete; without ``__op`` every other row is an upsert. Other ``__``
  fields are ignored.

Values are decoded by their semantic type (`versioned.engine.feeds.debezium_decode`); the ordering
value and the TOAST placeholder follow `versioned.engine.feeds.debezium_options`. A column holding
the placeholder is marked in ``#keep``: it keeps the stored value of its key
(`versioned.engine.feeds.kept_values`). ``op = r`` (snapshot read) is an upsert; ``op = t``
(truncate) events are counted so that the batch is refused before anything is written. Kafka
tombstones (a ``null`` event, or a ``null`` payload) carry no change: they are skipped and
counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.debezium_decode import SCHEMA_TYPE, column_semantic, decode
from versioned.engine.feeds.debezium_options import DebeziumOptions, ordering_paths, ordering_value
from versioned.engine.feeds.op_codes import DELETE, normalise_op_code
from versioned.engine.feeds.rows import (
    IN_KEEP,
    IN_MALFORMED,
    IN_OP,
    IN_RAW,
    IN_RECORD,
    IN_SEQ,
    IN_SOURCE,
    ObservedCount,
)
from versioned.engine.feeds.schema import ColumnMapping, map_columns, required_columns
from versioned.engine.spark.types import spark_type
from versioned.errors import SchemaError
from versioned.schema import TableSpec

_ENVELOPE_FIELDS = ("before", "after", "op", "source", "ts_ms")
_SCHEMA = "schema"
_BARE_EVENT = (
    "Debezium event without 'payload' among {schema, payload} events; send one form per batch"
)


@dataclass(frozen=True)
class DebeziumShape:
    """Which Debezium form a feed has, read from its schema.

    Attributes:
        wrapped: Events are ``{"schema": ..., "payload": event}``.
        envelope: Events are before/after envelopes (else flattened rows).
        row_fields: Field names of the rows (``before`` and ``after`` merged, or the
            flattened event's fields).
        ordering: The ordering source and the metadata fields that supply the table's
            ordering column, if any.
        has_schema: Wrapped events carry a ``schema`` to decode values by.
        has_after: Some envelope has an ``after`` row (else every event is a delete).
    """

    wrapped: bool
    envelope: bool
    row_fields: tuple[str, ...]
    ordering: tuple[str, tuple[tuple[str, ...], ...]] | None
    has_schema: bool = False
    has_after: bool = True


class DebeziumEvents:
    """Counts of the events that are not rows: Kafka tombstones and truncates.

    Both are taken while the first action reads the feed; `tombstones` and `truncates` fall
    back to a Spark job of their own when that observation is not available.
    """

    def __init__(self, frame: DataFrame, tombstone: Column, truncate: Column) -> None:
        self._frame = frame
        self._conditions = {"tombstones": tombstone, "truncates": truncate}
        self._tombstones = ObservedCount(frame, tombstone, "tombstones")
        self._truncates = ObservedCount(self._tombstones.frame, truncate, "truncates")
        self.frame = self._truncates.frame

    def tombstones(self) -> int:
        """Kafka tombstones skipped."""
        return self._count(self._tombstones, "tombstones")

    def truncates(self) -> int:
        """Truncate events seen."""
        return self._count(self._truncates, "truncates")

    def _count(self, observed: ObservedCount, name: str) -> int:
        value = observed.value()
        if value is None:
            value = self._frame.where(self._conditions[name]).count()
        return value


def debezium_shape(
    fields: T.StructType, spec: TableSpec, options: DebeziumOptions | None = None
) -> DebeziumShape:
    """Recognise the Debezium form of a feed from its (inferred or given) schema.

    Raises:
        SchemaError: An envelope has no ``op`` field, or the ordering source is missing.
    """
    options = options or DebeziumOptions()
    wrapped = isinstance(_child(fields, ("payload",)), T.StructType)
    base = _event_fields(fields, wrapped)
    after = _child(base, ("after",))
    halves = [h for h in (after, _child(base, ("before",))) if h is not None]
    envelope = any(isinstance(h, T.StructType) for h in halves)
    if envelope:
        if _child(base, ("op",)) is None:
            raise SchemaError(
                "Debezium envelope without an 'op' field; send the connector's full change "
                "events or flattened rows (ExtractNewRecordState)"
            )
        names = [f.name for h in halves if isinstance(h, T.StructType) for f in h.fields]
        row_fields = tuple(dict.fromkeys(names))
    else:
        row_fields = tuple(base.fieldNames())
    ordering = None
    column = spec.ordering_column
    in_rows = column is not None and column in {n.strip().lower() for n in row_fields}
    if column is not None and (options.ordering_from is not None or not in_rows):
        target = spark_type(spec.column(column).type)
        ordering = ordering_paths(
            options.ordering_from,
            envelope=envelope,
            target=target,
            has=lambda path: _child(base, path) is not None,
        )
    return DebeziumShape(
        wrapped,
        envelope,
        row_fields,
        ordering,
        has_schema=wrapped and _SCHEMA in fields.fieldNames(),
        has_after=not envelope or isinstance(after, T.StructType),
    )


def text_schema(fields: T.StructType, shape: DebeziumShape) -> T.StructType:
    """The schema to parse the feed's JSON text with: every value a string, nothing unused,
    and the events' ``schema`` (when present) as `SCHEMA_TYPE`."""
    base = _event_fields(fields, shape.wrapped)
    if shape.envelope:
        parsed = []
        for field in base.fields:
            if field.name not in _ENVELOPE_FIELDS:
                continue
            kind = field.dataType
            parsed.append(
                T.StructField(
                    field.name, _strings(kind) if isinstance(kind, T.StructType) else T.StringType()
                )
            )
        event = T.StructType(parsed)
    else:
        event = _strings(base)
    if not shape.wrapped:
        return event
    wrapper = [T.StructField("payload", event)]
    if shape.has_schema:
        wrapper.append(T.StructField(_SCHEMA, SCHEMA_TYPE))
    return T.StructType(wrapper)


def debezium_rows(
    frame: DataFrame,
    fields: T.StructType,
    spec: TableSpec,
    *,
    source: str,
    options: DebeziumOptions | None = None,
    partial: bool = False,
    json_lines: bool = False,
) -> tuple[DataFrame, ColumnMapping, frozenset[str], DebeziumEvents]:
    """Turn Debezium events into feed rows matched to the table.

    Args:
        frame: One event per row: the event as struct column ``#record`` (schema ``fields``;
            null for a tombstone line) plus ``#malformed``, ``#raw``, ``#source``, ``#seq``.
        fields: Schema of the events.
        spec: The table.
        source: What the feed is, for messages.
        options: How to read the events (ordering source, placeholder).
        partial: Table columns the rows lack keep their stored values (else they fail).
        json_lines: The events are JSON lines (``#raw`` is each line as written).

    Returns:
        ``(rows, mapping, present, events)``: the frame `versioned.engine.feeds.rows.split_rows`
        takes (with ``#keep``), how the row fields map onto the table, the table columns the
        rows have, and the counts of tombstones and truncates.

    Raises:
        SchemaError: The rows lack table columns or have unknown ones.
    """
    options = options or DebeziumOptions()
    shape = debezium_shape(fields, spec, options)
    ordering = spec.ordering_column
    derived = {ordering} if shape.ordering is not None and ordering is not None else set()
    mapping = map_columns(
        shape.row_fields,
        spec,
        source=source,
        derived=derived,
        ignore=None if shape.envelope else (lambda name: name.startswith("__")),
        # Deletes need only their key: a batch of deletes alone lacks the other columns.
        partial=partial or not shape.has_after,
    )
    present = {k: v for k, v in mapping.present.items() if k not in derived}
    record = F.col(IN_RECORD)
    event = record.getField("payload") if shape.wrapped else record
    schema = _event_schema(record, fields) if shape.has_schema else None
    base = _event_fields(fields, shape.wrapped)
    read = _envelope if shape.envelope else _flattened
    op_in, raw = read(event, base, present)
    is_delete = F.coalesce(normalise_op_code(op_in) == F.lit(DELETE), F.lit(False))
    columns, problems, keeps = _row_values(
        spec, present, raw, is_delete, schema, shape.envelope, options
    )
    keeps = [F.lit(n) for n in mapping.filled] + keeps
    present_names = set(present)
    if shape.ordering is not None and ordering is not None:
        target = spark_type(spec.column(ordering).type)
        columns.append(ordering_value(event, *shape.ordering, target).alias(ordering))
        present_names.add(ordering)
    malformed = F.col(IN_MALFORMED)
    if problems:
        decoded = F.concat_ws("; ", *problems)
        malformed = F.coalesce(malformed, F.when(decoded != F.lit(""), decoded))
    extra = [F.array_compact(F.array(*keeps)).alias(IN_KEEP)] if keeps else []
    if shape.wrapped and json_lines:
        # A bare event among {schema, payload} events is not a tombstone: reject it.
        keys = F.coalesce(F.json_object_keys(F.col(IN_RAW)), F.array().cast("array<string>"))
        bare = record.isNotNull() & ~F.array_contains(keys, F.lit("payload"))
        malformed = F.when(bare, F.lit(_BARE_EVENT)).otherwise(malformed)
    no_error = malformed.isNull()
    payload_null = event.isNull() if shape.wrapped else F.lit(False)
    tombstone = no_error & (record.isNull() | payload_null)
    truncate = (
        no_error
        & ~tombstone
        & F.coalesce(F.lower(F.trim(op_in.cast("string"))) == F.lit("t"), F.lit(False))
    )
    events = DebeziumEvents(frame, tombstone, truncate)
    rows = events.frame.where(~tombstone & ~truncate).select(
        *columns,
        op_in.alias(IN_OP),
        malformed.alias(IN_MALFORMED),
        F.col(IN_RAW),
        F.col(IN_SOURCE),
        F.col(IN_SEQ),
        *extra,
    )
    return rows, mapping, frozenset(present_names), events


def _row_values(
    spec: TableSpec,
    present: dict[str, str],
    raw: dict[str, tuple[Column, T.DataType]],
    is_delete: Column,
    schema: Column | None,
    envelope: bool,
    options: DebeziumOptions,
) -> tuple[list[Column], list[Column], list[Column]]:
    """Per table column: the decoded value, why it cannot be used (or null), and whether it
    is the TOAST placeholder (the column's name in ``#keep``)."""
    required = set(required_columns(spec))
    columns: list[Column] = []
    problems: list[Column] = []
    keeps: list[Column] = []
    for name, field in present.items():
        value, kind = raw[name]
        target = spark_type(spec.column(name).type)
        kept = F.lit(False)
        if name not in required and _may_hold_placeholder(kind):
            kept = _is_placeholder(value, kind, options) & ~is_delete
            keeps.append(F.when(kept, F.lit(name)))
        if _decodes(kind, target, schema is not None):
            text = _as_text(value, kind)
            semantic = column_semantic(schema, field, envelope=envelope)
            scale = target.scale if isinstance(target, T.DecimalType) else None
            value, problem = decode(
                text, target, semantic, column_scale=scale, timestamp_unit=options.timestamp_unit
            )
            checked = ~kept & (F.lit(True) if name in required else ~is_delete)
            problems.append(F.when(checked, F.concat(F.lit(f"column {name}: "), problem)))
        columns.append(value.alias(name))
    return columns, problems, keeps


def _envelope(
    event: Column, base: T.StructType, present: dict[str, str]
) -> tuple[Column, dict[str, tuple[Column, T.DataType]]]:
    """Op code and row values (with their types) of envelopes: ``after``, or ``before`` for a
    delete."""
    op_in = event.getField("op").cast("string")
    is_delete = F.coalesce(normalise_op_code(op_in) == F.lit(DELETE), F.lit(False))
    halves = {
        half: kind
        for half in ("before", "after")
        if isinstance(kind := _child(base, (half,)), T.StructType)
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


def _flattened(
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


def _event_schema(record: Column, fields: T.StructType) -> Column:
    """Each event's schema as `SCHEMA_TYPE` (JSON feeds parse it so; DataFrames may carry it
    as JSON text or as a struct of another shape)."""
    kind = fields[_SCHEMA].dataType
    schema = record.getField(_SCHEMA)
    if kind == SCHEMA_TYPE:
        return schema
    text = schema if isinstance(kind, T.StringType) else F.to_json(schema)
    return F.from_json(text, SCHEMA_TYPE)


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


def _event_fields(fields: T.StructType, wrapped: bool) -> T.StructType:
    """The fields of the event itself, inside the ``payload`` wrapper if there is one."""
    payload = _child(fields, ("payload",)) if wrapped else None
    return payload if isinstance(payload, T.StructType) else fields


def _child(struct: T.StructType, path: tuple[str, ...]) -> T.DataType | None:
    kind: T.DataType = struct
    for name in path:
        if not isinstance(kind, T.StructType) or name not in kind.fieldNames():
            return None
        kind = kind[name].dataType
    return kind


def _strings(struct: T.StructType) -> T.StructType:
    return T.StructType([T.StructField(f.name, T.StringType()) for f in struct.fields])
