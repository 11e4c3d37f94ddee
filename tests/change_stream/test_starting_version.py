"""``startingVersion``: where a new stream starts (a checkpoint's offset wins over it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException

from tests.change_stream.streams import batch, change_reader, create, run_to_memory
from versioned.api.catalog import Catalog


@pytest.fixture
def three(cat: Catalog) -> Any:
    t = create(cat, "versioned")
    for i in (1, 2, 3):
        t.upsert(batch([("I", i, f"v{i}", float(i), "x")]))
    return t


def _seqs(rows: list[dict[str, Any]]) -> list[int]:
    return sorted(r["_commit_seq"] for r in rows)


def test_a_version_starts_the_stream_with_that_commit(
    spark: Any, cat: Catalog, three: Any, tmp_path: Path
) -> None:
    second = three.history()[1]
    frame = change_reader(spark, cat, "cs.t", startingVersion=str(second.version)).load()
    rows = run_to_memory(frame, tmp_path / "ck")
    assert _seqs(rows) == [2, 3]
    assert {r["_commit_version"] for r in rows} == {c.version for c in three.history()[1:]}


def test_without_a_starting_version_the_stream_starts_at_the_first_commit(
    spark: Any, cat: Catalog, three: Any, tmp_path: Path
) -> None:
    rows = run_to_memory(change_reader(spark, cat, "cs.t").load(), tmp_path / "ck")
    assert _seqs(rows) == [1, 2, 3]


def test_latest_starts_with_the_next_commit(
    spark: Any, cat: Catalog, three: Any, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "ck"
    frame = change_reader(spark, cat, "cs.t", startingVersion="latest").load()
    assert run_to_memory(frame, checkpoint) == []
    three.upsert(batch([("U", 1, "new", 1.0, "x")]))
    rows = run_to_memory(change_reader(spark, cat, "cs.t").load(), checkpoint)
    assert [(r["_commit_seq"], r["_change_type"]) for r in rows] == [
        (4, "update_preimage"),
        (4, "update_postimage"),
    ]


def test_a_version_the_table_does_not_have_fails_when_the_stream_is_loaded(
    spark: Any, cat: Catalog, three: Any
) -> None:
    missing = max(c.version for c in three.history()) + 1000
    with pytest.raises(AnalysisException, match=f"cs.t has no version {missing}"):
        change_reader(spark, cat, "cs.t", startingVersion=str(missing)).load()
    with pytest.raises(AnalysisException, match="startingVersion 'first' is not a version"):
        change_reader(spark, cat, "cs.t", startingVersion="first").load()
