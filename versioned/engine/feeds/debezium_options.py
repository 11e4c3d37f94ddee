"""How a Debezium feed is read: where its ordering value comes from, its TOAST placeholder.

Settings come from the upsert (``ordering_from``) or from table properties, so that every
writer of a table reads its feed alike:

=========================================  ================================================
table property                             meaning
=========================================  ================================================
``debezium.ordering_from``                 ``lsn``, ``binlog`` or ``ts_ms`` (below)
``debezium.unavailable_value_placeholder``  the connector's ``unavailable.value.placeholder``
                                           (default ``__debezium_unavailable_value``; a
                                           ``hex:`` prefix gives the bytes in hex, as in
                                           Debezium)
``debezium.timestamp_unit``                ``ms``, ``us`` or ``ns``: integer TIMESTAMP values
                                           of events without a schema
=========================================  ================================================

Ordering sources (the table's ordering column gets the value; an explicit source wins over
a row field of the same name):

* ``lsn``: ``source.lsn`` (PostgreSQL's WAL position; flattened rows: ``__lsn``);
* ``binlog``: ``source.file`` and ``source.pos`` (MySQL), as ``file number * 10^12 + pos``
  (``mysql-bin.000003`` at 154 is 3000000000154; flattened: ``__file``/``__pos``);
* ``ts_ms``: ``source.ts_ms`` (the commit time in the database), else the event's ``ts_ms``
  (flattened: ``__source_ts_ms``, else ``__ts_ms``). A DATE or TIMESTAMP ordering column
  reads it as a time.

Without a choice the first of ``lsn`` (not for a DATE/TIMESTAMP column) and ``ts_ms`` that the
events carry is used, and only when the rows do not carry the ordering column themselves. A
STRING ordering column gets the numbers zero-padded, so that text order is number order.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.debezium_decode import TIMESTAMP_UNIT_PROPERTY, TIMESTAMP_UNITS
from versioned.errors import InputError, SchemaError

ORDERING_SOURCES = ("lsn", "binlog", "ts_ms")
ORDERING_PROPERTY = "debezium.ordering_from"
PLACEHOLDER_PROPERTY = "debezium.unavailable_value_placeholder"
DEFAULT_PLACEHOLDER = "__debezium_unavailable_value"
_BINLOG_FILE_FACTOR = 10**12

Path = tuple[str, ...]
# Per source and event form: alternatives, each the field paths its value is made of.
_ENVELOPE: dict[str, tuple[tuple[Path, ...], ...]] = {
    "lsn": ((("source", "lsn"),),),
    "binlog": ((("source", "file"), ("source", "pos")),),
    "ts_ms": ((("source", "ts_ms"),), (("ts_ms",),)),
}
_FLAT: dict[str, tuple[tuple[Path, ...], ...]] = {
    "lsn": ((("__lsn",),),),
    "binlog": ((("__file",), ("__pos",)), (("__source_file",), ("__source_pos",))),
    "ts_ms": ((("__source_ts_ms",),), (("__ts_ms",),)),
}


@dataclass(frozen=True)
class DebeziumOptions:
    """The settings a Debezium feed is read with.

    Attributes:
        ordering_from: ``lsn``, ``binlog``, ``ts_ms``, or None (choose as the module says).
        placeholder: Text of an unchanged TOAST value.
        placeholder_bytes: Bytes of an unchanged TOAST value in a binary column.
        timestamp_unit: Unit of integer TIMESTAMP values without a schema, or None.
    """

    ordering_from: str | None = None
    placeholder: str = DEFAULT_PLACEHOLDER
    placeholder_bytes: bytes = DEFAULT_PLACEHOLDER.encode()
    timestamp_unit: str | None = None

    @classmethod
    def resolve(
        cls,
        properties: Mapping[str, str],
        *,
        ordering_column: str | None,
        ordering_from: str | None = None,
    ) -> DebeziumOptions:
        """The options of a table (its properties), overridden by an upsert's ``ordering_from``.

        Raises:
            InputError: A setting has an unknown value, or ordering is asked of a table
                without an ordering column.
        """
        choice = ordering_from or properties.get(ORDERING_PROPERTY) or None
        if choice is not None:
            choice = choice.strip().lower()
            if choice not in ORDERING_SOURCES:
                raise InputError(
                    f"unknown ordering source {choice!r}; use one of {', '.join(ORDERING_SOURCES)}"
                )
            if ordering_column is None:
                raise InputError(
                    f"ordering from {choice!r} needs a table with an ordering column; create "
                    "the table with --ordering-column"
                )
        unit = properties.get(TIMESTAMP_UNIT_PROPERTY)
        if unit is not None and unit not in TIMESTAMP_UNITS:
            raise InputError(f"table property {TIMESTAMP_UNIT_PROPERTY}={unit!r}: use ms, us or ns")
        text = properties.get(PLACEHOLDER_PROPERTY, DEFAULT_PLACEHOLDER)
        if text.startswith("hex:"):
            try:
                raw = bytes.fromhex(text[4:])
            except ValueError as error:
                raise InputError(f"table property {PLACEHOLDER_PROPERTY}: {error}") from error
            text = raw.decode("utf-8", errors="replace")
        else:
            raw = text.encode()
        return cls(choice, text, raw, unit)

    def placeholder_texts(self) -> tuple[str, ...]:
        """The placeholder as text, as base64 of its bytes (binary columns in JSON) and as a
        one-element JSON array (array columns)."""
        encoded = base64.b64encode(self.placeholder_bytes).decode("ascii")
        return (self.placeholder, encoded, f'["{self.placeholder}"]')


def ordering_paths(
    choice: str | None, *, envelope: bool, target: T.DataType, has: Callable[[Path], bool]
) -> tuple[str, tuple[Path, ...]] | None:
    """The ordering source and the field paths that supply it, or None when none applies.

    Args:
        choice: The configured source, or None for the automatic choice.
        envelope: Events are envelopes (else flattened rows).
        target: The ordering column's type.
        has: Whether the events have a field path.

    Raises:
        SchemaError: The chosen source is not in the events, or cannot fill the column type.
    """
    table = _ENVELOPE if envelope else _FLAT
    temporal = isinstance(target, T.DateType | T.TimestampType)
    automatic = ["ts_ms"] if temporal else ["lsn", "ts_ms"]
    sources = [choice] if choice is not None else automatic
    for source in sources:
        for paths in table[source]:
            if all(has(p) for p in paths):
                if temporal and source != "ts_ms":
                    raise SchemaError(
                        f"ordering from {source} gives a number; the ordering column is a "
                        f"{target.simpleString().upper()}: use ts_ms or a BIGINT column"
                    )
                return source, paths
    if choice is not None:
        wanted = " or ".join("+".join(".".join(p) for p in paths) for paths in table[choice])
        raise SchemaError(
            f"ordering from {choice}: the events carry no {wanted}; choose another source "
            "(lsn, binlog, ts_ms) or send the ordering column in the rows"
        )
    return None


def ordering_value(
    event: Column, source: str, paths: tuple[Path, ...], target: T.DataType
) -> Column:
    """The ordering value of each event, for an ordering column of type ``target``."""
    values = [_at(event, p) for p in paths]
    if source == "binlog":
        number = F.regexp_extract(values[0].cast("string"), r"([0-9]+)\s*$", 1).try_cast("long")
        value = F.try_add(
            F.try_multiply(number, F.lit(_BINLOG_FILE_FACTOR)), values[1].try_cast("long")
        )
        return _padded(value, 19) if isinstance(target, T.StringType) else value
    value = values[0]
    if isinstance(target, T.DateType | T.TimestampType):
        return F.timestamp_millis(value.try_cast("long"))
    if isinstance(target, T.StringType):
        return _padded(value.try_cast("long"), 20)
    return value


def _padded(number: Column, width: int) -> Column:
    return F.lpad(number.cast("string"), width, "0")


def _at(event: Column, path: Path) -> Column:
    value = event
    for name in path:
        value = value.getField(name)
    return value
