"""Rejected stream records kept in the table's dead-letter area (``versioned stream
--dead-letter``).

`TransactionBatch` counts the records its writer rejects but does not keep them; until it
does, the command keeps them here: a `RejectTap` wraps the record writer and collects what
it rejects, and `DeadLetters` writes a transaction's rejects, with where they came from and
why, as one JSON-lines file under the table's ``_dead_letter/`` folder (the folder `upsert`
uses; its rows carry ``_raw`` and ``_reason`` as upsert's do), before the transaction commits.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from versioned.catalog.records import TableInfo
from versioned.layouts.base import layout_of
from versioned.storage.filesystem import FileIO
from versioned.streaming.encoding import EncodedRecords, RecordWriter, TextRecords


class RejectTap(RecordWriter):
    """A record writer that passes everything to ``inner`` and keeps what it rejects."""

    def __init__(self, inner: RecordWriter) -> None:
        super().__init__(spec=inner.spec, dead_letter=inner.dead_letter)
        self.inner = inner
        self.rejected: list[tuple[int, bytes, str]] = []
        """``(index in its encode call, record, reason)`` since the last `take`."""

    def _parse(self, texts: pa.Array) -> TextRecords:  # pragma: no cover - encode delegates
        raise NotImplementedError("RejectTap delegates encode to the writer it wraps")

    def encode(self, records: Iterable[bytes | str]) -> EncodedRecords:
        """Encode with the wrapped writer, keeping its rejects."""
        encoded = self.inner.encode(records)
        self.rejected.extend((r.index, r.record, r.reason) for r in encoded.rejected)
        return encoded

    def take(self) -> list[tuple[int, bytes, str]]:
        """The rejects kept since the last call."""
        taken, self.rejected = self.rejected, []
        return taken


@dataclass(frozen=True)
class DeadLetter:
    """A rejected record, where it came from, and why."""

    source: str
    line: int
    record: bytes
    reason: str

    def to_json(self) -> str:
        return json.dumps(
            {
                "_raw": self.record.decode("utf-8", "backslashreplace"),
                "_reason": self.reason,
                "_source": self.source,
                "_line": self.line,
            },
            ensure_ascii=False,
        )


class DeadLetters:
    """Writes the dead letters of one transaction as one file."""

    def __init__(self, fileio: FileIO, table: TableInfo) -> None:
        self._fileio = fileio
        self._folder = layout_of(table.spec.layout).dead_letter_dir(table.location)
        self.written_to: str | None = None
        """The folder of the last file written (full path)."""

    def write(self, txn_id: int, letters: Sequence[DeadLetter]) -> None:
        """Write ``letters`` (nothing when there are none)."""
        if not letters:
            return
        folder = f"{self._folder}/batch={int(time.time() * 1000)}-stream-{txn_id}"
        body = "".join(letter.to_json() + "\n" for letter in letters)
        self._fileio.write_bytes_atomic(f"{folder}/part-00000.json", body.encode("utf-8"))
        self.written_to = self._fileio.full_path(self._folder)
