"""Where a client's transaction stands (the streaming and mutation clients, as Hive's)."""

from __future__ import annotations

import enum


class TransactionState(enum.Enum):
    """Where a client's transaction stands."""

    INACTIVE = "inactive"
    OPEN = "open"
    COMMITTED = "committed"
    ABORTED = "aborted"
