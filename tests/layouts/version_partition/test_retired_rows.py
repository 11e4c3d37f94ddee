"""The version layout's live-row estimate (`retired_rows`): entries retire rows of older
versions only, one each, and only those a write recorded as possibly retiring; a key's
entries count where its filters matched last. No Spark."""

from __future__ import annotations

from typing import Any

import numpy as np

from versioned.catalog.records import DataFile
from versioned.layouts.version_partition.elsewhere import ElsewhereProbe
from versioned.layouts.version_partition.retired_rows import (
    RETIRING_STAT,
    KeyHomes,
    live_rows_estimate,
)


def _file(kind: str, version: int, rows: int, **stats: Any) -> DataFile:
    return DataFile(0, 1, f"{kind}-{version}", kind, version, 10, rows, stats, 1, None)


def test_each_entry_retires_one_older_row() -> None:
    # 20 rows, 5 updated in place (5 rows and 5 entries), 3 deleted (3 entries).
    files = [_file("data", 1, 20), _file("data", 2, 5), _file("index", 2, 5)]
    files += [_file("index", 3, 3), _file("bloom", 1, 20)]
    assert live_rows_estimate(files) == 17


def test_entries_with_no_older_row_left_retire_nothing() -> None:
    # A key deleted (v2) and inserted again (v3, Bloom positive: an entry): one live row.
    assert live_rows_estimate([_file("data", 1, 1), _file("index", 2, 1)]) == 0
    deleted_and_back = [_file("data", 1, 1), _file("index", 2, 1)]
    deleted_and_back += [_file("data", 3, 1), _file("index", 3, 1)]
    assert live_rows_estimate(deleted_and_back) == 1
    # A compaction's tombstones share its rows' version: they retire none of them.
    compacted = [_file("data", 7, 10), _file("index", 7, 10, tombstones=10)]
    assert live_rows_estimate(compacted) == 10


def test_only_the_entries_a_write_found_retiring_count() -> None:
    files = [_file("data", 1, 10), _file("index", 4, 10, **{RETIRING_STAT: 0})]
    files += [_file("index", 5, 10, **{RETIRING_STAT: 2})]
    assert live_rows_estimate(files) == 8


def _rows_in(versions: dict[int, set[int]]) -> Any:
    return lambda pid: versions.get(pid, set())


def test_an_entry_counts_where_its_key_was_written_last() -> None:
    # Keys 0..4 of a batch naming partition 1; newest matching version there (-1: none).
    own = np.array([3, 3, -1, 5, 2])
    probe = ElsewhereProbe(
        hits={7: np.array([0, 1, 2, 4]), 8: np.array([1, 4])},
        newest={7: np.array([5, 3, 4, 1]), 8: np.array([2, 1])},
    )
    rows = _rows_in({1: {2, 3, 5}, 7: {1, 3, 4, 5}, 8: {1, 2}})
    homes = KeyHomes.of(own, probe, rows, np.full(5, 1))
    # Key 0 moved to partition 7 after its row here (5 > 3): an entry here retires nothing.
    # Key 1 ties (3 = 3): the named partition wins. Key 3 was written here last.
    assert homes.retiring_here(np.array([0, 1, 3, 4])) == 3
    # In 7: key 0 (newest there), key 2 (newer than none); key 1 tied, key 4 older.
    assert homes.retiring_in(7, probe.hits[7]) == 2
    assert homes.retiring_in(8, probe.hits[8]) == 0
    # Two other partitions tied: neither is where the key is.
    tied = KeyHomes.of(
        np.array([-1]),
        ElsewhereProbe(
            hits={7: np.array([0]), 8: np.array([0])}, newest={7: np.array([4]), 8: np.array([4])}
        ),
        _rows_in({7: {4}, 8: {4}}),
    )
    assert tied.retiring_in(7, np.array([0])) == tied.retiring_in(8, np.array([0])) == 0


def test_a_match_in_a_version_that_only_deleted_there_retires_nothing() -> None:
    # Key 0 was deleted in its partition at version 6 (no rows there then) and comes back;
    # key 1 was deleted in partition 7 at version 6, and is inserted in its partition.
    probe = ElsewhereProbe(hits={7: np.array([1])}, newest={7: np.array([6])})
    rows = _rows_in({1: {1, 2}, 7: {1, 2}})
    homes = KeyHomes.of(np.array([6, -1]), probe, rows, np.full(2, 1))
    assert homes.retiring_here(np.array([0])) == 0
    assert homes.retiring_in(7, np.array([1])) == 0
    assert (
        KeyHomes.of(np.array([2, -1]), probe, rows, np.full(2, 1)).retiring_here(np.array([0])) == 1
    )
