"""`versioned compact` of an acid table: major when named, Hive's initiator rules under
``--all``, ``--kind`` forces minor or major (CliRunner, shared SparkSession)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner

from tests.table.sales import make_table
from versioned.api.catalog import connect
from versioned.cli.main import cli


@pytest.fixture
def setup(spark: Any, tmp_path: Path) -> Any:
    warehouse, url = str(tmp_path / "wh"), f"sqlite:///{tmp_path}/cat.db"
    cat = connect(catalog=url, warehouse=warehouse, spark=spark, user="alice")
    base = ["--warehouse", warehouse, "--catalog", url, "--user", "alice"]

    def run(*args: str) -> Any:
        return CliRunner().invoke(cli, [*base, *args])

    yield cat, run
    cat.close()


def _acid(cat: Any) -> Any:
    return cat.create_table(
        "s.t",
        columns="id BIGINT NOT NULL, v INT",
        primary_key="id",
        layout="acid",
        properties={"compactor.delta.num.threshold": "2"},
    )


def _upsert(table: Any, version: int, *ids: int) -> None:
    """Insert key ``version`` (and update the keys ``ids``): one delta directory (and one
    delete delta with ``ids``); Hive's initiator counts both kinds."""
    keys = [version, *ids]
    table.upsert(pa.table({"id": keys, "v": [version] * len(keys)}))


def _dirs(table: Any) -> set[str]:
    return {f.path.split("/")[0] for f in table.snapshot().files}


def test_a_named_table_compacts_major_and_all_follows_hive_s_initiator(setup: Any) -> None:
    """Issue 27 item 7: the initiator's thresholds belong to --all; a named table gets the
    major compaction the README promises, as a named versioned table is compacted."""
    cat, run = setup
    t = _acid(cat)
    for version in (1, 2):
        _upsert(t, version)

    nothing = run("compact", "--all", "-o", "json")
    assert nothing.exit_code == 0, nothing.output
    assert json.loads(nothing.stdout) == []  # 2 deltas: not more than the threshold of 2
    assert "nothing to compact" in nothing.stderr
    _upsert(t, 3)
    plan = run("compact", "--all", "--dry-run", "-o", "json")
    assert json.loads(plan.stdout)[0]["why"] == "major: 3 deltas > 2 (no base)"
    assert all(d.startswith("delta_") for d in _dirs(t))  # a dry run writes nothing

    _upsert(t, 4)  # a named table: major, whatever the thresholds
    major = run("compact", "s.t", "-o", "json")
    assert major.exit_code == 0, major.output
    (done,) = json.loads(major.stdout)
    assert (done["status"], done["versions"]) == ("compacted", 4)
    base = "base_0000004"  # Hive 3's name, which Hive 2.3 reads too (no _vT)
    assert _dirs(t) == {base}

    _upsert(t, 5)
    _upsert(t, 6, 1)
    minor = run("compact", "s.t", "--kind", "minor", "-o", "json")
    assert minor.exit_code == 0, minor.output
    (done,) = json.loads(minor.stdout)
    assert _dirs(t) == {base, "delta_0000005_0000006", "delete_delta_0000005_0000006"}
    assert {r["id"]: r["v"] for r in t.read().collect()} == {1: 6, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6}


def test_kind_is_refused_for_a_versioned_table_and_explained_in_help(setup: Any) -> None:
    cat, run = setup
    make_table(cat, layout="versioned")
    refused = run("compact", "t.sales", "--kind", "major")
    assert refused.exit_code == 2
    assert "--kind applies to acid tables; t.sales uses the versioned layout" in refused.output
    assert run("compact", "t.sales", "--kind", "medium").exit_code == 2
    text = " ".join(run("compact", "--help").output.split())
    assert "minor: a partition's deltas -> one delta_MIN_MAX" in text
    assert "major: base + deltas -> one base_W with the deletes applied" in text
    assert "[default: major for DB.TABLE; with --all, Hive's initiator rules decide" in text
