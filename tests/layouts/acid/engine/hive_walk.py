"""Reading an acid table the way Hive's reader does, without Spark and without the catalog's
file list: walk the partition folders, choose directories with getAcidState over what is on
disk, read each bucket file with pyarrow and merge base/deltas minus delete events."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from versioned.layouts.acid.acid_state import acid_state
from versioned.layouts.acid.bucket_codec import decode_bucket_property
from versioned.layouts.acid.bucket_hash import bucket_ids
from versioned.layouts.acid.directories import (
    ACID_VERSION_MARKER,
    is_hidden,
    parse_bucket_file,
    parse_directory,
)
from versioned.layouts.acid.flush_length import last_flush_length
from versioned.layouts.acid.orc_files import read_bucket_file
from versioned.layouts.acid.orc_schema import DELETE, INSERT
from versioned.layouts.acid.snapshot_dirs import valid_write_id_list
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.schema import TableSpec
from versioned.storage.partition_paths import parse_partition_path


def partition_folders(table_dir: Path, spec: TableSpec) -> dict[Path, tuple[str | None, ...]]:
    """Every partition folder under the table (hidden folders skipped) with its values."""
    folders = [table_dir]
    for _ in spec.partition_by:
        folders = [
            child
            for folder in folders
            for child in sorted(folder.iterdir())
            if child.is_dir() and not is_hidden(child.name) and "=" in child.name
        ]
    rels = {f: f.relative_to(table_dir).as_posix() for f in folders}
    return {  # an unpartitioned table's folder is the table's own ("."): no values
        f: tuple(v for _, v in parse_partition_path("" if rel == "." else rel))
        for f, rel in rels.items()
    }


def walk_table(cat: Any, table: Any) -> list[dict[str, Any]]:
    """`walk` over a table's folder with the write ids of its latest snapshot, taking the
    ``_vT`` folders whose compactor committed (what Hive's ValidTxnList says)."""
    snapshot = table.snapshot()
    ids = valid_write_id_list(cat.engine_context.store.write_ids(table.name, snapshot.seq))
    table_dir = Path(
        cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
    )
    txns = {
        parsed.visibility_txn_id
        for folder in partition_folders(table_dir, table.spec)
        for child in folder.iterdir()
        if child.is_dir() and (parsed := parse_directory(child.name)) is not None
    }
    state = cat.engine_context.store.txn_snapshot()
    committed = frozenset(t for t in txns if t and state.is_valid(t))
    return walk(table_dir, table.spec, ids, committed)


def walk(
    table_dir: Path,
    spec: TableSpec,
    write_ids: ValidWriteIdList,
    committed_txns: frozenset[int] = frozenset(),
) -> list[dict[str, Any]]:
    """The live rows (table columns, partition values as strings) as Hive's reader finds them.

    ``committed_txns``: the committed transactions (Hive's ValidTxnList) among the ``_vT``
    suffixes; a compactor's output of any other transaction is ignored.

    A bucket file with a ``_flush_length`` side file is read up to its last recorded length,
    as Hive's reader does. Also checks what Hive's reader relies on: every directory has the
    ``_orc_acid_version`` marker holding ``2``, bucket file names agree with the bucket
    property of their rows, insert events carry the bucket Hive's hash gives their row, row
    ids restart at 0 per write id in each file, delete events have a null row and come
    sorted by ROW__ID.
    """
    rows: list[dict[str, Any]] = []
    data_columns = spec.data_columns
    for folder, values in partition_folders(table_dir, spec).items():
        dirs = [c for c in folder.iterdir() if c.is_dir() and parse_directory(c.name) is not None]
        state = acid_state([d.name for d in dirs], write_ids, committed_txns=committed_txns)
        chosen = {d.name for d in state.deltas} | ({state.base.name} if state.base else set())
        live: dict[tuple[int, int, int], dict[str, Any]] = {}
        deleted: set[tuple[int, int, int]] = set()
        for directory in sorted(dirs):
            assert (directory / ACID_VERSION_MARKER).read_bytes() == b"2", directory
            for file in sorted(directory.iterdir()):
                bucket = parse_bucket_file(file.name)
                if bucket is None:
                    continue
                side = file.with_name(f"{file.name}_flush_length")  # an open streaming file
                length = last_flush_length(side.read_bytes()) if side.exists() else None
                events = read_bucket_file(file.read_bytes(), data_columns, length=length).events
                _check_file(events, bucket.bucket_id, spec, directory.name)
                if directory.name not in chosen:
                    continue
                for event in events.to_pylist():
                    if not write_ids.is_valid(event["currentTransaction"]):
                        continue
                    key = (event["originalTransaction"], event["bucket"], event["rowId"])
                    if event["operation"] == DELETE:
                        deleted.add(key)
                    else:
                        live[key] = event["row"]
        for key, row in live.items():
            if key not in deleted:
                rows.append({**row, **dict(zip(spec.partition_by, values, strict=True))})
    return rows


def _check_file(events: pa.Table, bucket_id: int, spec: TableSpec, directory: str) -> None:
    props = {decode_bucket_property(p).bucket_id for p in events.column("bucket").to_pylist()}
    assert props <= {bucket_id}, (directory, bucket_id, props)
    ops = set(events.column("operation").to_pylist())
    if directory.startswith("delete_delta_"):
        assert ops <= {DELETE} and events.column("row").null_count == events.num_rows
        keys = list(
            zip(
                *(events.column(c).to_pylist() for c in ("originalTransaction", "bucket", "rowId")),
                strict=True,
            )
        )
        assert keys == sorted(keys)
        return
    assert ops <= {INSERT}
    row_ids: dict[int, list[int]] = defaultdict(list)
    for w, r in zip(
        events.column("originalTransaction").to_pylist(),
        events.column("rowId").to_pylist(),
        strict=True,
    ):
        row_ids[w].append(r)
    assert all(ids == list(range(len(ids))) for ids in row_ids.values()), row_ids
    if spec.bucket_by and spec.buckets:
        flat = events.column("row").flatten()
        names = [f.name for f in events.schema.field("row").type]
        table = pa.table(dict(zip(names, flat, strict=True)))
        types = [spec.column(c).type for c in spec.bucket_by]
        expected = bucket_ids(table, spec.bucket_by, types, spec.buckets)
        assert set(expected.tolist()) <= {bucket_id}, (directory, bucket_id, expected)
