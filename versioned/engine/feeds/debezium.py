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

from versioned.engine.feeds.debezium_decode import SCHEMA_TYPE
from versioned.engine.feeds.debezium_options import DebeziumOptions, ordering_paths, ordering_value
from versioned.engine.feeds.debezium_values import (
    envelope_row,
    field_type,
    flattened_row,
    row_values,
)
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
from versioned.engine.feeds.schema import ColumnMapping, map_columns
from versioned.engine.spark.bindings import Bindings
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

    Attributes:
        frame: The events, observed: read it (not the frame given) for the counts.
        tombstone: Whether an event is a tombstone.
        truncate: Whether an event is a truncate.
    """

    def __init__(self, frame: DataFrame, tombstone: Column, truncate: Column) -> None:
        self._frame = frame
        self.tombstone = tombstone
        self.truncate = truncate
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
    wrapped = isinstance(field_type(fields, ("payload",)), T.StructType)
    base = _event_fields(fields, wrapped)
    after = field_type(base, ("after",))
    halves = [h for h in (after, field_type(base, ("before",))) if h is not None]
    envelope = any(isinstance(h, T.StructType) for h in halves)
    if envelope:
        if field_type(base, ("op",)) is None:
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
            has=lambda path: field_type(base, path) is not None,
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
    bindings = Bindings("#dbz")
    row = _event_row(record, event, fields, shape, spec, present, options, bindings)
    columns = list(row.columns)
    if shape.ordering is not None and ordering is not None:
        target = spark_type(spec.column(ordering).type)
        columns.append(ordering_value(event, *shape.ordering, target).alias(ordering))
    keeps = [F.lit(n) for n in mapping.filled] + row.keeps
    extra = [F.array_compact(F.array(*keeps)).alias(IN_KEEP)] if keeps else []
    malformed = _malformed(record, row.problems, wrapped_lines=shape.wrapped and json_lines)
    payload_null = event.isNull() if shape.wrapped else F.lit(False)
    events = _events(bindings.apply(frame), record, payload_null, malformed, row.op_in)
    rows = events.frame.where(~events.tombstone & ~events.truncate).select(
        *columns,
        row.op_in.alias(IN_OP),
        malformed.alias(IN_MALFORMED),
        F.col(IN_RAW),
        F.col(IN_SOURCE),
        F.col(IN_SEQ),
        *extra,
    )
    return rows, mapping, frozenset(set(present) | derived), events


@dataclass(frozen=True)
class _EventRow:
    """The row of each event: its op code as sent, the decoded values of the table columns,
    why they cannot be used (null: they can), and which hold the TOAST placeholder."""

    op_in: Column
    columns: list[Column]
    problems: list[Column]
    keeps: list[Column]


def _event_row(
    record: Column,
    event: Column,
    fields: T.StructType,
    shape: DebeziumShape,
    spec: TableSpec,
    present: dict[str, str],
    options: DebeziumOptions,
    bindings: Bindings,
) -> _EventRow:
    schema = _event_schema(record, fields) if shape.has_schema else None
    base = _event_fields(fields, shape.wrapped)
    read = envelope_row if shape.envelope else flattened_row
    op_in, raw = read(event, base, present)
    is_delete = F.coalesce(normalise_op_code(op_in) == F.lit(DELETE), F.lit(False))
    columns, problems, keeps = row_values(
        spec, present, raw, bindings.bind(is_delete), schema, shape.envelope, options, bindings
    )
    return _EventRow(op_in, columns, problems, keeps)


def _malformed(record: Column, problems: list[Column], *, wrapped_lines: bool) -> Column:
    """Why an event cannot be read (null: it can): the reader's finding, else its values'."""
    malformed = F.col(IN_MALFORMED)
    if problems:
        decoded = F.concat_ws("; ", *problems)
        malformed = F.coalesce(malformed, F.when(decoded != F.lit(""), decoded))
    if wrapped_lines:
        # A bare event among {schema, payload} events is not a tombstone: reject it.
        keys = F.coalesce(F.json_object_keys(F.col(IN_RAW)), F.array().cast("array<string>"))
        bare = record.isNotNull() & ~F.array_contains(keys, F.lit("payload"))
        malformed = F.when(bare, F.lit(_BARE_EVENT)).otherwise(malformed)
    return malformed


def _events(
    frame: DataFrame, record: Column, payload_null: Column, malformed: Column, op_in: Column
) -> DebeziumEvents:
    """The tombstones (a null event or payload) and truncates (``op = t``) among the events."""
    no_error = malformed.isNull()
    tombstone = no_error & (record.isNull() | payload_null)
    truncate = (
        no_error
        & ~tombstone
        & F.coalesce(F.lower(F.trim(op_in.cast("string"))) == F.lit("t"), F.lit(False))
    )
    return DebeziumEvents(frame, tombstone, truncate)


def _event_schema(record: Column, fields: T.StructType) -> Column:
    """Each event's schema as `SCHEMA_TYPE` (JSON feeds parse it so; DataFrames may carry it
    as JSON text or as a struct of another shape)."""
    kind = fields[_SCHEMA].dataType
    schema = record.getField(_SCHEMA)
    if kind == SCHEMA_TYPE:
        return schema
    text = schema if isinstance(kind, T.StringType) else F.to_json(schema)
    return F.from_json(text, SCHEMA_TYPE)


def _event_fields(fields: T.StructType, wrapped: bool) -> T.StructType:
    """The fields of the event itself, inside the ``payload`` wrapper if there is one."""
    payload = field_type(fields, ("payload",)) if wrapped else None
    return payload if isinstance(payload, T.StructType) else fields


def _strings(struct: T.StructType) -> T.StructType:
    return T.StructType([T.StructField(f.name, T.StringType()) for f in struct.fields])
