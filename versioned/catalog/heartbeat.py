"""Keeping a transaction alive while long work runs, and aborting it when the work fails."""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from versioned.catalog.store import MetaStore
from versioned.errors import VersionedError

log = logging.getLogger(__name__)


class TransactionKeeper:
    """Heartbeats open transactions from a background thread.

    Used as a context manager around the work of a transaction: on an exception the
    transactions that were not committed are aborted (their staged files stay as orphans
    for vacuum); a heartbeat that fails (the transaction expired) is remembered and re-raised
    by `check`, so the writer stops before committing.
    """

    def __init__(self, store: MetaStore, *txn_ids: int, interval_s: float) -> None:
        self.store = store
        self.txn_ids = list(txn_ids)
        self.interval_s = max(0.05, interval_s)
        self.failure: VersionedError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="versioned-heartbeat", daemon=True)
        self._done: set[int] = set()

    def __enter__(self) -> TransactionKeeper:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        if exc_type is not None:
            reason = f"aborted by client: {exc_type.__name__}: {exc}"[:500]
            for txn in self.txn_ids:
                if txn in self._done:
                    continue
                try:
                    self.store.abort(txn, reason)
                except VersionedError as err:  # already expired or aborted: nothing to undo
                    log.debug("abort of transaction %s failed: %s", txn, err)

    def finished(self, txn_id: int) -> None:
        """Mark a transaction committed (or aborted) so it is no longer heartbeated."""
        self._done.add(txn_id)

    def check(self) -> None:
        """Raise the heartbeat's failure, if any (call before committing)."""
        if self.failure is not None:
            raise self.failure

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            live = [t for t in self.txn_ids if t not in self._done]
            if not live:
                return
            try:
                self.store.heartbeat(*live)
            except VersionedError as err:
                self.failure = err
                return
            except Exception as err:  # catalog unreachable for a moment: try again next beat
                log.warning("heartbeat of transactions %s failed: %s", live, err)
