"""What Hive's ``hive.acid.*`` ORC metadata costs on Spark-written bucket files (issue 28 item 2).

Spark's ORC writer cannot set user metadata, so after Spark writes a batch's or a compaction's
bucket files the driver reads each file, reads its ACID fields stripe by stripe, appends the
metadata to the footer (`versioned.layouts.acid.orc_footer.with_acid_metadata`) and writes the
file to its ACID name (`FileIO.read_bytes` / `write_bytes_atomic`); without the metadata the
file was moved there. `footer_cost` times those three calls while a block runs (wrappers
around the real functions: the work done is the engine's own).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks.internals import FileIO
from benchmarks.internals import acid_event_writer as event_writer


@contextmanager
def footer_cost() -> Iterator[dict[str, float]]:
    """Yield a dict that ends up holding ``seconds`` (reading, adding the metadata, writing)
    and ``metadata_s`` (adding the metadata alone), ``files`` and ``mb`` of the files."""
    cost = {"seconds": 0.0, "metadata_s": 0.0, "files": 0.0, "mb": 0.0}

    def timed(fn: Callable[..., Any], *keys: str) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                for key in keys:
                    cost[key] += time.perf_counter() - start

        return wrapper

    original = event_writer.with_acid_metadata
    read, write = FileIO.read_bytes, FileIO.write_bytes_atomic
    pending: list[bool] = []  # a file read for the metadata step, not yet written

    def metadata(data: bytes) -> bytes:
        cost["files"] += 1
        cost["mb"] += len(data) / 1e6
        pending.append(True)
        return timed(original, "seconds", "metadata_s")(data)

    def read_spark_file(self: FileIO, rel: str) -> bytes:
        if "/part-" not in rel:  # not a file Spark wrote (the driver reads others too)
            return read(self, rel)
        return timed(read, "seconds")(self, rel)

    def write_placed(self: FileIO, rel: str, data: bytes) -> None:
        if not pending:  # a file the driver wrote itself
            return write(self, rel, data)
        pending.pop()
        return timed(write, "seconds")(self, rel, data)

    event_writer.with_acid_metadata = metadata
    FileIO.read_bytes = read_spark_file  # type: ignore[method-assign]
    FileIO.write_bytes_atomic = write_placed  # type: ignore[method-assign]
    try:
        yield cost
    finally:
        event_writer.with_acid_metadata = original
        FileIO.read_bytes = read  # type: ignore[method-assign]
        FileIO.write_bytes_atomic = write  # type: ignore[method-assign]
