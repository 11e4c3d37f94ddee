"""Rejected streamed records in the table's dead-letter area (as upsert writes its own).

A transaction's rejected records (writers built with ``dead_letter=True``) are written when
it commits, as one JSON-lines file ``_dead_letter/stream=<txn>/part-0.json`` with the
fields upsert's dead letters have: ``_raw`` (the record as given; invalid UTF-8 replaced),
``_reason`` and ``_source`` (``stream:<agent>:<where>``: where the client said the record
came from, e.g. ``app.log:17``, or its place in the transaction). The folder is never vacuumed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from versioned.layouts.base import layout_of
from versioned.schema import TableSpec
from versioned.storage.filesystem import FileIO
from versioned.streaming.encoding import RejectedRecord


def write_dead_letters(
    fileio: FileIO,
    spec: TableSpec,
    location: str,
    txn_id: int,
    agent: str | None,
    rejected: Sequence[tuple[str, RejectedRecord]],
) -> str | None:
    """Write ``rejected`` (where each came from, record) for transaction ``txn_id``;
    returns the file written (relative to the warehouse), or None when there is none."""
    if not rejected:
        return None
    folder = layout_of(spec.layout).dead_letter_dir(location)
    rel = f"{folder}/stream={txn_id}/part-0.json"
    lines = [
        json.dumps(
            {
                "_raw": record.record.decode("utf-8", errors="replace"),
                "_reason": record.reason,
                "_source": f"stream:{agent or ''}:{position}",
            },
            ensure_ascii=False,
        )
        for position, record in rejected
    ]
    fileio.write_bytes_atomic(rel, ("\n".join(lines) + "\n").encode())
    return rel
