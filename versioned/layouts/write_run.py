"""A write's skeleton, shared by the layouts (as `versioned.layouts.compaction_run` is
compaction's and `versioned.layouts.vacuum` vacuum's).

What every layout's upsert or delete does alike is here: the feed's rejected rows go to the
table's dead-letter area once (``_dead_letter/``, JSON lines with their reason), a batch
without a row to apply commits only the record of its dead letters (`rejected_batch`), and
the write commits in attempts: one that loses its race (`CommitConflictError`) is planned
and written again as a new transaction, up to ``options.max_attempts``. The batch the layout
prepared is released at the end, whatever happened.

What differs is the layout's (`LayoutWrite`): preparing the batch (deduplicating it, and
anything it keeps for every attempt), and one attempt (plan on a snapshot, write, commit).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol, TypeVar

from versioned.catalog.write_transaction import retry_on_conflict
from versioned.layouts.layout import DEAD_LETTER_DIR
from versioned.layouts.rejected_batch import commit_rejected_batch
from versioned.results import CommitResult

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import EngineContext
    from versioned.layouts.table_request import WriteRequest

Rejected = tuple[int, "str | None"]
"""Rows rejected to the dead-letter area, and the file they went to."""


class PreparedBatch(Protocol):
    """A batch as a layout prepared it for its attempts."""

    @property
    def empty(self) -> bool:
        """No row to apply (every row rejected, or none given)."""
        ...

    @property
    def rejected(self) -> Rejected | None:
        """The dead letters the layout wrote already (None: the skeleton writes them)."""
        ...

    def release(self) -> None:
        """Free what the batch holds (a persisted DataFrame)."""
        ...


B = TypeVar("B", bound=PreparedBatch)


class LayoutWrite(Protocol[B]):
    """What a layout gives `run_write` for one write request."""

    @property
    def retry_message(self) -> str:
        """Said after a lost race, after ``commit conflict (...);``."""
        ...

    def prepare(self, started: float) -> B | CommitResult:
        """The batch for the attempts, or the write's result when it committed already
        (the version layout's first load in bulk)."""
        ...

    def attempt(self, batch: B, rejected: Rejected, n: int) -> CommitResult:
        """Attempt ``n`` (from 1): plan, write and commit in a new transaction.

        Raises:
            CommitConflictError: The commit lost its race (the skeleton tries again).
        """
        ...


def run_write(ctx: EngineContext, request: WriteRequest, write: LayoutWrite[B]) -> CommitResult:
    """Apply the request's feed to its table as one commit (see the module) and return
    what was committed: ``version=None`` for an empty feed; only the record of its dead
    letters when every row was rejected."""
    started = time.monotonic()
    say = request.say
    prepared = write.prepare(started)
    if isinstance(prepared, CommitResult):
        return prepared
    try:
        rejected = prepared.rejected
        if rejected is None:
            rejected = write_rejected_rows(ctx, request)
        if prepared.empty:
            say("nothing to apply")
            return commit_rejected_batch(ctx, request, rejected, started=started)
        batch = prepared
        return retry_on_conflict(
            request.options.max_attempts,
            lambda n: write.attempt(batch, rejected, n),
            on_retry=lambda _n, err: say(f"commit conflict ({err}); {write.retry_message}"),
        )
    finally:
        prepared.release()


def write_rejected_rows(ctx: EngineContext, request: WriteRequest) -> Rejected:
    """Count the feed's rejected rows and, if any, write them to the table's dead-letter
    area (JSON lines with ``_reason``)."""
    from versioned.engine.feeds.dead_letters import write_dead_letters

    where = f"{request.table.location}/{DEAD_LETTER_DIR}"
    count, rel = write_dead_letters(request.feed, ctx.fileio, where)
    if rel is not None:
        request.say(f"{count} rejected rows written to {ctx.fileio.full_path(rel)}")
    return count, rel
