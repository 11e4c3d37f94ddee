"""Applying ordered mutations to one table of a transaction (Hive's ``MutatorCoordinator``).

Records come grouped by (partition, bucket) and, within a group, ordered by ROW__ID; the
coordinator writes each group's files directly, with the group writer of the table's layout
(`versioned.layouts.mutation_format`, no Spark), and reports them, when it closes, in a
manifest the transaction's commit reads (`manifest`). Checks, as Hive's:

* A record of a group the coordinator has left raises `GroupRevisitedError`.
* Updates and deletes of a group must come in ``(writeId, rowId)`` order (the first of a
  group is always accepted; the check restarts at every group change), else
  `RecordSequenceError`. Inserts are not sequence-checked: their write and row ids are
  assigned when written.
* An insert or update whose ROW__ID bucket is not the bucket of its bucket columns raises
  `BucketIdError` (records never move between buckets); deletes use only their ROW__ID.
* An insert or update whose partition columns (when the record has them) name another
  partition than the one given raises `PartitionColumnUpdateError`.

Partitions: with ``create_partitions`` the first insert into a partition creates it
(``MetaStore.add_partition``: atomic, racing coordinators all succeed); a group whose
first mutation is an update or delete needs the partition to exist
(`MissingPartitionError`). Without ``create_partitions`` the coordinator never connects to
the catalog: it writes into the Hive-standard partition path, and the client creates the
partitions (``MutatorClient.create_partitions``) before the commit.

A coordinator pickles to its `MutationTarget` only (no connection, no open group), so it
can be shipped to another process and used there; close it there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from versioned.catalog.store import MetaStore
from versioned.errors import InputError, NoSuchPartitionError, SchemaError
from versioned.layouts.mutation_format import GroupWriter
from versioned.mutation.bucket_resolver import BucketIdResolver
from versioned.mutation.errors import (
    BucketIdError,
    GroupRevisitedError,
    MissingPartitionError,
    MutationError,
    PartitionColumnUpdateError,
    RecordSequenceError,
    UnstorableValueError,
)
from versioned.mutation.formats import format_for
from versioned.mutation.manifest import WrittenFile, write_manifest
from versioned.mutation.records import as_mapping, row_id_of
from versioned.mutation.target import MutationTarget
from versioned.mutation.validators import GroupingValidator, SequenceValidator
from versioned.record_ids import RecordIdentifier
from versioned.storage.filesystem import FileIO
from versioned.storage.partition_paths import partition_path
from versioned.values.orc_values import value_problem

_INSERT, _UPDATE, _DELETE = "insert", "update", "delete"


class MutatorCoordinator:
    """Writes one table's mutations for one transaction (see the module docstring)."""

    def __init__(self, target: MutationTarget) -> None:
        """A coordinator; get one with ``MutatorClient.coordinator(txn, table)``."""
        self.target = target
        spec = target.table.spec
        self._partition_by = tuple(spec.partition_by)
        self._data_columns = tuple(c.name for c in spec.data_columns)
        self._orc_checked = tuple(
            (c.name, c.type) for c in spec.data_columns if c.type in ("DATE", "TIMESTAMP")
        )
        self._format = format_for(spec)
        self._resolver = BucketIdResolver(spec)
        self._grouping = GroupingValidator()
        self._sequence = SequenceValidator()
        self._group: GroupWriter | None = None
        self._group_key: tuple[tuple[str | None, ...], int] | None = None
        self._paths: dict[tuple[str | None, ...], str] = {}
        self._written: list[WrittenFile] = []
        self._counts = {"inserted": 0, "updated": 0, "deleted": 0}
        self._fileio: FileIO | None = None
        self._store: MetaStore | None = None
        self.closed = False

    def __reduce__(self) -> tuple[Any, ...]:
        return (MutatorCoordinator, (self.target,))

    def __repr__(self) -> str:
        return f"MutatorCoordinator({self.target.name}, txn {self.target.txn_id})"

    def __enter__(self) -> MutatorCoordinator:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.close()
        else:
            self._abandon()

    @property
    def pending(self) -> bool:
        """Whether it wrote mutations it has not reported yet (it is not closed)."""
        return not self.closed and (self._group is not None or bool(self._written))

    # mutations --------------------------------------------------------------------------------

    @property
    def counts(self) -> dict[str, int]:
        """Mutations applied so far: ``inserted``, ``updated``, ``deleted``."""
        return dict(self._counts)

    @property
    def files(self) -> tuple[WrittenFile, ...]:
        """The files of the groups finished so far (all of them once closed)."""
        return tuple(self._written)

    def insert(
        self, partition: Sequence[str | None], record: Any, *, hashed_bucket: int | None = None
    ) -> None:
        """Insert ``record`` (every data column, and a ROW__ID naming its bucket:
        `BucketIdResolver.attach_bucket_id`) into ``partition`` (``[]`` when unpartitioned).

        ``hashed_bucket``: the bucket of the record's bucket columns when the caller computed
        it already (vectorised, as `versioned.mutation.apply` does); the record is not hashed
        again then.
        """
        fields, row_id = self._checked(_INSERT, partition, record, hashed_bucket)
        group = self._reconfigure(_INSERT, partition, row_id)
        group.insert(fields)
        self._counts["inserted"] += 1

    def update(
        self, partition: Sequence[str | None], record: Any, *, hashed_bucket: int | None = None
    ) -> None:
        """Replace the row ``record[ROW__ID]`` of ``partition`` by ``record`` (every data
        column): a delete event of the old row and an insert with a new ROW__ID.
        ``hashed_bucket`` as for `insert`."""
        fields, row_id = self._checked(_UPDATE, partition, record, hashed_bucket)
        group = self._reconfigure(_UPDATE, partition, row_id)
        group.delete(row_id)
        group.insert(fields)
        self._counts["updated"] += 1

    def delete(self, partition: Sequence[str | None], record: Any) -> None:
        """Delete the row ``record[ROW__ID]`` of ``partition`` (only the ROW__ID is used)."""
        row_id = row_id_of(as_mapping(record))
        self._check_open()
        group = self._reconfigure(_DELETE, partition, row_id)
        group.delete(row_id)
        self._counts["deleted"] += 1

    def close(self) -> None:
        """Write the last group and report every file written to the transaction.

        Closing twice is a no-op; a coordinator that wrote nothing reports nothing.
        """
        if self.closed:
            return
        try:
            self._finish_group()
            if self._written:
                write_manifest(self._io(), self.target.staging_dir, self._written, self._counts)
        except BaseException:
            self._abandon()
            raise
        self.closed = True
        self._release()

    # helpers ----------------------------------------------------------------------------------

    def _checked(
        self, op: str, partition: Sequence[str | None], record: Any, hashed: int | None = None
    ) -> tuple[Mapping[str, Any], RecordIdentifier]:
        self._check_open()
        fields = as_mapping(record)
        row_id = row_id_of(fields)
        missing = [c for c in self._data_columns if c not in fields]
        if missing:
            raise SchemaError(
                f"{_a(op)} needs every data column of {self.target.name}; the record lacks "
                f"{', '.join(missing)}",
                columns=missing,
            )
        for column, type_name in self._orc_checked:
            problem = value_problem(column, type_name, fields[column])
            if problem is not None:
                raise UnstorableValueError(
                    f"the {op}'s record cannot be stored in {self.target.name}: {problem}; "
                    "nothing of it was written",
                    column=column,
                )
        values = self._values(partition)
        for column, value in zip(self._partition_by, values, strict=True):
            if column in fields and _as_value(fields[column]) != value:
                raise PartitionColumnUpdateError(
                    f"the {op}'s record's {column}={fields[column]!r} is not its partition's "
                    f"value {value!r}: records never move between partitions (delete the row "
                    "and insert it into the other partition)",
                    column=column,
                )
        expected = self._resolver.bucket_of(fields) if hashed is None else hashed
        if row_id.bucket.bucket_id != expected:
            raise BucketIdError(
                f"the {op}'s record's ROW__ID names bucket {row_id.bucket.bucket_id}, but its "
                f"bucket columns {list(self._resolver.columns)} hash to bucket {expected}: "
                "records never move between buckets (do not update bucket columns; attach "
                "bucket ids to inserts with BucketIdResolver)",
                row_id=row_id,
                expected_bucket=expected,
            )
        return fields, row_id

    def _reconfigure(
        self, op: str, partition: Sequence[str | None], row_id: RecordIdentifier
    ) -> GroupWriter:
        """The writer of the record's group: a new one when the group changes."""
        values = self._values(partition)
        bucket = row_id.bucket.bucket_id
        group = self._group
        if group is None or self._group_key != (values, bucket):
            if not self._grouping.is_in_sequence(values, bucket):
                raise GroupRevisitedError(
                    f"partition {list(values)} bucket {bucket} of {self.target.name} was "
                    "written already and left: group mutations by (partition, bucket)",
                    partition=values,
                    bucket=bucket,
                )
            self._finish_group()
            path = self._partition_path(op, values)
            self._sequence.reset()
            group = self._group = self._format.group_writer(
                self._io(),
                self.target.table,
                txn_id=self.target.txn_id,
                write_id=self.target.write_id,
                partition_path=path,
                bucket=bucket,
            )
            self._group_key = (values, bucket)
        if op != _INSERT and not self._sequence.is_in_sequence(row_id):
            raise RecordSequenceError(
                f"ROW__ID {row_id.to_json()} of a {op} in partition {list(values)} bucket "
                f"{bucket} does not follow the group's previous one ({self._sequence}): sort "
                "each group by ROW__ID (writeid, rowid)",
                row_id=row_id,
            )
        return group

    def _partition_path(self, op: str, values: tuple[str | None, ...]) -> str:
        """Where the partition's files go; created first (catalog) when asked to."""
        found = self._paths.get(values)
        if found is not None:
            return found
        if not self.target.create_partitions:
            path = partition_path(self._partition_by, values)
        elif op == _INSERT:
            path = self._catalog().add_partition(self.target.table_name, values).path
        else:
            try:
                path = self._catalog().partition(self.target.table_name, values).path
            except NoSuchPartitionError as exc:
                raise MissingPartitionError(
                    f"{self.target.name} has no partition {list(values)}: {_a(op)} names a "
                    "row of an existing partition (its ROW__ID comes from reading it)",
                    partition=values,
                ) from exc
        self._paths[values] = path
        return path

    def _values(self, partition: Sequence[str | None]) -> tuple[str | None, ...]:
        if isinstance(partition, str | bytes) or not isinstance(partition, Sequence):
            raise InputError(f"partition values are a list, got {partition!r}")
        if len(partition) != len(self._partition_by):
            raise InputError(
                f"{self.target.name} is partitioned by {list(self._partition_by)}: give "
                f"{len(self._partition_by)} partition value(s), not {list(partition)}"
            )
        return tuple(None if v in ("", None) else str(v) for v in partition)

    def _finish_group(self) -> None:
        group, self._group = self._group, None
        if group is None or self._group_key is None:
            return
        values = self._group_key[0]
        try:
            self._written += [WrittenFile(values, add) for add in group.close()]
        except BaseException:
            group.discard()
            raise

    def _check_open(self) -> None:
        if self.closed:
            raise MutationError(f"{self!r} is closed: get a new coordinator")

    def _abandon(self) -> None:
        """Stop without reporting anything (an error): what was written is an orphan."""
        if self._group is not None:
            self._group.discard()
            self._group = None
        self.closed = True
        self._release()

    def _io(self) -> FileIO:
        if self._fileio is None:
            self._fileio = FileIO.for_root(self.target.warehouse)
        return self._fileio

    def _catalog(self) -> MetaStore:
        if self._store is None:
            self._store = MetaStore.connect(self.target.catalog_url, self.target.user, create=False)
        return self._store

    def _release(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def _as_value(value: Any) -> str | None:
    """A record's partition column value as the partition's string value."""
    return None if value is None or value == "" else str(value)


def _a(op: str) -> str:
    """``an insert``, ``an update``, ``a delete``."""
    return f"an {op}" if op[0] in "aeiou" else f"a {op}"
