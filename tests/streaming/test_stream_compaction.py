"""Many small streaming commits do not slow reads without bound: the scheduled compaction
(`versioned compact --all`, its default thresholds) picks a streamed partition up and folds
hundreds of single-record commits (25 times the threshold of 10 versions) back into one base
(acid) or one version."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.layout_profiles import LAYOUTS, table_args
from versioned import streaming as vs
from versioned.layouts.acid.snapshot_dirs import INSERT_KINDS
from versioned.options import CompactionThresholds

COMMITS = 250
PER_BATCH = 10  # 25 transaction batches: 25 deltas (acid) and 250 versions, past every threshold
KEYS = 175  # ids repeat: later records replace earlier ones


@pytest.mark.soak  # reads of hundreds of tiny files per layout: `make soak` (CI runs it)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_hundreds_of_single_record_commits_compact_into_one_base_or_version(
    cat: Any, layout: str
) -> None:
    extra = table_args(layout, buckets=2)
    table = cat.create_table(
        "testing.alerts",
        columns="id INT NOT NULL, msg STRING, continent STRING, country STRING",
        primary_key="id",
        partition_by="continent,country",
        layout=layout,
        **extra,
    )
    endpoint = vs.EndPoint(cat, "testing.alerts", ["Asia", "India"])
    writer = vs.DelimitedInputWriter(["id", "msg"], ",", endpoint=endpoint)
    with endpoint.connect(create_partition=True) as conn:
        for start in range(0, COMMITS, PER_BATCH):
            with conn.fetch_transaction_batch(PER_BATCH, writer) as batch:
                for i in range(start, start + PER_BATCH):
                    batch.begin_next_transaction()
                    batch.write(f"{i % KEYS},record {i}")
                    batch.commit()
    expected = sorted({i % KEYS: f"record {i}" for i in range(COMMITS)}.items())
    assert sorted((r.id, r.msg) for r in table.read().collect()) == expected
    streamed = [c for c in table.history() if c.operation == "stream"]
    assert len(streamed) == COMMITS

    result = table.compact(thresholds=CompactionThresholds())  # what `compact --all` runs
    assert [p.partition for p in result.partitions] == ["continent=Asia/country=India"]
    assert sorted((r.id, r.msg) for r in table.read().collect()) == expected
    files = table.snapshot().files
    if layout == "acid":
        dirs = {f.path.split("/")[-2] for f in files if f.kind in INSERT_KINDS}
        assert len(dirs) == 1 and next(iter(dirs)).startswith("base_"), dirs
        assert not [f for f in files if f.kind == "delete_delta"]
    else:
        versions = {f.version for f in files if f.kind == "data"}
        assert len(versions) == 1, versions
