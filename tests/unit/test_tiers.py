"""The suite's tiers (README, Development): markers follow the fixtures a test uses, and the
run's seed gives each randomized case a seed of its own that a replay repeats."""

from __future__ import annotations

import pytest

from tests.conftest import JVM_FIXTURES, POSTGRES_FIXTURES
from tests.support import run_seed


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
