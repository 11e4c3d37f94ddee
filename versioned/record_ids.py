"""Hive's RecordIdentifier (ROW__ID) and the BucketCodec its ``bucketid`` is written in.

A plain module below the layers: the mutation API takes and gives ROW__IDs
(``versioned.mutation.RecordIdentifier``) without importing a layout, and the acid layout
reads and writes them (``versioned.layouts.acid.bucket_codec``).

The ``bucket`` field of an ACID row (and ``ROW__ID.bucketid``) is not the bucket number but a
BucketCodec property. Version 1 (Hive 3)::

    property = (1 << 29) | (bucketId << 16) | statementId
    bits: 3 version | 1 reserved | 12 bucket id (max 4095) | 4 reserved | 12 statement id

so bucket 0 is 536870912 and bucket 1 is 536936448. Version 0 (files written before Hive 3)
stores the bucket id itself, with statement id 0.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from versioned.errors import InputError

__all__ = [
    "MAX_BUCKET_ID",
    "MAX_STATEMENT_ID",
    "ROW_ID",
    "BucketCodecError",
    "BucketProperty",
    "RecordIdentifier",
    "decode_bucket_property",
    "encode_bucket_property",
]

ROW_ID = "ROW__ID"
"""The column Spark and Hive show a row's RecordIdentifier in."""

MAX_BUCKET_ID = 4095
MAX_STATEMENT_ID = 4095
_VERSION_SHIFT = 29
_VERSION_MASK = 0xE0000000
_BUCKET_MASK = 0x0FFF0000
_STATEMENT_MASK = 0x00000FFF


class BucketCodecError(InputError):
    """A bucket id or statement id does not fit Hive's BucketCodec, or a property is not one."""


def _check_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise BucketCodecError(f"{what} must be an int, got {value!r}", value=value)
    return int(value)


def encode_bucket_property(bucket_id: int, statement_id: int | None = None) -> int:
    """BucketCodec V1 ``encode``: the ``bucket`` value of a row written to ``bucket_id``.

    Args:
        bucket_id: The bucket number (for unbucketed tables the writer id), 0..4095.
        statement_id: The statement of the transaction, 0..4095. ``None`` or a negative id
            (Hive's "no statement", -1) encodes as 0, as Hive does.

    Raises:
        BucketCodecError: An id is out of range.
    """
    bucket = _check_int(bucket_id, "bucket id")
    statement = 0 if statement_id is None else _check_int(statement_id, "statement id")
    statement = max(statement, 0)
    if not 0 <= bucket <= MAX_BUCKET_ID:
        raise BucketCodecError(
            f"bucket id {bucket} is out of range for Hive's BucketCodec V1 (0..{MAX_BUCKET_ID}); "
            "use at most 4096 buckets",
            bucket_id=bucket,
        )
    if statement > MAX_STATEMENT_ID:
        raise BucketCodecError(
            f"statement id {statement} is out of range for Hive's BucketCodec V1 "
            f"(0..{MAX_STATEMENT_ID}); split the transaction",
            statement_id=statement,
        )
    return (1 << _VERSION_SHIFT) | (bucket << 16) | statement


@dataclass(frozen=True)
class BucketProperty:
    """A decoded BucketCodec property.

    Attributes:
        version: 0 (pre-Hive-3: the property is the bucket id) or 1.
        bucket_id: The bucket number (writer id).
        statement_id: The statement id (0 for version 0).
    """

    version: int
    bucket_id: int
    statement_id: int

    def encode(self) -> int:
        """The property again."""
        if self.version == 0:
            return self.bucket_id
        return encode_bucket_property(self.bucket_id, self.statement_id)


def decode_bucket_property(value: int) -> BucketProperty:
    """BucketCodec ``determineVersion`` + ``decodeWriterId`` + ``decodeStatementId``.

    Raises:
        BucketCodecError: The value is not a version 0 or 1 property.
    """
    prop = _check_int(value, "bucket property")
    if not 0 <= prop <= 0x7FFFFFFF:
        raise BucketCodecError(f"{prop} is not a BucketCodec property", value=prop)
    version = (prop & _VERSION_MASK) >> _VERSION_SHIFT
    if version == 0:
        return BucketProperty(0, prop, 0)
    if version != 1:
        raise BucketCodecError(
            f"bucket property {prop} has BucketCodec version {version}; only 0 and 1 exist",
            value=prop,
        )
    return BucketProperty(1, (prop & _BUCKET_MASK) >> 16, prop & _STATEMENT_MASK)


@dataclass(frozen=True, order=True)
class RecordIdentifier:
    """A row's ROW__ID: ``(writeid, bucketid, rowid)``, ordered as Hive orders them.

    Hive's ``RecordIdentifier.compareTo`` is lexicographic on write id, bucket property, row
    id; since the codec keeps the bucket id above the statement id, sorting by ROW__ID groups
    rows by bucket.

    Attributes:
        write_id: The original write id (``originalTransaction``).
        bucket_id: The BucketCodec property (not the bucket number; see `bucket`).
        row_id: The row's number within its write id and file.
    """

    write_id: int
    bucket_id: int
    row_id: int

    def __post_init__(self) -> None:
        for name in ("write_id", "bucket_id", "row_id"):
            object.__setattr__(self, name, _check_int(getattr(self, name), name))

    @property
    def bucket(self) -> BucketProperty:
        """The decoded bucket property."""
        return decode_bucket_property(self.bucket_id)

    def to_json(self) -> str:
        """The form Hive prints: ``{"writeid":1,"bucketid":536870912,"rowid":0}``."""
        return json.dumps(
            {"writeid": self.write_id, "bucketid": self.bucket_id, "rowid": self.row_id},
            separators=(",", ":"),
        )
