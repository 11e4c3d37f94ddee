"""ACID bucket files: writing events with pyorc, reading them back to Arrow with pyarrow.

Writing uses pyorc because it can set ORC user metadata (``hive.acid.*``) and write
intermediate footers (streaming flushes); pyarrow's ORC writer can do neither. Reading uses
``pyarrow.orc``, which reads the nested ``row`` struct (NULL in delete events) directly into
Arrow.

Stripes are cut by the writer itself, every ``stripe_rows`` events and at each `flush`,
so that the ``hive.acid.key.index`` entry of every stripe (its last ROW__ID) is known. A cut
writes an ORC intermediate footer; readers find stripes through the last footer, so the
earlier ones are dead bytes, as in Hive's streaming files. The ``hive.acid.*`` metadata is
added to the final footer only (ORC's C++ writer appends, never replaces, metadata entries),
so a reader stopping at an intermediate footer (a streaming file still open) sees no key
index; Hive's readers treat that as one key range for the whole file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

import pyarrow as pa
import pyarrow.orc as porc
import pyorc
from pyorc.converters import ORCConverter
from pyorc.enums import TypeKind

from versioned.catalog.records import DataFile
from versioned.errors import SchemaError
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.acid_metadata import (
    AcidStats,
    format_key_index,
    parse_key_index,
)
from versioned.layouts.acid.bucket_codec import RecordIdentifier, decode_bucket_property
from versioned.layouts.acid.errors import AcidFileError
from versioned.layouts.acid.snapshot_dirs import STREAM_OPEN
from versioned.schema import Column
from versioned.storage.filesystem import FileIO

EventKind = Literal["insert", "delete"]
_HUGE_STRIPE = 1 << 62  # stripes are cut by the writer, never by the ORC library
_BATCH = 1024


@dataclass(frozen=True)
class AcidFileSummary:
    """What a closed writer wrote.

    Attributes:
        stats: Event counts (also in ``hive.acid.stats``).
        key_index: The last ROW__ID of each stripe (also in ``hive.acid.key.index``).
    """

    stats: AcidStats
    key_index: tuple[RecordIdentifier, ...]

    @property
    def events(self) -> int:
        """Number of events in the file."""
        return self.stats.inserts + self.stats.updates + self.stats.deletes


class _EpochDays(ORCConverter):
    """ORC ``date`` from days since 1970-01-01 (any day Spark holds, also outside Python's
    ``date`` range)."""

    @staticmethod
    def from_orc(days: int) -> int:
        return days

    @staticmethod
    def to_orc(days: int) -> int:
        return days


class _EpochMicros(ORCConverter):
    """ORC ``timestamp`` from microseconds since the epoch, UTC (any instant Spark holds)."""

    @staticmethod
    def from_orc(seconds: int, nanoseconds: int, timezone: Any) -> int:
        return seconds * 1_000_000 + nanoseconds // 1000

    @staticmethod
    def to_orc(micros: int, timezone: Any) -> tuple[int, int]:
        seconds, rest = divmod(micros, 1_000_000)
        return seconds, rest * 1000


_CONVERTERS: dict[TypeKind, type[ORCConverter]] = {
    TypeKind.DATE: _EpochDays,
    TypeKind.TIMESTAMP: _EpochMicros,
}


def _orc_values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A column's values as the converters take them: dates and timestamps as integers."""
    if pa.types.is_date32(column.type):
        return column.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(column.type):
        return column.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64()).to_pylist()
    return column.to_pylist()


