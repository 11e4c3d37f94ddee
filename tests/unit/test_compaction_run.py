"""Compaction's shared skeleton (`versioned.layouts.compaction_run`) with a layout's part
written here: what it says, its dry run, a partition's attempts after lost races, a partition
another compaction emptied, one whose attempts all lose, partitions a few at a time. No
Spark, no catalog: the layout's part is where those come in."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from versioned.catalog.records import TableInfo
from versioned.errors import CommitConflictError
from versioned.layouts.compaction_run import NothingLeft, run_compaction
from versioned.layouts.table_request import CompactRequest
from versioned.options import CompactionOptions, Progress
from versioned.results import PartitionCompaction
from versioned.schema import TableSpec

SPEC = TableSpec.build("db.t", columns="id INT, p STRING", primary_key="id", partition_by="p")
TABLE = TableInfo(1, SPEC, "alice", "db.db/t", 0.0, 3)


@dataclass
class Partitions:
    """Plans are partition paths; ``script`` says what each attempt at one does."""

    script: dict[str, list[str]]
    retry_message: str = "lost a race; planning again"
    gave_up_message: str | None = "gave up"
    attempts: list[tuple[str, int]] = field(default_factory=list)
    threads: set[str] = field(default_factory=set)

    def path(self, plan: str) -> str:
        return plan

    def high_water_mark(self, plan: str) -> int | None:
        return 7

    def planned(self, plan: str) -> PartitionCompaction:
        return PartitionCompaction(plan, "planned")

    def attempt(self, plan: str, n: int, say: Progress) -> PartitionCompaction | NothingLeft:
        self.attempts.append((plan, n))
        self.threads.add(threading.current_thread().name)
        outcome = self.script[plan][n - 1]
        say(f"attempt {n}: {outcome}")
        if outcome == "conflict":
            raise CommitConflictError(f"{plan}: a writer committed first")
        if outcome == "empty":
            return NothingLeft(high_water_mark=9)
        return PartitionCompaction(plan, "compacted", version=100 + n)


def _request(said: list[str], *, dry_run: bool = False, attempts: int = 3) -> CompactRequest:
    return CompactRequest(
        operation="compact",
        table=TABLE,
        granted=frozenset({"write"}),
        progress=said.append,
        options=CompactionOptions(max_attempts=attempts, parallelism=1),
        dry_run=dry_run,
    )


def test_each_partition_gets_its_attempts_and_a_result_of_its_own() -> None:
    said: list[str] = []
    script = {
        "p=a": ["ok"],
        "p=b": ["conflict", "ok"],
        "p=c": ["conflict", "empty"],
        "p=d": ["conflict", "conflict", "conflict"],
    }
    parts = Partitions(script)
    result = run_compaction(_request(said), list(script), parts, started=0.0)
    got = {
        p.partition: (p.status, p.attempts, p.version, p.high_water_mark) for p in result.partitions
    }
    assert got == {
        "p=a": ("compacted", 1, 101, None),
        "p=b": ("compacted", 2, 102, None),
        "p=c": ("skipped", 2, None, 9),
        "p=d": ("conflict", 3, None, 7),
    }
    assert said[0] == "db.t: 4 partition(s) to compact"
    assert "db.t [2/4] p=b: lost a race; planning again" in said
    assert "db.t [3/4] p=c: nothing left to compact (compacted concurrently)" in said
    assert said[-1] == "db.t [4/4] p=d: gave up"
    assert not result.dry_run


def test_a_dry_run_and_nothing_to_do_attempt_nothing() -> None:
    said: list[str] = []
    parts = Partitions({"p=a": ["ok"]})
    planned = run_compaction(_request(said, dry_run=True), ["p=a"], parts, started=0.0)
    assert planned.dry_run and [p.status for p in planned.partitions] == ["planned"]
    nothing = run_compaction(_request(said), [], parts, started=0.0)
    assert nothing.partitions == () and said[-1] == "db.t: nothing to compact"
    assert parts.attempts == []


@pytest.mark.parametrize("parallelism", [1, 3])
def test_partitions_run_a_few_at_a_time_in_their_order(parallelism: int) -> None:
    script = {f"p={i}": ["ok"] for i in range(5)}
    parts = Partitions(script)
    result = run_compaction(_request([]), list(script), parts, started=0.0, parallelism=parallelism)
    assert [p.partition for p in result.partitions] == list(script)
    threads = {t for t in parts.threads if t.startswith("versioned-compact")}
    assert (len(threads) > 0) == (parallelism > 1)
