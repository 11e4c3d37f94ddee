"""The table behaviour suite: what a user sees of a table, written once, run for every layout.

Every test here takes the ``layout`` fixture (directly or through a fixture), which runs it
once per registered layout (ids ``versioned``, ``acid``), and creates its tables with
``cat.create_table(..., layout=layout)``. A test that does not take it is a collection error.

A layout that cannot pass a test says so with a strict marker, in the style of ibis:

* ``@pytest.mark.notimpl(["acid"], reason="...")``: not built yet; expected to raise
  `NotSupportedError` unless ``raises=`` names another exception.
* ``@pytest.mark.never(["acid"], reason="...")``: by design (e.g. the test inspects
  version-partition files); ``raises=`` is optional.

Both become ``xfail(strict=True)`` for that layout's parameter only, so a test that starts
passing fails the run until its marker goes. A layout whose engine cannot even create a table
(``not layout_of(name).supports("create")``) has every test
xfailed with ``raises=NotSupportedError``: a failure for another reason is still reported.
That rule disappears by itself when the layout gets its capabilities, and the per-test
markers take over.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.one_layout import keep_one_layout, layout_of_the_run, layout_param, said
from tests.support.run_seed import run_seed
from versioned.errors import NotSupportedError
from versioned.layouts.base import layout_of, layouts

LAYOUTS = tuple(each.name for each in layouts())
HERE = Path(__file__).resolve().parent
MARKERS = ("notimpl", "never")


@pytest.fixture(scope="session", params=LAYOUTS)
def layout(request: pytest.FixtureRequest) -> str:
    """The name of the layout the test's tables use (session scope: module fixtures may
    build tables with it, and the run groups the tests of one layout together)."""
    name: str = request.param
    return name


def _unbuilt(name: str) -> pytest.MarkDecorator | None:
    """The xfail of every test of a layout that cannot create tables yet."""
    if layout_of(name).supports("create"):
        return None
    return pytest.mark.xfail(
        raises=NotSupportedError,
        strict=True,
        reason=f"the {name} layout's engine is not built: create_table refuses",
    )


def _marked(item: pytest.Item, name: str) -> pytest.MarkDecorator | None:
    """The xfail a ``notimpl`` or ``never`` marker of the test asks for the layout ``name``."""
    for kind in MARKERS:
        for mark in item.iter_markers(kind):
            names = mark.args[0] if mark.args else None
            reason = mark.kwargs.get("reason")
            if not isinstance(names, list | tuple) or not reason:
                raise pytest.UsageError(
                    f"{item.nodeid}: use @pytest.mark.{kind}([layout, ...], reason='...')"
                )
            unknown = sorted(set(names) - set(LAYOUTS))
            if unknown:
                raise pytest.UsageError(f"{item.nodeid}: {kind} names unknown layouts {unknown}")
            if name in names:
                default = NotSupportedError if kind == "notimpl" else None
                return pytest.mark.xfail(
                    raises=mark.kwargs.get("raises", default),
                    strict=True,
                    reason=f"{kind} for the {name} layout: {reason}",
                )
    return None


def _other_run(item: pytest.Item, name: str) -> pytest.MarkDecorator | None:
    """The skip of a ``layout_by_seed`` soak test for the layouts this run leaves to others.

    The soak's longest multi-process runs (minutes each) take one layout a run, chosen by the
    run's seed (from the commit: tests/support/run_seed.py), so consecutive commits alternate
    them; `VERSIONED_TEST_SEED=N make soak` runs the other one.
    """
    mark = item.get_closest_marker("layout_by_seed")
    if mark is None:
        return None
    if not item.get_closest_marker("soak"):
        raise pytest.UsageError(f"{item.nodeid}: layout_by_seed is for soak tests only")
    chosen = layout_of_the_run(mark.args[0] if mark.args else 0)
    if name == chosen:
        return None
    return pytest.mark.skip(
        reason=f"this run's seed ({run_seed()[0]}) runs it for the {chosen} layout; "
        f"a run of another seed runs {name}"
    )


def pytest_report_collectionfinish(config: pytest.Config) -> str:
    """What `keep_one_layout` left out, under pytest's count of the collected tests."""
    return said(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Apply the layout markers; refuse a test of this suite that ignores the layout; keep
    one layout when $VERSIONED_TEST_ONE_LAYOUT asks (tests/support/one_layout.py)."""
    items[:] = keep_one_layout(config, items, 0, layout_param("layout", HERE))
    without_layout = []
    for item in items:
        if not item.path.is_relative_to(HERE):
            continue
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("layout") if callspec is not None else None
        if name is None:
            without_layout.append(item.nodeid)
            continue
        xfail = _unbuilt(name) or _marked(item, name)
        if xfail is not None:
            item.add_marker(xfail)
        skip = _other_run(item, name)
        if skip is not None:
            item.add_marker(skip)
    if without_layout:
        raise pytest.UsageError(
            "every test of tests/table runs for every layout; these do not take the "
            f"`layout` fixture: {', '.join(without_layout)}"
        )
