"""Which directories of a partition a snapshot reads: Hive's ``AcidUtils.getAcidState``.

The caller passes the directories of the partition's committed manifest (the catalog decides
what exists; nothing here lists storage), the reader's `ValidWriteIdList`, and the set of
committed (and aborted) compactor transactions for ``_vT`` suffixes. The answer:

* the highest usable base (a compacted ``base_W``: W below the lowest open write id and at
  most the high-water mark; an INSERT OVERWRITE base: W valid),
* the deltas that cover the rest, chosen as ``findBestWorkingDeltas`` does: sorted, each kept
  if it reaches beyond what is covered so far and has a valid write id there, plus the other
  statements of the same write id and the ``delete_delta`` twin of a kept ``delta``,
* obsolete directories (covered by the base or by a wider delta), which a cleaner may remove
  once no reader needs them,
* aborted directories (every write id aborted, an aborted INSERT OVERWRITE base, or an
  aborted compactor's ``_vT`` output).

Compaction names its output without a suffix (``base_W``, ``delta_MIN_MAX``: Hive 3's names,
which Hive 2.3 reads too); such a directory counts as soon as it is passed in, which for our
readers means once the catalog lists it. A ``_vT`` directory (Hive 4's naming, which versioned
wrote before issue 28) whose transaction T is neither committed nor aborted is ignored
(`AcidState.pending`). Every base is a compacted one unless built with
``BaseDir(insert_overwrite=True)``: versioned writes bases only by compaction (each with
Hive 3's ``_metadata_acid`` marker, `compacted_dirs`), so a parsed name is one. One
deliberate difference from Hive's source: Hive also accepts any base whose write id *equals*
the lowest open write id; here a compacted base is usable only strictly below it
(hive-bucketing.md), so a reader never sees rows of a write id its snapshot has open.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from versioned.layouts.acid.directories import AcidDir, BaseDir, DeltaDir, parse_directory
from versioned.layouts.acid.errors import AcidNameError, NotEnoughHistoryError
from versioned.layouts.acid.write_ids import RangeResponse, ValidWriteIdList


@dataclass(frozen=True)
class AcidState:
    """The directories one snapshot reads, and those it makes obsolete or finds aborted.

    Attributes:
        base: The base to read, or ``None``.
        deltas: The deltas and delete deltas to read, in Hive's order.
        obsolete: Directories covered by ``base`` or by a chosen delta.
        aborted: Directories holding only aborted writes (or an aborted compactor's output).
        pending: ``_vT`` directories whose compactor transaction has not committed (suffix-less
            names are never pending: the catalog lists only committed ones).
        has_uncompacted_aborts: Some chosen-or-current delta holds aborted write ids among
            valid ones (the cleaner must keep their metadata).
    """

    base: BaseDir | None
    deltas: tuple[DeltaDir, ...]
    obsolete: tuple[AcidDir, ...]
    aborted: tuple[AcidDir, ...]
    pending: tuple[AcidDir, ...]
    has_uncompacted_aborts: bool

    @property
    def insert_deltas(self) -> tuple[DeltaDir, ...]:
        """The chosen ``delta_*`` directories."""
        return tuple(d for d in self.deltas if not d.delete)

    @property
    def delete_deltas(self) -> tuple[DeltaDir, ...]:
        """The chosen ``delete_delta_*`` directories."""
        return tuple(d for d in self.deltas if d.delete)


def _as_dirs(directories: Iterable[AcidDir | str]) -> list[AcidDir]:
    out: list[AcidDir] = []
    for item in directories:
        parsed = parse_directory(item) if isinstance(item, str) else item
        if parsed is None:
            raise AcidNameError(f"{item!r} is not a base or delta directory", name=item)
        out.append(parsed)
    return out


def acid_state(
    directories: Iterable[AcidDir | str],
    write_ids: ValidWriteIdList,
    *,
    committed_txns: Collection[int] = frozenset(),
    aborted_txns: Collection[int] = frozenset(),
) -> AcidState:
    """Choose the base and deltas a snapshot reads, as ``AcidUtils.getAcidState`` does.

    Args:
        directories: The partition's base and delta directories from the committed manifest
            (parsed, or names).
        write_ids: The reader's snapshot of the table's write ids.
        committed_txns: Committed transaction ids; a ``_vT`` directory is used only if T is
            among them.
        aborted_txns: Aborted transaction ids; a ``_vT`` directory of such a T is aborted.

    Raises:
        NotEnoughHistoryError: Compacted bases exist but none is usable for this snapshot
            (a write id at or below each of them is open in it).
        AcidNameError: A name is not a base or delta directory.
    """
    obsolete: list[AcidDir] = []
    aborted: list[AcidDir] = []
    pending: list[AcidDir] = []
    bases: list[BaseDir] = []
    current: list[DeltaDir] = []
    uncompacted_aborts = False
    for item in _as_dirs(directories):
        txn = item.visibility_txn_id
        if txn and txn not in committed_txns:
            (aborted if txn in aborted_txns else pending).append(item)
            continue
        if isinstance(item, BaseDir):
            bases.append(item)
            continue
        aborted_range = write_ids.is_range_aborted(item.min_write_id, item.max_write_id)
        if aborted_range is RangeResponse.ALL:
            aborted.append(item)
            continue
        uncompacted_aborts |= aborted_range is RangeResponse.SOME
        if write_ids.is_range_valid(item.min_write_id, item.max_write_id) is not RangeResponse.NONE:
            current.append(item)
    base = _best_base(bases, write_ids, obsolete, aborted)
    deltas = _best_working_deltas(current, base, write_ids, obsolete)
    return AcidState(
        base, tuple(deltas), tuple(obsolete), tuple(aborted), tuple(pending), uncompacted_aborts
    )


def _usable_base(base: BaseDir, write_ids: ValidWriteIdList) -> bool:
    if base.compacted:
        return write_ids.is_valid_base(base.write_id)
    # INSERT OVERWRITE: logically a delta that hides everything older; it keeps all history,
    # so it is usable as soon as its own write id is valid (Hive's isValidBase does the same).
    return write_ids.is_valid(base.write_id)


def _best_base(
    bases: list[BaseDir],
    write_ids: ValidWriteIdList,
    obsolete: list[AcidDir],
    aborted: list[AcidDir],
) -> BaseDir | None:
    """``processBaseDir`` over the bases in name order; raises for lost history."""
    best: BaseDir | None = None
    oldest: BaseDir | None = None
    for candidate in sorted(bases, key=lambda b: (b.write_id, b.visibility_txn_id)):
        if oldest is None or oldest.write_id > candidate.write_id:
            oldest = candidate
        if write_ids.is_aborted(candidate.write_id) and not candidate.compacted:
            aborted.append(candidate)  # an aborted INSERT OVERWRITE
            continue
        replaces = (
            best is None
            or best.write_id < candidate.write_id
            # the compactor's version of a write id wins over INSERT OVERWRITE's once committed
            or (best.write_id == candidate.write_id and candidate.compacted)
        )
        if not replaces:
            obsolete.append(candidate)
        elif _usable_base(candidate, write_ids):
            if best is not None:
                obsolete.append(best)
            best = candidate
    if best is None and oldest is not None and oldest.compacted:
        raise NotEnoughHistoryError(
            f"{write_ids.table}: no base can serve this snapshot (high-water mark "
            f"{write_ids.high_water_mark}, lowest open write id {write_ids.min_open}): the "
            f"compacted {oldest.name} already erased history it needs. Start a new read.",
            table=write_ids.table,
            base=oldest.name,
        )
    return best


def _best_working_deltas(
    current: list[DeltaDir],
    base: BaseDir | None,
    write_ids: ValidWriteIdList,
    obsolete: list[AcidDir],
) -> list[DeltaDir]:
    """``findBestWorkingDeltas``: the minimal covering set of deltas above the base."""
    chosen: list[DeltaDir] = []
    covered = base.write_id if base is not None else 0
    last_statement = -1
    prev: DeltaDir | None = None
    for delta in sorted(current, key=lambda d: d.sort_key):
        statement = -1 if delta.statement_id is None else delta.statement_id
        if delta.max_write_id > covered:
            # Kept only if it brings a write id we care about; otherwise neither kept nor
            # obsolete (it may hold write ids that are still open).
            valid = write_ids.is_range_valid(covered + 1, delta.max_write_id)
            if valid is not RangeResponse.NONE:
                chosen.append(delta)
                covered = delta.max_write_id
                last_statement = statement
                prev = delta
        elif delta.max_write_id == covered and last_statement >= 0:
            chosen.append(delta)  # another statement of the same write id
            prev = delta
        elif prev is not None and (
            (delta.min_write_id, delta.max_write_id, delta.statement_id)
            == (prev.min_write_id, prev.max_write_id, prev.statement_id)
        ):
            chosen.append(delta)  # the delete_delta twin of a kept delta (or vice versa)
            prev = delta
        else:
            obsolete.append(delta)
    return chosen
