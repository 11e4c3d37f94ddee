"""The Spark lines pyproject promises are the ones CI runs: `make test` on the newest PySpark
the main virtualenv resolves, `make test-oldest-spark` (tests/table) on the oldest release of
the lowest line pyproject allows."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _pyspark_requirement() -> str:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    found = [d for d in project["dependencies"] if re.match(r"pyspark\b", d)]
    assert len(found) == 1, found
    return str(found[0])


def _oldest_pin() -> str:
    match = re.search(r"^OLDEST_PYSPARK := (\S+)$", (REPO / "Makefile").read_text(), re.M)
    assert match, "Makefile lost OLDEST_PYSPARK"
    return match.group(1)


def test_the_oldest_pin_is_on_the_lowest_line_pyproject_allows() -> None:
    requirement = _pyspark_requirement()
    lower = re.search(r">=\s*(\d+)\.(\d+)", requirement)
    assert lower, f"pyproject's {requirement!r} has no lower bound"
    pin = _oldest_pin().split(".")
    assert (pin[0], pin[1]) == lower.groups(), (
        f"pyproject promises {requirement!r}; CI tests the oldest line at {_oldest_pin()}"
    )


def test_ci_runs_the_behaviour_suite_on_the_oldest_pin() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"stage test-oldest-spark make test-oldest-spark\b", ci), (
        ".ci/run has no test-oldest-spark stage"
    )
    target = re.search(
        r"^test-oldest-spark:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M
    )
    assert target and "tests/table" in target.group(1), "the target does not run tests/table"
