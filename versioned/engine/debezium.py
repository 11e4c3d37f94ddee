"""Debezium change events as feed rows.

Two forms are read, each optionally wrapped as ``{"schema": ..., "payload": {...}}`` (the
Kafka JSON converter with schemas enabled):

* the envelope ``{"before": {...}, "after": {...}, "op": "c|u|d|r", "ts_ms": ..., "source":
  {...}}``: the row is ``after``, except for deletes, whose row (and key) is ``before``;
* the flattened row of the ``ExtractNewRecordState`` transform: the row's columns plus fields
  prefixed ``__`` (``__op``, ``__deleted``, ``__lsn``, ``__source_ts_ms``, ...). ``__deleted =
  true`` makes the row a delete; without ``__op`` every other row is an upsert. Other ``__``
  fields are ignored.

Ordering: when the table has an ordering column and the rows do not carry it, its value comes
from the event metadata, chosen once per batch from the fields the feed has: the log sequence
number ``source.lsn`` (flattened: ``__lsn``), else the source commit time ``source.ts_ms``
(``__source_ts_ms``), else the connector's event time ``ts_ms`` (``__ts_ms``). A DATE or
TIMESTAMP ordering column skips the LSN and reads the milliseconds as a time.

Kafka tombstones (a ``null`` event, or a ``null`` payload) carry no change and are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feed_rows import IN_MALFORMED, IN_OP, IN_RAW, IN_RECORD, IN_SEQ, IN_SOURCE
from versioned.engine.feed_schema import ColumnMapping, map_columns
from versioned.engine.op_codes import DELETE, normalise_op_code
from versioned.engine.spark_types import spark_type
from versioned.errors import SchemaError
from versioned.schema import TableSpec

_ENVELOPE_FIELDS = ("before", "after", "op", "source", "ts_ms")
_ENVELOPE_ORDERING = (("source", "lsn"), ("source", "ts_ms"), ("ts_ms",))
_FLAT_ORDERING = (("__lsn",), ("__source_ts_ms",), ("__ts_ms",))


@dataclass(frozen=True)
class DebeziumShape:
    """Which Debezium form a feed has, read from its schema.

    Attributes:
        wrapped: Events are ``{"schema": ..., "payload": event}``.
        envelope: Events are before/after envelopes (else flattened rows).
        row_fields: Field names of the rows (``before`` and ``after`` merged, or the
            flattened event's fields).
        ordering_path: The metadata field that supplies the table's ordering column, if any.
    """

    wrapped: bool
    envelope: bool
    row_fields: tuple[str, ...]
    ordering_path: tuple[str, ...] | None


def debezium_shape(fields: T.StructType, spec: TableSpec) -> DebeziumShape:
    """Recognise the Debezium form of a feed from its (inferred or given) schema.

    Raises:
        SchemaError: An envelope has no ``op`` field.
    """
    wrapped = isinstance(_child(fields, ("payload",)), T.StructType)
    base = _event_fields(fields, DebeziumShape(wrapped, False, (), None))
    halves = [h for h in (_child(base, ("after",)), _child(base, ("before",))) if h is not None]
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
    ordering_path = None
    ordering = spec.ordering_column
    if ordering is not None and ordering not in {n.strip().lower() for n in row_fields}:
        temporal = isinstance(spark_type(spec.column(ordering).type), T.DateType | T.TimestampType)
        for path in _ENVELOPE_ORDERING if envelope else _FLAT_ORDERING:
            if temporal and path[-1].endswith("lsn"):
                continue
            if _child(base, path) is not None:
                ordering_path = path
                break
    return DebeziumShape(wrapped, envelope, row_fields, ordering_path)


def text_schema(fields: T.StructType, shape: DebeziumShape) -> T.StructType:
    """The schema to parse the feed's JSON text with: every value a string, nothing unused."""
    base = _event_fields(fields, shape)
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
    return T.StructType([T.StructField("payload", event)]) if shape.wrapped else event


def debezium_rows(
    frame: DataFrame, fields: T.StructType, spec: TableSpec, *, source: str
) -> tuple[DataFrame, ColumnMapping, frozenset[str]]:
    """Turn Debezium events into feed rows matched to the table.

    Args:
        frame: One event per row: the event as struct column ``#record`` (schema ``fields``)
            plus ``#malformed``, ``#raw``, ``#source``, ``#seq``.
        fields: Schema of the events.
        spec: The table.
        source: What the feed is, for messages.

    Returns:
        ``(rows, mapping, present)``: the frame `versioned.engine.feed_rows.split_rows` takes,
        how the row fields map onto the table, and the table columns the rows have.

    Raises:
        SchemaError: The rows lack table columns or have unknown ones.
    """
    shape = debezium_shape(fields, spec)
    derived = {spec.ordering_column} if shape.ordering_path and spec.ordering_column else set()
    mapping = map_columns(
        shape.row_fields,
        spec,
        source=source,
        derived=derived,
        ignore=None if shape.envelope else (lambda name: name.startswith("__")),
    )
    record = F.col(IN_RECORD)
    event = record.getField("payload") if shape.wrapped else record
    base = _event_fields(fields, shape)
    if shape.envelope:
        op_in, columns = _envelope(event, base, mapping)
    else:
        op_in, columns = _flattened(event, base, mapping)
    present = set(mapping.present)
    ordering = spec.ordering_column
    if derived and shape.ordering_path is not None and ordering is not None:
        ordering_type = spark_type(spec.column(ordering).type)
        columns.append(_metadata_value(event, shape.ordering_path, ordering_type).alias(ordering))
        present.add(ordering)
    # A tombstone has a null payload; malformed records stay, to be rejected.
    keep = F.col(IN_MALFORMED).isNotNull() | (event.isNotNull() if shape.wrapped else F.lit(True))
    rows = frame.where(keep).select(
        *columns,
        op_in.alias(IN_OP),
        F.col(IN_MALFORMED),
        F.col(IN_RAW),
        F.col(IN_SOURCE),
        F.col(IN_SEQ),
    )
    return rows, mapping, frozenset(present)


def _envelope(
    event: Column, base: T.StructType, mapping: ColumnMapping
) -> tuple[Column, list[Column]]:
    """Op code and row values of envelopes: ``after``, or ``before`` for a delete."""
    op_in = event.getField("op").cast("string")
    is_delete = F.coalesce(normalise_op_code(op_in) == F.lit(DELETE), F.lit(False))
    halves = {
        half: set(kind.fieldNames())
        for half in ("before", "after")
        if isinstance(kind := _child(base, (half,)), T.StructType)
    }
    columns = []
    for name, field in mapping.present.items():
        after = event.getField("after").getField(field)
        before = event.getField("before").getField(field)
        if field in halves.get("after", ()) and field in halves.get("before", ()):
            value = F.when(is_delete, before).otherwise(after)
        else:
            value = after if field in halves.get("after", ()) else before
        columns.append(value.alias(name))
    return op_in, columns


def _flattened(
    event: Column, base: T.StructType, mapping: ColumnMapping
) -> tuple[Column, list[Column]]:
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
    columns = [event.getField(field).alias(name) for name, field in mapping.present.items()]
    return F.when(deleted, F.lit("d")).otherwise(op), columns


def _metadata_value(event: Column, path: tuple[str, ...], target: T.DataType) -> Column:
    """The ordering value from event metadata; milliseconds become a time for a time column."""
    value = event
    for name in path:
        value = value.getField(name)
    if isinstance(target, T.DateType | T.TimestampType):
        return F.timestamp_millis(value.try_cast("long"))
    return value


def _event_fields(fields: T.StructType, shape: DebeziumShape) -> T.StructType:
    """The fields of the event itself, inside the ``payload`` wrapper if there is one."""
    payload = _child(fields, ("payload",)) if shape.wrapped else None
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