class AcidBucketWriter:
    """Writes the events of one bucket file (``bucket_N`` of a delta, delete delta or base).

    Insert events get row ids counting from 0 per write id, in the order given; write ids
    must not decrease. Delete events name the ROW__IDs they delete and are written sorted.
    Use as a context manager, or call `close`.
    """

    def __init__(
        self,
        out: BinaryIO | pa.NativeFile,
        columns: Sequence[Column],
        *,
        bucket_property: int,
        events: EventKind = "insert",
        streaming: bool = False,
        stripe_rows: int = 64 * _BATCH,
    ) -> None:
        """Start a bucket file.

        Args:
            out: A writable binary stream; it is flushed at each `flush` but never closed.
            columns: The table's data columns (without partition columns), in table order.
            bucket_property: The BucketCodec property of inserted rows (`encode_bucket_property`).
            events: ``"insert"`` for ``delta``/``base`` files, ``"delete"`` for ``delete_delta``.
            streaming: Allow `flush` after any event (an ORC batch of one row, slower).
            stripe_rows: Events per stripe; a multiple of 1024 unless ``streaming``.

        Raises:
            AcidFileError: ``stripe_rows`` is not allowed.
        """
        if stripe_rows <= 0 or (not streaming and stripe_rows % _BATCH):
            raise AcidFileError(f"stripe_rows must be a positive multiple of {_BATCH}")
        decode_bucket_property(bucket_property)
        self._out = out
        self._columns = tuple(columns)
        self._row_type = s.row_arrow_type(self._columns)
        self._bucket = bucket_property
        self._kind = events
        self._streaming = streaming
        self._stripe_rows = stripe_rows
        # Rows wait in pyorc's batch until it is full; a cut must find it empty, so the batch
        # divides every cut point (1 when a flush may come after any event).
        self._writer: Any = pyorc.Writer(
            out,
            s.acid_orc_schema(self._columns),
            batch_size=1 if streaming else _BATCH,
            stripe_size=_HUGE_STRIPE,
            converters=_CONVERTERS,
        )
        self._next_row_id: dict[int, int] = {}
        self._last_write_id = 0
        self._last_key: RecordIdentifier | None = None
        self._in_stripe = 0
        self._keys: list[RecordIdentifier] = []
        self._counts = {s.INSERT: 0, s.UPDATE: 0, s.DELETE: 0}
        self._flushed = 0
        self._closed = False

    def __enter__(self) -> AcidBucketWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._closed:
            self.close()

    def insert(self, write_id: int, rows: pa.Table | pa.RecordBatch) -> int:
        """Write one insert event per row (``originalTransaction = currentTransaction``).

        Args:
            write_id: The inserting write id; not lower than any earlier insert's.
            rows: The data columns (extra columns are ignored).

        Returns:
            The row id of the first row; the others follow consecutively.

        Raises:
            SchemaError: A data column is missing or a value does not fit its type.
            AcidFileError: This is a delete-event file, or the write id decreased.
        """
        self._check_open("insert")
        if write_id < self._last_write_id:
            raise AcidFileError(
                f"write id {write_id} after {self._last_write_id}: a bucket file holds "
                "inserts in write id order"
            )
        data = self._python_rows(rows)
        first = self._next_row_id.get(write_id, 0)
        self._next_row_id[write_id] = first + len(data)
        self._last_write_id = write_id
        events = [
            (s.INSERT, write_id, self._bucket, first + i, write_id, row)
            for i, row in enumerate(data)
        ]
        self._write(events, s.INSERT)
        return first

    def delete(
        self, write_id: int, row_ids: Sequence[RecordIdentifier] | pa.Table | pa.RecordBatch
    ) -> None:
        """Write one delete event (``row`` NULL) per ROW__ID, sorted by ROW__ID.

        Args:
            write_id: The deleting write id (``currentTransaction``).
            row_ids: The deleted rows' ROW__IDs, or a table with columns
                ``originalTransaction``, ``bucket``, ``rowId``.
        """
        self._check_open("delete")
        if isinstance(row_ids, pa.Table | pa.RecordBatch):
            fields = (s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID)
            table = pa.table({f: row_ids.column(f).cast(pa.int64()) for f in fields})
            if any(table.column(f).null_count for f in fields):
                raise AcidFileError("a ROW__ID to delete has a null field")
            table = table.sort_by([(f, "ascending") for f in fields])  # Hive's ROW__ID order
            columns = [table.column(f).to_pylist() for f in fields]
            events = [(s.DELETE, w, b, r, write_id, None) for w, b, r in zip(*columns, strict=True)]
        else:
            events = [
                (s.DELETE, key.write_id, key.bucket_id, key.row_id, write_id, None)
                for key in sorted(row_ids)
            ]
        self._write(events, s.DELETE)

    def flush(self) -> int:
        """Make every event written so far readable (streaming commit).

        Returns:
            The logical length: readers that stop at this many bytes see all events so far.
            Append it to the file's ``_flush_length`` side file.

        Raises:
            AcidFileError: The writer was not opened with ``streaming=True``.
        """
        if not self._streaming:
            raise AcidFileError("flush needs a writer opened with streaming=True")
        self._check_open(None)
        if self._in_stripe:
            self._cut()
        flush = getattr(self._out, "flush", None)
        if flush is not None:
            flush()
        return self._flushed

    def close(self) -> AcidFileSummary:
        """Write the last stripe and the footer with the ``hive.acid.*`` metadata."""
        self._check_open(None)
        self._closed = True
        if self._in_stripe and self._last_key is not None:
            self._keys.append(self._last_key)
        summary = AcidFileSummary(
            AcidStats(self._counts[s.INSERT], self._counts[s.UPDATE], self._counts[s.DELETE]),
            tuple(self._keys),
        )
        metadata = {
            s.KEY_INDEX_KEY: format_key_index(summary.key_index).encode(),
            s.STATS_KEY: summary.stats.to_string().encode(),
            s.VERSION_KEY: s.ACID_VERSION.encode(),
        }
        self._writer.set_user_metadata(**metadata)
        self._writer.close()
        return summary

    def _check_open(self, kind: EventKind | None) -> None:
        if self._closed:
            raise AcidFileError("the bucket file writer is closed")
        if kind is not None and kind != self._kind:
            raise AcidFileError(
                f"cannot write {kind} events to a {self._kind}-event file; inserts go to "
                "delta_/base_ directories and deletes to delete_delta_ directories"
            )

    def _python_rows(self, rows: pa.Table | pa.RecordBatch) -> list[tuple[Any, ...]]:
        names = [c.name for c in self._columns]
        missing = [n for n in names if n not in rows.column_names]
        if missing:
            raise SchemaError(f"rows lack data columns {', '.join(missing)}", columns=missing)
        try:
            values = [_orc_values(rows.column(f.name).cast(f.type)) for f in self._row_type]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise SchemaError(f"rows do not fit the table's column types: {exc}") from exc
        return list(zip(*values, strict=True)) if values else []

    def _write(self, events: list[tuple[Any, ...]], operation: int) -> None:
        pos = 0
        while pos < len(events):
            take = min(self._stripe_rows - self._in_stripe, len(events) - pos)
            self._writer.writerows(events[pos : pos + take])
            pos += take
            self._in_stripe += take
            last = events[pos - 1]
            self._last_key = RecordIdentifier(last[1], last[2], last[3])
            if self._in_stripe == self._stripe_rows:
                self._cut()
        self._counts[operation] += len(events)

    def _cut(self) -> None:
        self._flushed = int(self._writer.write_intermediate_footer())
        if self._last_key is not None:
            self._keys.append(self._last_key)
        self._in_stripe = 0


