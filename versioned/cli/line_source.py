"""Lines of text from stdin or files, read by a thread of their own (for `versioned stream`).

The reader thread hands complete lines to the consumer in chunks through a bounded queue, so
the consumer can wait for input with a timeout (and commit on time while ``tail -F`` is
quiet), while a fast file is read in large chunks and a slow writer holds the reader back.
A read returns what the pipe has (one ``read(2)``), so a line is handed over as soon as it
ends.
"""

from __future__ import annotations

import io
import os
import queue
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from versioned.errors import InputError

STDIN = "-"
READ_SIZE = 1 << 20
QUEUE_CHUNKS = 16
"""Chunks (of up to ``READ_SIZE`` bytes each) waiting for the consumer at most."""


@dataclass(frozen=True)
class LineChunk:
    """Complete lines of one source: the records (terminator stripped; empty lines left
    out) and the line number of each in its source (1-based)."""

    source: str
    records: list[bytes]
    numbers: Sequence[int]

    def __len__(self) -> int:
        return len(self.records)

    def split(self, count: int) -> tuple[LineChunk, LineChunk]:
        """The first ``count`` records, and the rest."""
        return (
            LineChunk(self.source, self.records[:count], self.numbers[:count]),
            LineChunk(self.source, self.records[count:], self.numbers[count:]),
        )


@dataclass(frozen=True)
class EndOfInput:
    """Every source was read to its end (``error``: reading failed instead)."""

    error: InputError | None = None


def source_label(source: str) -> str:
    """How messages name a source: ``<stdin>`` or the path."""
    return "<stdin>" if source == STDIN else source


def check_sources(sources: Sequence[str]) -> None:
    """Refuse, before anything is written, files that cannot be read.

    Raises:
        InputError: A file does not exist, is a directory, or is not readable.
    """
    for source in sources:
        if source == STDIN:
            continue
        path = Path(source)
        if not path.exists():
            raise InputError(f"input file {source} does not exist", path=source)
        if path.is_dir():
            raise InputError(f"input {source} is a directory: give files (or - for stdin)")
        try:
            path.open("rb").close()
        except OSError as exc:
            raise InputError(f"input file {source} cannot be read: {exc.strerror}") from exc


def _unlocked_read(stream: BinaryIO) -> Callable[[int], bytes]:
    """A read of what the stream has, up to a size, that holds no lock of a buffered
    stream: the thread may be left blocked in it at exit, and the interpreter's shutdown
    must not wait for that lock (``sys.stdin.buffer``'s)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):  # e.g. BytesIO
        return getattr(stream, "read1", stream.read)
    return lambda size: os.read(fd, size)


def split_lines(data: bytes, first_number: int, source: str) -> tuple[LineChunk, int]:
    """The complete lines of ``data`` (every line must end with ``\\n``) and the number of
    lines they span; ``\\r\\n`` ends a line too, empty lines are counted but left out."""
    lines = data.split(b"\n")
    lines.pop()  # what follows the last newline: empty, as the caller cut there
    if b"\r" in data:
        lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    span = len(lines)
    numbers: Sequence[int] = range(first_number, first_number + span)
    if b"" in lines:
        kept = [(n, line) for n, line in zip(numbers, lines, strict=True) if line]
        numbers = [n for n, _ in kept]
        lines = [line for _, line in kept]
    return LineChunk(source, lines, numbers), span


class LineReader:
    """Reads sources in order on a daemon thread; `get` hands out their lines in chunks.

    The thread ends after the last source (or a read error) with an `EndOfInput`. A stopped
    consumer may simply leave: the thread is a daemon, blocked at most in one read.
    """

    def __init__(self, sources: Sequence[str], stdin: BinaryIO | None = None) -> None:
        self.sources = list(sources) or [STDIN]
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._queue: queue.Queue[LineChunk | EndOfInput] = queue.Queue(QUEUE_CHUNKS)
        self.partial = b""
        """An incomplete last line (no terminator yet) of the source being read."""
        self._thread = threading.Thread(target=self._run, name="stream-input", daemon=True)

    def start(self) -> LineReader:
        """Start reading."""
        self._thread.start()
        return self

    def get(self, timeout: float | None) -> LineChunk | EndOfInput | None:
        """The next chunk, `EndOfInput`, or ``None`` when nothing came within ``timeout``."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def _run(self) -> None:
        try:
            for source in self.sources:
                self._read(source)
        except OSError as exc:
            error = InputError(f"reading the input failed: {exc}")
            self._queue.put(EndOfInput(error))
            return
        self._queue.put(EndOfInput())

    def _read(self, source: str) -> None:
        label = source_label(source)
        if source == STDIN:
            self._pump(self._stdin, label)
            return
        with open(source, "rb", buffering=0) as handle:
            self._pump(handle, label)

    def _pump(self, stream: BinaryIO, label: str) -> None:
        read = _unlocked_read(stream)
        number = 1
        self.partial = b""
        while True:
            data = read(READ_SIZE)
            if not data:
                break
            data = self.partial + data
            cut = data.rfind(b"\n") + 1
            self.partial = data[cut:]
            if cut:
                chunk, span = split_lines(data[:cut], number, label)
                number += span
                if chunk.records:
                    self._queue.put(chunk)
        if self.partial:  # the last line of a source needs no terminator
            chunk, _ = split_lines(self.partial + b"\n", number, label)
            self.partial = b""
            if chunk.records:
                self._queue.put(chunk)
