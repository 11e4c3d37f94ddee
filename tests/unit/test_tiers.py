"""The suite's tiers (README, Development): markers follow the fixtures a test uses, and the
run's seed gives each randomized case a seed of its own that a replay repeats."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

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


@dataclass
class _Item:
    """What `keep_one_layout` reads of a pytest item."""

    name: str
    layout: str | None
    fixturenames: tuple[str, ...] = ()
    catalog: str | None = None

    @property
    def callspec(self) -> SimpleNamespace:
        return SimpleNamespace(params={"catalog_url": self.catalog} if self.catalog else {})


class _Config:
    def __init__(self) -> None:
        self.stash = pytest.Stash()
        self.deselected: list[Any] = []
        self.hook = SimpleNamespace(pytest_deselected=lambda items: self.deselected.extend(items))


def _kept(seed: int, offset: int, items: list[_Item], env: str | None) -> list[str]:
    config = _Config()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(one_layout, "run_seed", lambda: (seed, "test"))
        if env is None:
            patch.delenv(one_layout.ENV_ONE_LAYOUT, raising=False)
        else:
            patch.setenv(one_layout.ENV_ONE_LAYOUT, env)
        kept = one_layout.keep_one_layout(
            config,  # type: ignore[arg-type]
            items,  # type: ignore[arg-type]
            offset,
            lambda item: cast(_Item, item).layout,
        )
    assert len(kept) + len(config.deselected) == len(items)
    return [item.name for item in kept]


def test_ci_s_second_runs_take_one_layout_each_and_the_other_one_next_commit() -> None:
    """CI's test-oldest-spark (offset 0) and test-fresh (offset 1) stages
    (tests/support/one_layout.py): each a layout, the two different on one seed, both flipped
    on the next seed; no PostgreSQL case; items of other suites stay; unset, all stay."""
    items = [
        _Item("test_a[versioned]", "versioned"),
        _Item("test_a[acid]", "acid"),
        _Item("test_b[acid-postgres]", "acid", catalog="postgres"),
        _Item("test_b[acid-sqlite]", "acid", catalog="sqlite"),
        _Item("test_c[versioned]", "versioned", ("pg_url",)),
        _Item("test_other_suite", None),
    ]
    assert _kept(6, 0, items, None) == [i.name for i in items]
    assert _kept(6, 0, items, "0") == [i.name for i in items]
    chosen = {}
    for seed in (6, 7):
        for offset in (0, 1):
            kept = _kept(seed, offset, items, "1")
            assert "test_other_suite" in kept
            assert not [k for k in kept if "postgres" in k or k == "test_c[versioned]"]
            (layout,) = {k[len("test_a[") : -1] for k in kept if k.startswith("test_a[")}
            chosen[seed, offset] = layout
    assert chosen[6, 0] != chosen[6, 1] and chosen[7, 0] != chosen[7, 1]
    assert chosen[6, 0] != chosen[7, 0]  # the next commit's seed flips them
