"""The keys of the data files Spark staged for a version, summarised by the executors.

One Spark job of a task per core: each task opens its share of the staged files through the
table's file system (pyarrow, as the driver reads Bloom and index files; the executors need
the same access to the warehouse), reads their key columns, and builds its pieces of every
partition's Bloom filter and key bounds and the hashes of its record keys
(`layouts.version_partition.key_pieces`). The driver merges the pieces (an OR of bit arrays)
and checks the hashes for a repeated record key. It hashes no key, and no row passes through
Spark's row-to-Arrow conversion.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

from versioned.engine.spark.python_workers import python_worker_job
from versioned.keys.columns import (
    index_key_columns,
)
from versioned.layouts.version_partition.compacted_bloom import key_chunks
from versioned.layouts.version_partition.key_pieces import (
    FLUSH_KEYS,
    KeyPiece,
    KeyPieceBuilder,
    PartitionKeys,
    PartitionValues,
    merge_pieces,
    repeats,
)
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext

_HASHES_PER_ROW = 1 << 24
_PIECE, _HASHES = 0, 1
_ARROW_OUT = pa.schema(
    [
        ("kind", pa.int8()),
        ("values", pa.string()),  # the piece's partition values, as JSON
        ("count", pa.int64()),
        ("bits", pa.binary()),
        ("bounds", pa.string()),
        ("hashes", pa.binary()),
    ]
)
_OUT = from_arrow_schema(_ARROW_OUT)  # what the tasks return, in Spark's types
TaskFiles = list[tuple[str, PartitionValues]]
"""The files one task reads (relative to the file system's root) and their partitions."""


@dataclass(frozen=True)
class StagedKeys:
    """The key facts of each partition of a staged version, and whether its keys are unique."""

    partitions: dict[PartitionValues, PartitionKeys]
    unique: bool


def staged_keys(
    ctx: EngineContext,
    spec: TableSpec,
    files: Sequence[tuple[str, PartitionValues, int]],
    capacities: Mapping[PartitionValues, int],
    error_rate: float,
) -> StagedKeys:
    """Summarise the keys of the staged data files ``files``.

    Args:
        files: ``(path, partition values, rows)`` of each file; paths relative to the root
            of ``ctx.fileio``.
        capacities: The Bloom filter capacity of each partition.
        error_rate: The filters' false-positive rate.
    """
    if not files:
        return StagedKeys({}, unique=True)
    spark, fileio = ctx.spark, ctx.fileio  # the file system travels to the executors
    tasks = _assign(files, max(1, int(spark.sparkContext.defaultParallelism)))
    record_partitions = [i for i, p in enumerate(spec.partition_by) if p in spec.record_key]
    task = _task(
        fileio,
        tasks,
        dict(capacities),
        error_rate,
        list(index_key_columns(spec)),
        record_partitions,
        spec.file_format,
    )
    with python_worker_job(spark):  # its tasks import versioned: no check job before it
        found = spark.range(0, len(tasks), 1, len(tasks)).mapInArrow(task, _OUT).toArrow()
    return _merged(found, capacities, error_rate)


def _assign(files: Sequence[tuple[str, PartitionValues, int]], slots: int) -> list[TaskFiles]:
    """The files split into at most ``slots`` tasks of similar row counts.

    A task builds one filter piece per partition it reads, and every piece is as large as
    its partition's whole filter: so the files of a partition stay together, unless the
    partition holds more than a task's share of the rows (then it is cut into shares).
    """
    share = max(1, -(-sum(f[2] for f in files) // slots))
    by_partition: dict[PartitionValues, list[tuple[str, int]]] = {}
    for path, values, count in files:
        by_partition.setdefault(values, []).append((path, count))
    units: list[tuple[int, TaskFiles]] = []
    for values, found in by_partition.items():
        unit: TaskFiles = []
        rows = 0
        for path, count in sorted(found, key=lambda f: -f[1]):
            unit.append((path, values))
            rows += count
            if rows >= share:
                units.append((rows, unit))
                unit, rows = [], 0
        if unit:
            units.append((rows, unit))
    tasks: list[TaskFiles] = [[] for _ in range(min(slots, len(units)))]
    loads = [0] * len(tasks)
    for rows, unit in sorted(units, key=lambda u: -u[0]):  # largest first, to the lightest
        lightest = loads.index(min(loads))
        tasks[lightest].extend(unit)
        loads[lightest] += rows
    return tasks


def _task(
    fileio: FileIO,
    tasks: list[TaskFiles],
    capacities: dict[PartitionValues, int],
    error_rate: float,
    key_columns: list[str],
    record_partitions: list[int],
    file_format: str,
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The function each task runs: its input is its task number."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        builder = KeyPieceBuilder(capacities, error_rate, key_columns, record_partitions)
        for batch in batches:
            for number in batch.column(0).to_pylist():
                for path, values in tasks[number]:
                    for keys in key_chunks(fileio, path, file_format, key_columns, FLUSH_KEYS):
                        builder.add(values, keys)
        for piece in builder.pieces():
            yield _row(
                kind=_PIECE,
                values=json.dumps(list(piece.values)),
                count=piece.count,
                bits=piece.bits,
                bounds=piece.bounds,
            )
        hashes = builder.record_hashes()
        for start in range(0, len(hashes), _HASHES_PER_ROW):
            yield _row(kind=_HASHES, hashes=hashes[start : start + _HASHES_PER_ROW].tobytes())

    return run


def _row(**values: object) -> pa.RecordBatch:
    """One output row of a task (columns not given are null)."""
    return pa.RecordBatch.from_pylist([values], schema=_ARROW_OUT)


def _merged(
    found: pa.Table, capacities: Mapping[PartitionValues, int], error_rate: float
) -> StagedKeys:
    kinds = found.column("kind").to_numpy(zero_copy_only=False)
    rows = found.filter(pa.array(kinds == _PIECE))
    pieces = [
        KeyPiece(tuple(json.loads(values)), count, bits, bounds)
        for values, count, bits, bounds in zip(
            rows.column("values").to_pylist(),
            rows.column("count").to_pylist(),
            rows.column("bits").to_pylist(),
            rows.column("bounds").to_pylist(),
            strict=True,
        )
    ]
    blobs = found.filter(pa.array(kinds == _HASHES)).column("hashes").to_pylist()
    hashes = [np.frombuffer(blob, np.uint64) for blob in blobs]
    return StagedKeys(merge_pieces(pieces, capacities, error_rate), unique=not repeats(hashes))
