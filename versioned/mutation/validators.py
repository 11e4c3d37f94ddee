"""The order checks of a coordinator (Hive's ``SequenceValidator`` and ``GroupingValidator``).

The API does not sort or group: the caller does (Spark, a sorted file, ...). These fail fast
when records arrive out of order, before a file with unordered events is written.
"""

from __future__ import annotations

from collections.abc import Hashable

from versioned.record_ids import RecordIdentifier


class SequenceValidator:
    """ROW__IDs of one group must increase: ``(writeId, rowId)`` lexicographically.

    The first record after `reset` is always accepted (also negative ids).
    """

    def __init__(self) -> None:
        self._last: tuple[int, int] | None = None

    def is_in_sequence(self, row_id: RecordIdentifier) -> bool:
        """Whether ``row_id`` comes after the last accepted one; if so it becomes the last."""
        if row_id is None:
            raise TypeError("a ROW__ID is needed, got None")
        key = (row_id.write_id, row_id.row_id)
        if self._last is not None and key <= self._last:
            return False
        self._last = key
        return True

    def reset(self) -> None:
        """Start a new group."""
        self._last = None

    def __repr__(self) -> str:
        return f"SequenceValidator(last={self._last})"


class GroupingValidator:
    """Each (partition, bucket) group must come in one run: once left, never revisited."""

    def __init__(self) -> None:
        self._seen: set[Hashable] = set()
        self._current: Hashable | None = None

    def is_in_sequence(self, partition: tuple[str | None, ...], bucket: int) -> bool:
        """Whether the group may come now (the current one, or one never seen)."""
        group = (tuple(partition), bucket)
        if group == self._current:
            return True
        if group in self._seen:
            return False
        self._seen.add(group)
        self._current = group
        return True