@contextmanager
def open_bucket_writer(
    fileio: FileIO, rel: str, columns: Sequence[Column], **options: Any
) -> Iterator[AcidBucketWriter]:
    """A writer on ``rel`` under ``fileio``'s root; the file appears complete on a clean
    exit (atomic), or not at all. ``options`` are `AcidBucketWriter`'s."""
    with fileio.open_output_atomic(rel) as out, AcidBucketWriter(out, columns, **options) as w:
        yield w


@dataclass(frozen=True)
class AcidBucketFile:
    """The events and ACID metadata of one bucket file.

    Attributes:
        events: ``operation, originalTransaction, bucket, rowId, currentTransaction, row``.
        user_metadata: The ORC footer's user metadata.
        stripes: Number of stripes read.
    """

    events: pa.Table
    user_metadata: Mapping[str, bytes]
    stripes: int

    @property
    def key_index(self) -> tuple[RecordIdentifier, ...]:
        """``hive.acid.key.index``: the last ROW__ID of each stripe (empty if absent)."""
        return parse_key_index(self.user_metadata.get(s.KEY_INDEX_KEY, b"").decode())

    @property
    def stats(self) -> AcidStats | None:
        """``hive.acid.stats``, or ``None`` if absent."""
        raw = self.user_metadata.get(s.STATS_KEY)
        return None if raw is None else AcidStats.parse(raw.decode())

    @property
    def acid_version(self) -> str | None:
        """``hive.acid.version``, or ``None`` if absent."""
        raw = self.user_metadata.get(s.VERSION_KEY)
        return None if raw is None else raw.decode()


