"""Fixtures of the page's tests: a catalog with one streamed table per layout, no Spark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.layout_profiles import LAYOUTS
from tests.ui.catalogs import fill, make_table

pytest.importorskip("starlette", reason="the ui extra is not installed: pip install '.[ui]'")


@pytest.fixture(params=LAYOUTS)
def layout(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def filled(tmp_path: Path, layout: str) -> Iterator[Any]:
    """alice's catalog (SQLite) holding ``d.ev`` in ``layout``, filled by `fill`."""
    from versioned.api.catalog import connect

    cat = connect(warehouse=str(tmp_path / "wh"), user="alice")
    make_table(cat, "d.ev", layout)
    fill(cat, "d.ev")
    yield cat
    cat.close()


@pytest.fixture
def as_bob(filled: Any) -> Iterator[Any]:
    """The same catalog and warehouse, opened as bob (no grant)."""
    from versioned.api.catalog import connect

    cat = connect(
        catalog=filled.settings.catalog_url, warehouse=filled.settings.warehouse, user="bob"
    )
    yield cat
    cat.close()
