"""What the API takes as a record: a mapping of column names to values with a ``ROW__ID``.

``ROW__ID`` is a `RecordIdentifier`, or the struct ``Table.read(with_row_id=True)`` gives
(a mapping or Spark ``Row`` with ``writeid``, ``bucketid``, ``rowid``). Spark ``Row``s are
taken as they are (their ``asDict()``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from versioned.errors import InputError
from versioned.record_ids import ROW_ID, RecordIdentifier

"""The record field holding the ROW__ID (Hive's virtual column)."""


def as_mapping(record: Any) -> Mapping[str, Any]:
    """The record as a mapping (a Spark ``Row`` through its ``asDict()``)."""
    if isinstance(record, Mapping):
        return record
    as_dict = getattr(record, "asDict", None)
    if as_dict is not None:
        return dict(as_dict())
    raise InputError(
        f"a record is a mapping of column names to values, got {type(record).__name__}"
    )


def record_identifier(value: Any) -> RecordIdentifier:
    """A ROW__ID value as a `RecordIdentifier`.

    Raises:
        InputError: The value is missing or not a ROW__ID.
    """
    if isinstance(value, RecordIdentifier):
        return value
    if value is None:
        raise InputError(
            "the record has no ROW__ID: updates and deletes need the ROW__ID read with "
            "Table.read(with_row_id=True); inserts need one from BucketIdResolver"
        )
    fields = value if isinstance(value, Mapping) else _row_fields(value)
    try:
        return RecordIdentifier(
            int(fields["writeid"]), int(fields["bucketid"]), int(fields["rowid"])
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"ROW__ID {value!r} is not a RecordIdentifier or a (writeid, bucketid, rowid) struct",
        ) from exc


def _row_fields(value: Any) -> Mapping[str, Any]:
    as_dict = getattr(value, "asDict", None)
    if as_dict is None:
        raise InputError(f"ROW__ID {value!r} is not a RecordIdentifier")
    return dict(as_dict())


def row_id_of(record: Mapping[str, Any]) -> RecordIdentifier:
    """The record's ROW__ID."""
    return record_identifier(record.get(ROW_ID))


@dataclass(frozen=True)
class ApplySummary:
    """What one `apply` wrote (visible after ``txn.commit()``).

    Attributes:
        inserted: Rows inserted.
        updated: Rows updated (each a delete event and an insert).
        deleted: Rows deleted.
        groups: (partition, bucket) groups written.
        files: Bucket files written (insert and delete deltas; markers and key filters not
            counted).
        tasks: Spark tasks that ran a coordinator.
    """

    inserted: int
    updated: int
    deleted: int
    groups: int
    files: int
    tasks: int
