"""Hive's HCatalog streaming mutation API in Python: one long transaction of inserts,
updates and deletes, grouped by (partition, bucket) and ordered by ROW__ID, applied to one
or more acid tables and committed atomically, or not at all. Coordinators write the files
directly (no Spark); the catalog decides visibility. See issue 14 and
``seeds/hive-streaming-mutation-api.txt``.

    from versioned import mutation as vm
    client = vm.MutatorClient(catalog, tables=["m.alerts"], create_partitions=True)
    txn = client.new_transaction(); txn.begin()
    resolver = vm.BucketIdResolver(catalog.table("m.alerts"))
    coord = client.coordinator(txn, "m.alerts")
    coord.insert(["Asia", "India"], resolver.attach_bucket_id({"id": 1, "msg": "hi"}))
    coord.close(); txn.commit(); client.close()
"""

from versioned.layouts.acid.bucket_codec import RecordIdentifier
from versioned.mutation.bucket_resolver import BucketIdResolver
from versioned.mutation.client import MutatorClient
from versioned.mutation.coordinator import MutatorCoordinator
from versioned.mutation.errors import (
    BucketIdError,
    GroupRevisitedError,
    MissingPartitionError,
    MutationConflictError,
    MutationError,
    MutationTransactionError,
    PartitionColumnUpdateError,
    PartitionCreationError,
    RecordSequenceError,
)
from versioned.mutation.records import ROW_ID
from versioned.mutation.transaction import Transaction
from versioned.mutation.validators import GroupingValidator, SequenceValidator
from versioned.transaction_state import TransactionState

__all__ = [
    "ROW_ID",
    "BucketIdError",
    "BucketIdResolver",
    "GroupRevisitedError",
    "GroupingValidator",
    "MissingPartitionError",
    "MutationConflictError",
    "MutationError",
    "MutationTransactionError",
    "MutatorClient",
    "MutatorCoordinator",
    "PartitionColumnUpdateError",
    "PartitionCreationError",
    "RecordIdentifier",
    "RecordSequenceError",
    "SequenceValidator",
    "Transaction",
    "TransactionState",
]
