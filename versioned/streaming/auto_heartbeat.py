"""Heartbeats of a transaction batch from a thread of its own (``auto_heartbeat=True``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from versioned.catalog.store import MetaStore
from versioned.errors import TransactionExpiredError, TransactionStateError


class AutoHeartbeat:
    """Heartbeats the transactions ``alive()`` names every ``interval_s`` seconds, over a
    catalog connection of its own (the batch's may be busy committing)."""

    def __init__(
        self,
        store: MetaStore,
        interval_s: float,
        alive: Callable[[], list[int]],
        name: int,
    ) -> None:
        self._alive = alive
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._store = MetaStore.connect(store.url, store.user, create=False)
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            ids = self._alive()
            if not ids:
                return
            try:
                self._store.heartbeat(*ids)
            except (TransactionExpiredError, TransactionStateError):
                continue  # finished ones drop out of alive(); the batch reports an expiry

    def stop(self) -> None:
        """Stop heartbeating and close the connection."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._store.close()
