"""Errors of the acid layout's storage format, each under the right `VersionedError` area."""

from __future__ import annotations

from versioned.errors import InputError, NoSuchVersionError, SchemaError, StorageError
from versioned.record_ids import BucketCodecError

__all__ = [
    "AcidFileError",
    "AcidNameError",
    "BucketCodecError",
    "FlushLengthError",
    "NotEnoughHistoryError",
    "UnsupportedBucketTypeError",
    "WriteIdListError",
]


class UnsupportedBucketTypeError(SchemaError):
    """A bucket column has a type whose Hive bucket hash versioned does not reproduce."""


class WriteIdListError(InputError):
    """A ValidWriteIdList (snapshot of a table's write ids) is inconsistent or malformed."""


class AcidNameError(StorageError):
    """A directory or file name does not follow Hive's ACID grammar."""


class AcidFileError(StorageError):
    """An ORC file is not an ACID bucket file, or its ACID user metadata is malformed."""


class FlushLengthError(StorageError):
    """A streaming side file (``bucket_N_flush_length``) exists but holds no complete length."""


class NotEnoughHistoryError(NoSuchVersionError):
    """A compacted base erased history that the reader's snapshot still needs.

    Hive's ``ACID_NOT_ENOUGH_HISTORY``: the snapshot has a write id open at or below the
    write id of every compacted base, so no base can serve it. Start a new read.
    """
