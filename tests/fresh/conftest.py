"""The fresh-process tier's hooks: each step's outcome, for `_in_order` to read; one layout a
run when $VERSIONED_TEST_ONE_LAYOUT asks (tests/support/one_layout.py: the other layout than
the one `make test-oldest-spark` runs on the same seed)."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from tests.support.one_layout import keep_one_layout, layout_param, said

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, Any, Any]:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = keep_one_layout(config, items, 1, layout_param("wh", HERE))


def pytest_report_collectionfinish(config: pytest.Config) -> str:
    return said(config)
