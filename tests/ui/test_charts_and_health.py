"""The charts on every shape of table, and the health rules at their edges (rows shaped as
`Table.metadata` gives them; no catalog needed)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from versioned.ui.charts import AXIS_NAME_WIDTH, CELL_NAME_WIDTH, commits_svg, partitions_svg
from versioned.ui.health import IDLE_AFTER_S, WINDOW, health_marks

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
SVG = "{http://www.w3.org/2000/svg}"
CITIES = ("東京", "서울")


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


def _partition(
    values: list[tuple[str, str | None]], amp: float | None, due: str | None = None
) -> Any:
    return {
        "partition": "/".join(f"{k}={HIVE_NULL if v is None else v}" for k, v in values),
        "values": values,
        "read_amplification": amp,
        "compaction_due": due,
    }


def _svg(data: bytes) -> ET.Element:
    root = ET.fromstring(data)
    assert root.tag == f"{SVG}svg"
    return root


def _texts(root: ET.Element) -> list[str]:
    """Every line of text the chart shows, as the browser gets it."""
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def _x_tick_labels(root: ET.Element) -> list[str]:
    """The time axis's labels, their lines joined by newlines, left to right."""
    ticks = [g for g in root.iter(f"{SVG}g") if g.get("id", "").startswith("xtick_")]
    labels = ["\n".join(t.text or "" for t in g.iter(f"{SVG}text")) for g in ticks]
    return [label for label in labels if label]


def _titled(root: ET.Element) -> dict[str, str]:
    """Each title and the text it is the title of."""
    found = {}
    for g in root.iter(f"{SVG}g"):
        title = g.find(f"{SVG}title")
        if title is not None:
            (text,) = g.iter(f"{SVG}text")
            found[title.text or ""] = text.text or ""
    return found


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


@pytest.mark.parametrize("commits", [1, 2, 3, 7])
def test_the_time_axis_labels_each_commit_once(commits: int) -> None:
    """One commit got six identical labels: fractional ticks, each rounded to it."""
    labels = _x_tick_labels(_svg(commits_svg([_commit(i + 1) for i in range(commits)])))
    at = f"{NOW.astimezone():%H:%M:%S}"
    assert labels == [f"{i + 1}\n{at}" for i in range(commits)]


def test_a_long_history_gets_a_few_distinct_time_labels() -> None:
    labels = _x_tick_labels(_svg(commits_svg([_commit(i + 1) for i in range(1000)])))
    assert 3 <= len(labels) <= 9 and len(set(labels)) == len(labels)


@pytest.mark.parametrize("partition_by", [["city"], ["city", "day"]])
def test_cjk_partition_values_are_text_the_browser_draws(partition_by: list[str]) -> None:
    """Drawn as paths in DejaVu Sans, which has no CJK glyph, they were empty boxes."""
    parts = [
        _partition([("city", c), ("day", "2024-01-01")][: len(partition_by)], 1.5) for c in CITIES
    ]
    texts = _texts(_svg(partitions_svg(parts, partition_by)))
    assert set(CITIES if partition_by == ["city"] else [f"city={c}" for c in CITIES]) <= set(texts)


def test_charts_of_cjk_partition_values_write_no_font_warning_to_stderr() -> None:
    """matplotlib warned `Glyph ... missing from font(s) DejaVu Sans` once per character."""
    draw = """
from versioned.ui.charts import partitions_svg
for cities, by in ((("東京", "서울", "北京"), ["city"]), (("大阪", "부산"), ["city", "d"])):
    parts = [
        {"values": [("city", c), ("d", "1")][: len(by)], "read_amplification": 2.0,
         "compaction_due": "due"}
        for c in cities
    ]
    assert partitions_svg(parts, by).startswith(b"<?xml")
"""
    done = subprocess.run(
        [sys.executable, "-c", draw], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    # (a first run may say matplotlib is building its font cache: not a warning about a font)
    said = [line for line in done.stderr.splitlines() if "building the font cache" not in line]
    assert not [line for line in said if "font" in line.lower() or "Glyph" in line], said


@pytest.mark.parametrize("partition_by", [["city"], ["city", "day"]])
def test_a_long_partition_value_is_cut_with_an_ellipsis_and_titled_in_full(
    partition_by: list[str],
) -> None:
    long = "Llanfairpwllgwyngyll-" + "x" * 120
    parts = [
        _partition([("city", long), ("day", long)][: len(partition_by)], 2.0, "due"),
        _partition([("city", "short"), ("day", "1")][: len(partition_by)], 1.0),
    ]
    root = _svg(partitions_svg(parts, partition_by))
    texts = _texts(root)
    assert not [t for t in texts if long in t]
    one_column = partition_by == ["city"]
    full = [long] if one_column else [f"city={long}", f"day={long}"]
    width = CELL_NAME_WIDTH if one_column else AXIS_NAME_WIDTH
    titled = _titled(root)
    assert sorted(titled) == sorted(full)  # only what is cut has a title
    for name, shown in titled.items():
        assert shown.endswith("…") and len(shown) == width and name.startswith(shown[:-1])
    assert ("short" if one_column else "city=short") in texts  # what fits stays whole
    assert float(root.get("width", "").removesuffix("pt")) <= 12 * 72


def test_a_null_partition_value_is_named_as_hive_names_it() -> None:
    """As the partitions table under the chart and `versioned partitions` (its ``path``)
    name it; the chart said ``None``."""
    one = _texts(_svg(partitions_svg([_partition([("city", None)], 1.0)], ["city"])))
    assert HIVE_NULL in one
    parts = [_partition([("city", None), ("day", None)], 1.0)]
    two = _texts(_svg(partitions_svg(parts, ["city", "day"])))
    assert {f"city={HIVE_NULL}", f"day={HIVE_NULL}"} <= set(two)
    assert not [t for t in one + two if "None" in t]


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
