"""How coordinators report the files they wrote: one manifest per closed coordinator.

A coordinator that wrote something writes ``<staging>/manifests/<uuid>.json`` (atomically)
when it closes: the files (with their partition values, catalog kind, size, rows and stats)
and its counts. ``Transaction.commit`` reads every manifest of the table's staging folder
(the transaction's private folder) and commits exactly those files. A worker that dies
before closing leaves no manifest: its files are listed nowhere, so no reader sees them, and
vacuum removes them after its grace period.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from versioned.catalog.records import FileAdd
from versioned.storage.filesystem import FileIO

MANIFEST_DIR = "manifests"
_FORMAT = 1


@dataclass(frozen=True)
class WrittenFile:
    """A file a coordinator wrote (not committed; ``add.partition_id`` is None)."""

    values: tuple[str | None, ...]
    add: FileAdd


@dataclass(frozen=True)
class Manifest:
    """What one coordinator wrote."""

    path: str
    files: tuple[WrittenFile, ...]
    counts: Mapping[str, int] = field(default_factory=dict)


def write_manifest(
    fileio: FileIO,
    staging_dir: str,
    files: Sequence[WrittenFile],
    counts: Mapping[str, int],
) -> str:
    """Write a manifest of ``files`` into ``staging_dir``; returns its path."""
    path = f"{staging_dir}/{MANIFEST_DIR}/{uuid.uuid4().hex}.json"
    body = {
        "format": _FORMAT,
        "counts": dict(counts),
        "files": [_file_json(f) for f in files],
    }
    fileio.write_bytes_atomic(path, json.dumps(body, sort_keys=True).encode())
    return path


def read_manifests(fileio: FileIO, staging_dir: str) -> list[Manifest]:
    """Every manifest in ``staging_dir``, by path (``[]`` when there is none)."""
    found = []
    for stat in fileio.list_files(f"{staging_dir}/{MANIFEST_DIR}", recursive=False):
        if not stat.path.endswith(".json"):
            continue  # a manifest being written (its temporary file)
        body = json.loads(fileio.read_bytes(stat.path))
        files = tuple(_file_of(f) for f in body["files"])
        found.append(Manifest(stat.path, files, body.get("counts", {})))
    return found


def _file_json(file: WrittenFile) -> dict[str, Any]:
    add = file.add
    return {
        "values": list(file.values),
        "path": add.path,
        "kind": add.kind,
        "version": add.version,
        "size": add.size_bytes,
        "rows": add.row_count,
        "stats": dict(add.stats),
    }


def _file_of(data: Mapping[str, Any]) -> WrittenFile:
    add = FileAdd(
        None,
        str(data["path"]),
        str(data["kind"]),
        int(data["version"]),
        int(data["size"]),
        int(data["rows"]),
        dict(data["stats"]),
    )
    return WrittenFile(tuple(data["values"]), add)