def read_bucket_file(
    source: bytes | pa.Buffer | pa.NativeFile,
    columns: Sequence[Column] | None = None,
    *,
    length: int | None = None,
) -> AcidBucketFile:
    """Read an ACID bucket file into Arrow.

    Args:
        source: The file's bytes, or a random-access file.
        columns: The table's data columns: the ``row`` struct is cast to their Arrow types
            (e.g. ORC timestamps to UTC microseconds). ``None`` keeps ORC's types.
        length: Read only the first ``length`` bytes (a streaming file's logical length
            from its side file).

    Raises:
        AcidFileError: The file is not ORC, is cut off, or is not an ACID bucket file.
    """
    try:
        if length is not None:
            if isinstance(source, pa.NativeFile):
                source = source.read_at(length, 0)
            else:
                source = memoryview(source)[:length].tobytes()
        reader = porc.ORCFile(
            source if isinstance(source, pa.NativeFile) else pa.BufferReader(source)
        )
        table = reader.read()
        metadata = dict(reader.metadata or {})
    except (OSError, pa.ArrowException) as exc:
        raise AcidFileError(f"cannot read an ORC bucket file: {exc}") from exc
    _check_acid_schema(table.schema)
    if columns is not None:
        target = s.acid_arrow_schema(columns)
        try:
            table = table.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:
            raise AcidFileError(
                f"bucket file rows do not match the table's columns: {exc}"
            ) from exc
    return AcidBucketFile(
        table,
        {str(k.decode() if isinstance(k, bytes) else k): bytes(v) for k, v in metadata.items()},
        reader.nstripes,
    )


def read_committed_fields(
    fileio: FileIO, location: str, file: DataFile, fields: Sequence[str] | None
) -> pa.Table:
    """``fields`` (``None``: all) of the committed bucket file ``file`` under the table at
    ``location``; of a file an open streaming batch still appends to (stat
    `snapshot_dirs.STREAM_OPEN`), only its committed prefix, which ends at an ORC
    intermediate footer and so is a whole ORC file."""
    rel = f"{location}/{file.path}"
    with fileio.open_input(rel) as handle, fileio.reading(rel):
        source: Any = handle
        if file.stats.get(STREAM_OPEN):
            source = pa.BufferReader(handle.read_at(file.size_bytes, 0))
        return porc.ORCFile(source).read(columns=None if fields is None else list(fields))


def read_bucket(
    fileio: FileIO, rel: str, columns: Sequence[Column] | None = None, *, length: int | None = None
) -> AcidBucketFile:
    """`read_bucket_file` of the file ``rel`` under ``fileio``'s root."""
    with fileio.open_input(rel) as handle:
        return read_bucket_file(handle, columns, length=length)


def _check_acid_schema(schema: pa.Schema) -> None:
    expected = [(f.name, f.type) for f in s.EVENT_ARROW_FIELDS]
    actual = [(f.name, f.type) for f in schema][: len(expected)]
    row = schema.field(s.ROW) if s.ROW in schema.names else None
    if actual != expected or row is None or not pa.types.is_struct(row.type):
        raise AcidFileError(
            f"not an ACID bucket file: its schema is {schema}, not "
            "struct<operation, originalTransaction, bucket, rowId, currentTransaction, row>"
        )
