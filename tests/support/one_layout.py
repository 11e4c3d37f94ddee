"""One layout a run, for CI's second runs of a suite: `make test-oldest-spark` (tests/table on
the oldest PySpark) and `make test-fresh` (every command in a new process).

With ``VERSIONED_TEST_ONE_LAYOUT=1`` (CI sets it for those two stages) such a run keeps the
cases of one layout, the one the run's seed picks (tests/support/run_seed.py: from the commit,
so consecutive commits alternate them), and leaves out the cases that start PostgreSQL (its
catalog drives the same Spark code as SQLite's). The two stages take different layouts from
one seed, so each CI run covers both layouts in one of them and both in `make test`. Both
stages run in full on stop 52's CI put it 4 minutes over its 35-minute budget.

    VERSIONED_TEST_SEED=1 make test-fresh ONE_LAYOUT=1   # the layout seed 1 picks
    make test-fresh                                        # every layout
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.run_seed import run_seed
from versioned.layouts.base import layouts

ENV_ONE_LAYOUT = "VERSIONED_TEST_ONE_LAYOUT"
LAYOUTS = tuple(each.name for each in layouts())
_SAID = pytest.StashKey[str]()


def layout_of_the_run(offset: int) -> str:
    """The layout this run's seed picks, ``offset`` places on (offsets 0 and 1 differ)."""
    return LAYOUTS[(run_seed()[0] + offset) % len(LAYOUTS)]


def layout_param(param: str, folder: Path) -> Callable[[pytest.Item], str | None]:
    """What `keep_one_layout` takes: the layout a test of ``folder`` runs, from its
    parameter ``param`` (None for a test elsewhere or without it)."""

    def of(item: pytest.Item) -> str | None:
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get(param) if callspec is not None else None
        return name if item.path.is_relative_to(folder) else None

    return of


def keep_one_layout(
    config: pytest.Config,
    items: list[pytest.Item],
    offset: int,
    layout_of: Callable[[pytest.Item], str | None],
) -> list[pytest.Item]:
    """``items`` without the cases `ENV_ONE_LAYOUT` leaves to other runs (reported as
    deselected, and in a line under pytest's count); all of them when it is not set.
    ``layout_of``: an item's layout, None for an item of another suite (it stays)."""
    if os.environ.get(ENV_ONE_LAYOUT) != "1":
        return items
    chosen = layout_of_the_run(offset)
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        layout = layout_of(item)
        postgres = _starts_postgres(item)
        ours = layout is not None
        (dropped if ours and (layout != chosen or postgres) else kept).append(item)
    config.hook.pytest_deselected(items=dropped)
    config.stash[_SAID] = (
        f"{ENV_ONE_LAYOUT}=1: the {chosen} layout, no PostgreSQL (run seed {run_seed()[0]}); "
        f"{len(dropped)} cases left to other runs"
    )
    return kept


def _starts_postgres(item: pytest.Item) -> bool:
    """Whether ``item`` starts PostgreSQL (the rule of the ``postgres`` marker, which
    tests/conftest.py adds after this runs)."""
    from tests.conftest import POSTGRES_FIXTURES

    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    names = set(getattr(item, "fixturenames", ()))
    return bool(names & POSTGRES_FIXTURES) or params.get("catalog_url") == "postgres"


def said(config: pytest.Config) -> str:
    """The line `keep_one_layout` left for pytest's report ("" when it kept everything)."""
    return config.stash.get(_SAID, "")
