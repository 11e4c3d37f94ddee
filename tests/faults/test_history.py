"""The mixed-load history check (`tests.faults.history`): writers, a compactor, vacuum and
readers at random snapshots on one table while every catalog connection is killed at random
moments; the history must replay on a plain model (snapshot isolation, nothing lost, nothing
twice). One seed a run (`make faults`); `make soak-long` runs many and totals them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.faults.conftest import FaultyCatalog
from tests.faults.history import check, run, summary
from tests.support.layout_profiles import LAYOUTS
from versioned.api.catalog import Catalog, connect

pytestmark = pytest.mark.faults

LOG = os.environ.get("VERSIONED_HISTORY_LOG")
"""`make soak-long`'s log of every run (read on import: tests/conftest.py clears the
VERSIONED_* environment for each test)."""


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_mixed_load_under_connection_kills_replays_on_the_model(
    spark: Any, faulty: FaultyCatalog, seed: int, layout: str, tmp_path: Path
) -> None:
    opened: list[Catalog] = []

    def open_catalog() -> Catalog:
        cat = connect(catalog=faulty.url, warehouse=str(tmp_path / "wh"), spark=spark, user="alice")
        opened.append(cat)
        return cat

    try:
        history = run(open_catalog, faulty.terminate_backends, layout=layout, seed=seed)
    finally:
        for cat in opened:
            cat.close()
    line = summary(history)
    print(line)
    for op in history.ops:
        if op.error and os.environ.get("HISTORY_DEBUG"):
            print(op.id, op.kind, op.error[:600])
    problems = check(history)
    if LOG:
        with open(LOG, "a") as out:
            ops = len(history.ops)
            out.write(
                json.dumps(
                    {
                        "summary": line,
                        "ops": ops,
                        "faults": history.faults,
                        "commits": len(history.commits),
                        "errors": [f"{o.kind} {o.error}" for o in history.ops if o.error],
                        "problems": problems,
                    }
                )
                + "\n"
            )
    assert problems == [], line + "\n" + "\n".join(problems)
    assert history.faults > 0, "no fault struck: the run proves nothing"
    written = [o for o in history.ops if o.kind in ("upsert", "stream", "mutate") and o.ok]
    read = [o for o in history.ops if o.kind == "read" and o.ok]
    assert written and read, line
