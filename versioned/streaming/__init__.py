"""Hive's HCatalog streaming ingest API in Python: records pumped into a table partition in
small committed transactions, written straight to files (no Spark), with the catalog deciding
visibility. See issue 13 and ``seeds/hive-streaming-ingest-api.txt``.
"""

import warnings
from typing import Any

from versioned.layouts.ingest_errors import (
    InvalidColumn,
    InvalidPartition,
    InvalidTable,
    SerializationError,
    StreamingConnectionError,
    StreamingError,
    StreamingIOFailure,
    StreamingTransactionError,
)
from versioned.streaming.connection import StreamingConnection
from versioned.streaming.encoding import EncodedRecords, RejectedRecord
from versioned.streaming.endpoint import EndPoint
from versioned.streaming.record_writers import (
    DelimitedInputWriter,
    StrictJsonWriter,
    StrictRegexWriter,
)
from versioned.streaming.transaction_batch import TransactionBatch, TransactionState

__all__ = [
    "DelimitedInputWriter",
    "EncodedRecords",
    "EndPoint",
    "InvalidColumn",
    "InvalidPartition",
    "InvalidTable",
    "RejectedRecord",
    "SerializationError",
    "StreamingConnection",
    "StreamingConnectionError",
    "StreamingError",
    "StreamingIOFailure",
    "StreamingTransactionError",
    "StrictJsonWriter",
    "StrictRegexWriter",
    "TransactionBatch",
    "TransactionState",
]


def __getattr__(name: str) -> Any:
    """``TransactionError``, the old name of `StreamingTransactionError` (Hive's name), with a
    deprecation warning: ``versioned.errors.TransactionError`` is the catalog's, its base."""
    if name == "TransactionError":
        warnings.warn(
            "versioned.streaming.TransactionError is now StreamingTransactionError",
            DeprecationWarning,
            stacklevel=2,
        )
        return StreamingTransactionError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
