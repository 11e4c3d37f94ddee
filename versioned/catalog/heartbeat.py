"""Keeping open transactions alive from a background thread while long work runs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import TracebackType

from versioned.catalog.store import MetaStore
from versioned.errors import VersionedError

log = logging.getLogger(__name__)


class TransactionKeeper:
    """Heartbeats open transactions from a background thread.

    A heartbeat that fails for good (the transaction expired, or was ended elsewhere) is
    remembered and re-raised by `check`, so the writer stops before committing. Ending the
    transactions is the caller's business (`versioned.catalog.write_transaction` aborts them
    and removes their files).
    """

    def __init__(
        self,
        store: MetaStore,
        *txn_ids: int,
        interval_s: float,
        on_failure: Callable[[VersionedError], None] | None = None,
    ) -> None:
        """Heartbeat ``txn_ids`` every ``interval_s`` seconds through ``store``.

        Args:
            on_failure: Called (from the heartbeat thread) with the failure when a heartbeat
                fails for good, e.g. to tell a client that its transaction is lost.
        """
        self.store = store
        self.on_failure = on_failure
        self.txn_ids = list(txn_ids)
        self.interval_s = max(0.05, interval_s)
        self.failure: VersionedError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="versioned-heartbeat", daemon=True)
        self._done: set[int] = set()

    def start(self) -> None:
        """Start heartbeating."""
        self._thread.start()

    def stop(self) -> None:
        """Stop heartbeating (waits for a heartbeat under way)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def __enter__(self) -> TransactionKeeper:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

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
                if self.on_failure is not None:
                    try:
                        self.on_failure(err)
                    except Exception:  # the listener's own bug must not hide the failure
                        log.exception("the heartbeat failure listener raised")
                return
            except Exception as err:  # catalog unreachable for a moment: try again next beat
                log.warning("heartbeat of transactions %s failed: %s", live, err)
