"""The charts on every shape of table, and the health rules at their edges (rows shaped as
`Table.metadata` gives them; no catalog needed)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from versioned.ui.charts import commits_svg, partitions_svg
from versioned.ui.health import IDLE_AFTER_S, WINDOW, health_marks

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _commit(seq: int, *, rejected: int | None = None, at: datetime = NOW) -> dict[str, Any]:
    return {
        "commit": seq,
        "version": seq,
        "committed_at": at,
        "inserted": 5,
        "updated": 2,
        "deleted": None,
        "rejected": rejected,
        "bytes_written": 2048,
        "seconds": None if seq % 2 else 0.25,
    }


def _partition(values: list[tuple[str, str]], amp: float | None, due: str | None = None) -> Any:
    return {
        "partition": "/".join(f"{k}={v}" for k, v in values),
        "values": values,
        "read_amplification": amp,
        "compaction_due": due,
    }


def _svg(data: bytes) -> ET.Element:
    root = ET.fromstring(data)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


@pytest.mark.parametrize("commits", [0, 1, 3, 1000])
def test_the_commits_chart_draws_any_number_of_commits(commits: int) -> None:
    _svg(commits_svg([_commit(i + 1) for i in range(commits)]))


@pytest.mark.parametrize(
    ("partition_by", "partitions"),
    [
        (["day"], []),
        ([], [_partition([], 1.0)]),
        (
            ["day"],
            [
                _partition([("day", f"d{i}")], 1 + i / 10, "due" if i % 7 else None)
                for i in range(30)
            ],
        ),
        (
            ["store", "day"],
            [
                _partition([("store", str(i % 3)), ("day", f"2024-01-0{i % 4}")], None)
                for i in range(12)
            ],
        ),
        (["day"], [_partition([("day", f"d{i}")], 2.0) for i in range(200)]),
    ],
    ids=["none", "unpartitioned", "one-column", "two-columns-no-live-rows", "many"],
)
def test_the_heat_map_draws_every_shape(partition_by: list[str], partitions: list[Any]) -> None:
    _svg(partitions_svg(partitions, partition_by))


def test_a_writer_is_idle_after_fifteen_quiet_minutes_without_a_commit_since() -> None:
    old = NOW - timedelta(seconds=IDLE_AFTER_S + 1)
    history = [_commit(1, at=old), _commit(2, at=old)]
    writer = {"writer_id": "w", "commit": 2, "recorded_at": old}
    assert [m.kind for m in health_marks(history, [], [writer], NOW)] == ["idle"]
    fresh = {**writer, "recorded_at": NOW - timedelta(seconds=IDLE_AFTER_S - 1)}
    assert health_marks(history, [], [fresh], NOW) == []
    later = [*history, _commit(3, at=NOW)]  # the table got a commit since: not idle
    assert health_marks(later, [], [writer], NOW) == []
    empty_batch = {**writer, "commit": None}  # its batch committed nothing: by time
    assert [m.kind for m in health_marks(history, [], [empty_batch], NOW)] == ["idle"]
    assert health_marks(later, [], [empty_batch], NOW) == []


def test_dead_letters_rise_when_the_last_window_rejected_more_than_the_one_before() -> None:
    steady = [_commit(i + 1, rejected=1) for i in range(2 * WINDOW)]
    assert health_marks(steady, [], [], NOW) == []
    rising = [*steady[:-1], _commit(2 * WINDOW, rejected=2)]
    (mark,) = health_marks(rising, [], [], NOW)
    assert mark.kind == "dead_letters" and mark.label == "dead letters rising"
    assert (
        f"{WINDOW + 1} rows rejected by the last {WINDOW} commits, {WINDOW} before" in mark.detail
    )
    young = [_commit(1), _commit(2, rejected=1)]
    assert [m.kind for m in health_marks(young, [], [], NOW)] == ["dead_letters"]


def test_compaction_is_due_when_a_partition_says_so() -> None:
    parts = [_partition([("day", "a")], 1.0), _partition([("day", "b")], 3.0, "9 versions >= 8")]
    (mark,) = health_marks([], parts, [], NOW)
    assert mark.kind == "compaction" and mark.detail == "day=b: 9 versions >= 8"
