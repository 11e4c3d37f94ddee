"""The files of one (partition, bucket) group of a mutation transaction (the acid layout's
`versioned.layouts.mutation_format.GroupWriter`).

Per group at most two files, for the table's write id ``W`` of the transaction:
``<partition>/delta_W_W_0000/bucket_N`` with the inserts (inserted rows and the new rows of
updates, row ids from 0 in arrival order, ROW__ID write id ``W``) and
``<partition>/delete_delta_W_W_0000/bucket_N`` with the delete events (deleted rows and the
old rows of updates: Hive 3's split update), sorted by ROW__ID. Both are written with the
ORC ACID writer (``hive.acid.*`` metadata) and appear complete or not at all; each
directory gets its ``_orc_acid_version`` marker, each insert file its key filters
(`layouts.acid.key_filters`: min/max key stats and a Bloom side file), as upsert writes
them, so later upserts prune these files too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from versioned.catalog.records import FileAdd, TableInfo
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.bucket_codec import RecordIdentifier, encode_bucket_property
from versioned.layouts.acid.directories import DeltaDir
from versioned.layouts.acid.key_filters import KEY_BLOOM_KIND, write_key_filter
from versioned.layouts.acid.orc_files import AcidBucketWriter, open_bucket_writer
from versioned.layouts.acid.paths import bucket_file_path, marker_path, write_acid_version_marker
from versioned.layouts.acid.snapshot_dirs import DELETE_KIND, MARKER_KIND
from versioned.storage.filesystem import FileIO
from versioned.values.arrow_types import arrow_type

INSERT_KIND = "delta"
STATEMENT_ID = 0
"""Every coordinator of a transaction writes ``delta_W_W_0000`` (as upsert does): a group's
files have exactly one name, so a group written again (a retried worker) replaces its
earlier attempt, and a group written by two coordinators is caught at commit."""
_CHUNK = 8192  # insert rows buffered before they go to the ORC writer


class GroupWriter:
    """Writes the events of one group (see the module docstring)."""

    def __init__(
        self,
        fileio: FileIO,
        table: TableInfo,
        *,
        txn_id: int,
        write_id: int,
        partition_path: str,
        bucket: int,
    ) -> None:
        """A writer of transaction ``txn_id`` (write id ``write_id``) into ``bucket`` of
        the partition at ``partition_path`` (relative to the table)."""
        self._fileio = fileio
        self._spec = table.spec
        self._location = table.location
        self._txn_id = txn_id
        self._write_id = write_id
        self._inserts = DeltaDir(write_id, write_id, STATEMENT_ID)
        self._deletes = DeltaDir(write_id, write_id, STATEMENT_ID, delete=True)
        self._path = partition_path
        self.bucket = bucket
        self._schema = pa.schema([(c.name, arrow_type(c.type)) for c in self._spec.data_columns])
        self._rows: list[Mapping[str, Any]] = []
        self._inserted = 0
        self._deleted: tuple[list[int], list[int], list[int]] = ([], [], [])
        self._files = contextlib.ExitStack()
        self._writer: AcidBucketWriter | None = None

    def insert(self, row: Mapping[str, Any]) -> None:
        """Add an insert event of ``row`` (its data columns)."""
        self._rows.append(row)
        if len(self._rows) >= _CHUNK:
            self._flush_rows()

    def delete(self, row_id: RecordIdentifier) -> None:
        """Add a delete event of the row ``row_id``."""
        for column, value in zip(
            self._deleted, (row_id.write_id, row_id.bucket_id, row_id.row_id), strict=True
        ):
            column.append(value)

    def close(self) -> list[FileAdd]:
        """Write what is left; the group's files, with their markers and key filters."""
        written: list[FileAdd] = []
        self._flush_rows()
        if self._writer is not None:
            self._writer = None
            self._files.close()  # the insert file appears complete
            written += self._insert_file()
        if self._deleted[0]:
            written += self._delete_file()
        return written

    def discard(self) -> None:
        """Drop the group unwritten (an error): an insert file being written never appears."""
        with contextlib.suppress(Exception):
            self._files.__exit__(RuntimeError, RuntimeError("discarded"), None)

    # files -------------------------------------------------------------------------------------

    def _rel(self, directory: DeltaDir) -> str:
        return bucket_file_path(self._path, directory, self.bucket)

    def _flush_rows(self) -> None:
        if not self._rows:
            return
        rows = pa.Table.from_pylist(self._rows, schema=self._schema)
        self._rows = []
        if self._writer is None:
            where = f"{self._location}/{self._rel(self._inserts)}"
            self._writer = self._files.enter_context(
                open_bucket_writer(
                    self._fileio,
                    where,
                    self._spec.data_columns,
                    bucket_property=encode_bucket_property(self.bucket, STATEMENT_ID),
                )
            )
        self._writer.insert(self._write_id, rows)
        self._inserted += rows.num_rows

    def _insert_file(self) -> list[FileAdd]:
        rel = self._rel(self._inserts)
        stats: dict[str, Any] = {"write_id": self._write_id, "bucket": self.bucket}
        out: list[FileAdd] = []
        filters = write_key_filter(self._fileio, self._location, rel, self._spec)
        txn = self._txn_id
        if filters is not None:
            stats.update(filters.stats)
            bloom = FileAdd(
                None, filters.bloom_path, KEY_BLOOM_KIND, txn, filters.bloom_size, filters.keys
            )
            out.append(bloom)
        size = self._fileio.size(f"{self._location}/{rel}")
        out.append(FileAdd(None, rel, INSERT_KIND, txn, size, self._inserted, stats))
        out.append(self._marker(self._inserts))
        return out

    def _delete_file(self) -> list[FileAdd]:
        rel = self._rel(self._deletes)
        where = f"{self._location}/{rel}"
        fields = (s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID)
        events = pa.table(
            {f: pa.array(v, pa.int64()) for f, v in zip(fields, self._deleted, strict=True)}
        )
        prop = encode_bucket_property(self.bucket, STATEMENT_ID)
        with open_bucket_writer(
            self._fileio, where, self._spec.data_columns, bucket_property=prop, events="delete"
        ) as writer:
            writer.delete(self._write_id, events)  # sorted by ROW__ID
        size = self._fileio.size(where)
        stats = {"write_id": self._write_id, "bucket": self.bucket}
        txn = self._txn_id
        add = FileAdd(None, rel, DELETE_KIND, txn, size, events.num_rows, stats)
        return [add, self._marker(self._deletes)]

    def _marker(self, directory: DeltaDir) -> FileAdd:
        """The directory's ``_orc_acid_version`` marker (written by every group that writes
        into it: the same two bytes, atomically; the commit lists it once)."""
        where = f"{self._location}/{self._path}".rstrip("/")
        write_acid_version_marker(self._fileio, where, directory)
        rel = marker_path(self._path, directory)
        size = self._fileio.size(f"{self._location}/{rel}")
        return FileAdd(None, rel, MARKER_KIND, self._txn_id, size, 0)
