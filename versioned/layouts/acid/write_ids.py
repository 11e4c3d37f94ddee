"""A reader's snapshot of one table's write ids: Hive's ``ValidReaderWriteIdList``.

A write id is valid if it is at most the high-water mark and neither open nor aborted. A base
is usable only if its write id is below the lowest open write id (and at most the high-water
mark). The string form is Hive's ``writeToString``::

    <db.table>:<highWatermark>:<minOpenWriteId>:<open,ids>:<aborted,ids>

with ``minOpenWriteId`` = ``Long.MAX_VALUE`` (9223372036854775807) when nothing is open.
`ValidWriteIdList.for_compactor` gives the compactor's view (``ValidCompactorWriteIdList``).
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from versioned.layouts.acid.errors import WriteIdListError

LONG_MAX = (1 << 63) - 1


class RangeResponse(enum.Enum):
    """How many write ids of a range a snapshot sees as valid (or aborted)."""

    NONE = "NONE"
    SOME = "SOME"
    ALL = "ALL"


def _ids(values: Iterable[int], what: str) -> tuple[int, ...]:
    out = set()
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise WriteIdListError(f"{what} must be positive ints, got {value!r}", value=value)
        out.add(value)
    return tuple(sorted(out))


@dataclass(frozen=True)
class ValidWriteIdList:
    """The write ids of one table a reader may see.

    Attributes:
        table: ``db.table``.
        high_water_mark: The highest write id allocated when the snapshot was taken.
        open_ids: Write ids at or below the high-water mark still open (sorted).
        aborted_ids: Aborted write ids at or below the high-water mark (sorted).
        min_open: The lowest open write id, ``None`` if none is open. Defaults to the
            lowest of ``open_ids``.
    """

    table: str
    high_water_mark: int
    open_ids: tuple[int, ...] = ()
    aborted_ids: tuple[int, ...] = ()
    min_open: int | None = None
    _exceptions: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.table or ":" in self.table:
            raise WriteIdListError(f"table name {self.table!r} must be db.table without ':'")
        hwm = self.high_water_mark
        if isinstance(hwm, bool) or not isinstance(hwm, int) or hwm < 0:
            raise WriteIdListError(f"high-water mark must be an int >= 0, got {hwm!r}")
        open_ids = _ids(self.open_ids, "open write ids")
        aborted = _ids(self.aborted_ids, "aborted write ids")
        both = set(open_ids) & set(aborted)
        if both:
            raise WriteIdListError(f"write ids {sorted(both)} are both open and aborted")
        above = [w for w in (*open_ids, *aborted) if w > hwm]
        if above:
            raise WriteIdListError(
                f"write ids {above} are above the high-water mark {hwm}; a snapshot lists "
                "only ids at or below it"
            )
        min_open = self.min_open
        if min_open == LONG_MAX:
            min_open = None
        if min_open is None and open_ids:
            min_open = open_ids[0]
        if min_open is not None and (
            isinstance(min_open, bool) or not isinstance(min_open, int) or min_open < 1
        ):
            raise WriteIdListError(f"lowest open write id must be a positive int: {min_open!r}")
        if open_ids and min_open is not None and min_open > open_ids[0]:
            raise WriteIdListError(
                f"lowest open write id {min_open} is above the open write id {open_ids[0]}"
            )
        object.__setattr__(self, "open_ids", open_ids)
        object.__setattr__(self, "aborted_ids", aborted)
        object.__setattr__(self, "min_open", min_open)
        object.__setattr__(self, "_exceptions", tuple(sorted(open_ids + aborted)))

    # --- single write ids --------------------------------------------------------------------

    def is_valid(self, write_id: int) -> bool:
        """Whether rows of ``write_id`` are visible: committed at snapshot time."""
        return write_id <= self.high_water_mark and not self._is_exception(write_id)

    def is_open(self, write_id: int) -> bool:
        """Whether ``write_id`` was open at snapshot time (ids above the mark are not listed)."""
        return _contains(self.open_ids, write_id)

    def is_aborted(self, write_id: int) -> bool:
        """Whether ``write_id`` is known to be aborted."""
        return _contains(self.aborted_ids, write_id)

    def is_valid_base(self, write_id: int) -> bool:
        """Whether a compacted ``base_<write_id>`` can serve this snapshot: every id it holds
        is resolved (below the lowest open id) and known (at most the high-water mark)."""
        below_open = self.min_open is None or write_id < self.min_open
        return below_open and write_id <= self.high_water_mark

    @property
    def invalid_ids(self) -> tuple[int, ...]:
        """The open and aborted write ids (all at or below the high-water mark), sorted:
        with the ids above the mark, those a reader must not see."""
        return self._exceptions

    def _is_exception(self, write_id: int) -> bool:
        return _contains(self._exceptions, write_id)

    # --- ranges ---------------------------------------------------------------------------

    def is_range_valid(self, min_write_id: int, max_write_id: int) -> RangeResponse:
        """``isWriteIdRangeValid``: are ALL, SOME or NONE of ``min..max`` valid?"""
        if min_write_id > self.high_water_mark:
            return RangeResponse.NONE
        if self._exceptions and self._exceptions[0] > max_write_id:
            return RangeResponse.ALL
        count = max(0, max_write_id - self.high_water_mark) + _count_in(
            self._exceptions, min_write_id, max_write_id
        )
        return _response(count, max_write_id - min_write_id + 1, invalid=True)

    def is_range_aborted(self, min_write_id: int, max_write_id: int) -> RangeResponse:
        """``isWriteIdRangeAborted``: are ALL, SOME or NONE of ``min..max`` aborted?"""
        if self.high_water_mark < min_write_id:
            return RangeResponse.NONE
        count = _count_in(self.aborted_ids, min_write_id, max_write_id)
        return _response(count, max_write_id - min_write_id + 1, invalid=False)

    # --- forms ----------------------------------------------------------------------------

    def to_string(self) -> str:
        """Hive's ``writeToString`` form."""
        min_open = LONG_MAX if self.min_open is None else self.min_open
        open_ids = ",".join(map(str, self.open_ids))
        aborted = ",".join(map(str, self.aborted_ids))
        return f"{self.table}:{self.high_water_mark}:{min_open}:{open_ids}:{aborted}"

    @classmethod
    def from_string(cls, text: str) -> ValidWriteIdList:
        """Parse Hive's form (``readFromString``; trailing empty fields may be missing).

        Raises:
            WriteIdListError: The text is not a write id list.
        """
        parts = text.strip().split(":")
        if len(parts) < 3 or len(parts) > 5:
            raise WriteIdListError(
                f"{text!r} is not a ValidWriteIdList (db.table:hwm:minOpen:open:aborted)"
            )
        parts += [""] * (5 - len(parts))
        try:
            hwm, min_open = int(parts[1]), int(parts[2])
            open_ids = [int(p) for p in parts[3].split(",") if p]
            aborted = [int(p) for p in parts[4].split(",") if p]
        except ValueError as exc:
            raise WriteIdListError(f"{text!r} is not a ValidWriteIdList: {exc}") from exc
        return cls(parts[0], hwm, tuple(open_ids), tuple(aborted), min_open)

    def for_compactor(self) -> CompactorWriteIdList:
        """The compactor's view (``ValidCompactorWriteIdList``): the high-water mark drops
        below the lowest open id, only aborted ids at or below it remain, and a range is
        valid only if entirely at or below it (ALL) or not at all (NONE)."""
        hwm = self.high_water_mark if self.min_open is None else self.min_open - 1
        aborted = tuple(w for w in self.aborted_ids if w <= hwm)
        return CompactorWriteIdList(self.table, hwm, (), aborted, None)


@dataclass(frozen=True)
class CompactorWriteIdList(ValidWriteIdList):
    """The compactor's snapshot; see `ValidWriteIdList.for_compactor`."""

    def is_range_valid(self, min_write_id: int, max_write_id: int) -> RangeResponse:
        """ALL iff the whole range is at or below the high-water mark, else NONE, so a
        delta holding any write id that is still open is never compacted."""
        return RangeResponse.ALL if self.high_water_mark >= max_write_id else RangeResponse.NONE


def _contains(ids: tuple[int, ...], write_id: int) -> bool:
    i = bisect.bisect_left(ids, write_id)
    return i < len(ids) and ids[i] == write_id


def _count_in(ids: tuple[int, ...], low: int, high: int) -> int:
    return bisect.bisect_right(ids, high) - bisect.bisect_left(ids, low)


def _response(count: int, size: int, *, invalid: bool) -> RangeResponse:
    """ALL/SOME/NONE from a count of ids in a range (invalid ones, or aborted ones)."""
    if count == 0:
        return RangeResponse.ALL if invalid else RangeResponse.NONE
    if count == size:
        return RangeResponse.NONE if invalid else RangeResponse.ALL
    return RangeResponse.SOME
