"""Hive's HCatalog streaming ingest API in Python: records pumped into a table partition in
small committed transactions, written straight to files (no Spark), with the catalog deciding
visibility. See issue 13 and ``seeds/hive-streaming-ingest-api.txt``.
"""

from versioned.layouts.ingest_errors import (
    InvalidColumn,
    InvalidPartition,
    InvalidTable,
    SerializationError,
    StreamingConnectionError,
    StreamingError,
    StreamingIOFailure,
    TransactionError,
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
    "StrictJsonWriter",
    "StrictRegexWriter",
    "TransactionBatch",
    "TransactionError",
    "TransactionState",
]
