"""A pytest plugin (``-p tests.table.throwaway.register``): the registry line of the
throw-away layout, and a record of how each of its tests ended.

Every test's outcome per phase goes, as JSON lines, to the file named by
``VERSIONED_TEST_OUTCOMES``: the test, the phase, passed / failed / skipped, and the name of
the exception a failure raised.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator
from typing import Any

import pytest

from tests.table.throwaway.layout import LAYOUT
from versioned.layouts.base import register

register(LAYOUT)
OUTCOMES = os.environ.get("VERSIONED_TEST_OUTCOMES")  # read now: tests may clear VERSIONED_*


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None]:
    outcome = yield
    report = outcome.get_result()
    if OUTCOMES is None:
        return
    error = call.excinfo.type.__name__ if call.excinfo is not None else None
    message = str(call.excinfo.value)[:4000] if call.excinfo is not None else None
    with open(OUTCOMES, "a", encoding="utf-8") as out:
        out.write(
            json.dumps(
                {
                    "test": item.nodeid,
                    "when": report.when,
                    "outcome": report.outcome,
                    "error": error,
                    "message": message,
                }
            )
            + "\n"
        )
