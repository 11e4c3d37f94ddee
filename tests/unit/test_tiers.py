"""The suite's tiers (README, Development): markers follow the fixtures a test uses, and the
run's seed gives each randomized case a seed of its own that a replay repeats."""

from __future__ import annotations

import pytest

from tests.conftest import JVM_FIXTURES, POSTGRES_FIXTURES
from tests.support import one_layout, run_seed


def test_markers_are_derived_from_fixtures_not_written_by_hand(
    request: pytest.FixtureRequest,
) -> None:
    wrong = []
    for item in request.session.items:
        names = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        derived = {
            "spark": "spark" in names,
            "jvm": bool(names & JVM_FIXTURES),
            "postgres": bool(names & POSTGRES_FIXTURES) or params.get("catalog_url") == "postgres",
        }
        for marker, expected in derived.items():
            if (item.get_closest_marker(marker) is not None) != expected:
                wrong.append(f"{item.nodeid}: {marker}")
    assert not wrong, f"markers that do not follow the fixtures: {wrong[:10]}"


def test_a_case_s_seed_follows_the_run_seed_and_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_seed, "run_seed", lambda: (1234, "test"))
    first = run_seed.seed_for("tests/x.py::test_a")
    assert first == run_seed.seed_for("tests/x.py::test_a")  # a replay repeats it
    assert first != run_seed.seed_for("tests/x.py::test_b")
    monkeypatch.setattr(run_seed, "run_seed", lambda: (1235, "test"))
    assert first != run_seed.seed_for("tests/x.py::test_a")  # another commit, another case
    assert "VERSIONED_TEST_SEED=1235" in run_seed.header()


def test_the_seed_comes_from_the_environment_first() -> None:
    assert run_seed.resolve({run_seed.ENV_SEED: "42"}) == (42, f"${run_seed.ENV_SEED}")
    seed, source = run_seed.resolve({})
    assert source.startswith("commit ") and seed >= 0  # this checkout is a git repository


def _collected(seed: int, *args: str) -> tuple[set[str], list[str]]:
    """The layouts of the cases ``pytest --collect-only ARGS`` keeps with one layout a run,
    and the node ids it keeps."""
    import os
    import subprocess
    import sys

    env = {**os.environ, run_seed.ENV_SEED: str(seed), one_layout.ENV_ONE_LAYOUT: "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", *args],
        capture_output=True, text=True, env=env, timeout=300, cwd=run_seed.ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    return {i.rsplit("[", 1)[1].split("-")[0].rstrip("]") for i in ids}, ids


def test_ci_s_second_runs_take_one_layout_each_and_the_other_one_next_commit() -> None:
    """CI's test-oldest-spark and test-fresh stages (tests/support/one_layout.py): each a
    layout, the two different on one seed, both flipped on the next seed; no PostgreSQL."""
    from tests.support.one_layout import LAYOUTS

    table, fresh = ("tests/table/test_compaction.py",), ("-m", "fresh", "tests/fresh")
    seen = []
    for seed in (6, 7):
        (table_layout,), table_ids = _collected(seed, *table)
        (fresh_layout,), _ = _collected(seed, *fresh)
        assert table_layout != fresh_layout
        assert not [i for i in table_ids if "postgres" in i]
        seen.append(table_layout)
    assert set(seen) == set(LAYOUTS[:2])
