"""The commit of a write whose every row was rejected: a record of the rejection, no files.

The dead letters of a write are found through the commit that names them (the
``dead_letters`` metadata table reads the files a commit's ``dead_letter`` metric names;
the history's ``rejected`` column and the page's "dead letters rising" mark count them per
commit). A write with rows to apply records its rejected rows in its own commit; a write
whose every row was rejected commits this record instead, so that its dead letters are
found and counted like any other. Every layout shares it: it writes and retires no file.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from versioned.catalog.write_transaction import retry_on_conflict, write_transaction
from versioned.results import CommitResult

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext
    from versioned.layouts.table_request import WriteRequest


def commit_rejected_batch(
    ctx: EngineContext,
    request: WriteRequest,
    rejected: tuple[int, str | None],
    *,
    started: float,
) -> CommitResult:
    """The result of a write that has no row to apply: with rejected rows, a commit that
    records them (and the request's stream mark); without, nothing committed.

    Args:
        rejected: How many rows were rejected, and the dead-letter folder they went to
            (relative to the warehouse).
        started: When the write began (`time.monotonic`).
    """
    count, where = rejected
    if not count:
        seconds = round(time.monotonic() - started, 3)
        return CommitResult(None, 0, 0, 0, 0, 0, seconds=seconds)
    request.say(f"every row was rejected: committing the record of the {count} dead letters")
    metrics = {
        **dict.fromkeys(("inserted", "updated", "deleted", "ignored_deletes", "stale"), 0),
        **dict.fromkeys(("superseded", "coerced", "partitions", "files_written"), 0),
        "rejected": count,
        "dead_letter": where,
        "bytes_written": 0,
    }

    def attempt(_number: int) -> int:
        with write_transaction(
            ctx.store, request.table.spec.name, timeout_s=request.options.txn_timeout_s
        ) as tx:
            tx.commit(
                operation=request.operation,
                partitions=(),
                metrics=metrics,
                stream_mark=request.options.stream_mark,
            )
            return tx.id

    version = retry_on_conflict(request.options.max_attempts, attempt)
    request.say(f"committed version {version} (no rows, {count} rejected)")
    seconds = round(time.monotonic() - started, 3)
    return CommitResult(version, 0, 0, 0, 0, count, seconds=seconds, dead_letter=where)
