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

Design decisions (issue 14):

1. Atomic commit across tables: ``txn.commit()`` makes one ``MetaStore.commit_tables`` call,
   which applies every table's change with the single-table commit logic
   (``catalog.commits.apply``) inside one SQL transaction and finishes the transaction once:
   every table gets its commit or none does (`catalog.multi_commits`).
2. Reporting files: a coordinator's ``close()`` writes a manifest (JSON) into the
   transaction's staging folder of the table (``_staging/txn=T/manifests/``); the commit reads
   them and lists exactly those files. No catalog connection is needed by workers; a worker
   that dies writes no manifest, so its files are never listed (never visible to our
   readers) and vacuum removes them. Hive's own readers list directories: abort the
   transaction when a worker dies, or rerun its groups (the same group writes the same
   file name, replacing the dead attempt), as Hive's documentation asks.
3. Files: what a group's mutations become on storage is the table's layout's (its
   ``mutation_format`` method, `versioned.layouts.mutation_format`, reached through the
   registry; a layout without one refuses with `NotSupportedError`). The acid layout
   writes per (partition, bucket) group one ``delta_W_W_0000/bucket_N`` (inserts, row ids
   from 0, write id W) and one ``delete_delta_W_W_0000/bucket_N`` (sorted by ROW__ID),
   markers, key filters (``layouts/acid/mutation/``). Every coordinator uses statement 0:
   groups are disjoint by contract; two coordinators writing one group are caught at
   commit.
4. Validators: `validators`, `coordinator`. Bucket columns of an insert or update must hash
   to its ROW__ID bucket (`BucketIdError`), so an update of a bucket column is refused; an
   update's partition columns, when the record has them, must be the partition given
   (`PartitionColumnUpdateError`). A DATE or TIMESTAMP value ORC's readers would not give
   back as written (a day of 1582-10-05..14, a time in the last second before 1970) is
   refused (`UnstorableValueError`; issue 27 item 4).
5. Partitions: see `coordinator`; a delete or update into a missing partition fails
   (`MissingPartitionError`), as in Hive; with ``create_partitions=False`` a commit into
   missing partitions fails (`PartitionCreationError`, the transaction stays open) until
   ``client.create_partitions`` created them.
6. Primary keys: the API is ROW__ID-based, like Hive's, and does not check key uniqueness:
   the caller owns it (it resolved keys by joining with ``read(with_row_id=True)``). An
   insert of a key that exists, or an update that changes a key, leaves two live rows
   with one key. Use ``Table.upsert`` for key-based changes.
7. Locks and expiry: `transaction`.
8. The Spark form, ``vm.apply(txn, table, mutations_df)`` (`spark_form`), runs
   coordinators on Spark's executors: it checks the transaction and the table, then runs
   ``mutation/engine/apply.py`` (the one folder of this package where pyspark may be
   imported; the table's layout adds its buckets, `MutationFormat.spark_buckets`), imported
   on the first ``apply``, so this package stays free of Spark for plain worker processes.
   See docs/mutation.md.
"""

from versioned.mutation.bucket_resolver import BucketIdResolver
from versioned.mutation.client import MutatorClient
from versioned.mutation.coordinator import MutatorCoordinator
from versioned.mutation.errors import (
    BucketIdError,
    GroupRevisitedError,
    MissingPartitionError,
    MissingRowIdError,
    MutationConflictError,
    MutationError,
    MutationSchemaError,
    MutationTaskError,
    MutationTransactionError,
    PartitionColumnUpdateError,
    PartitionCreationError,
    RecordSequenceError,
    UnknownOperationError,
    UnstorableValueError,
)
from versioned.mutation.records import ROW_ID, ApplySummary
from versioned.mutation.spark_form import OP_COLUMN, apply
from versioned.mutation.transaction import Transaction
from versioned.mutation.validators import GroupingValidator, SequenceValidator
from versioned.record_ids import RecordIdentifier
from versioned.transaction_state import TransactionState

__all__ = [
    "OP_COLUMN",
    "ROW_ID",
    "ApplySummary",
    "BucketIdError",
    "BucketIdResolver",
    "GroupRevisitedError",
    "GroupingValidator",
    "MissingPartitionError",
    "MissingRowIdError",
    "MutationConflictError",
    "MutationError",
    "MutationSchemaError",
    "MutationTaskError",
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
    "UnknownOperationError",
    "UnstorableValueError",
    "apply",
]
