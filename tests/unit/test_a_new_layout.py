"""A new layout is one folder plus one registry line, and a layout that has not built an
operation says so (issue 29).

The throw-away layout in ``tests/table/throwaway/`` can create a table and nothing else; its
plugin is the registry line. The table behaviour suite runs for it in a child pytest (its own
SparkSession): every behaviour must fail with `NotSupportedError` (in the test or in a
fixture that builds its table), none may pass, and none may fail otherwise: a wrong answer,
or code that loaded the layout's engine without asking its capabilities
(`ThrowawayLayout.engine` raises AssertionError), or that fell into another layout's path.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from tests.support.jvm_processes import JvmProcesses, script_env
from tests.table.throwaway.layout import NAME

ROOT = Path(__file__).resolve().parents[2]
REFUSAL = f"the {NAME} layout does not support"
"""How `NotSupportedError` reads when something wraps it: the CLI's one-line error (exit 2),
a streaming query's failure around the sink's."""
LAYOUT_FREE = {
    "test_key_scope.py::test_describe_says_the_key_scope_and_why": "describe reads the "
    "catalog only",
    "test_stream_sink.py::test_bad_sink_arguments_fail_when_the_sink_is_made": "the sink's "
    "arguments are checked before the layout is asked",
}
"""Behaviours that never reach a layout: they pass for any layout that can create a table."""


def test_every_table_behaviour_of_an_unbuilt_layout_fails_with_not_supported(
    jvm_processes: JvmProcesses, tmp_path: Path
) -> None:
    outcomes = tmp_path / "outcomes.jsonl"
    done = jvm_processes.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/table",
            "-p",
            "tests.table.throwaway.register",
            "-p",
            "no:cacheprovider",
            "-m",
            "not soak",
            "-k",
            NAME,
            "-q",
            "--no-header",
            "-rN",
        ],
        cwd=ROOT,
        env=script_env(VERSIONED_TEST_OUTCOMES=str(outcomes)),
        timeout=900,
    )
    assert outcomes.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    by_test: dict[str, list[dict[str, str | None]]] = defaultdict(list)
    for line in outcomes.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        by_test[record["test"]].append(record)
    assert len(by_test) >= 50, f"only {len(by_test)} behaviours ran: {done.stdout[-2000:]}"
    wrong = {}
    for test, phases in by_test.items():
        assert f"[{NAME}" in test or f"-{NAME}" in test, test
        free = test.split("/")[-1].split("[")[0] in LAYOUT_FREE
        failed = [p for p in phases if p["outcome"] == "failed"]
        if not failed:
            if not free:
                wrong[test] = "passed"
        elif free:
            wrong[test] = f"failed, but it never reaches a layout: {failed[0]['message']}"
        elif failed[0]["error"] != "NotSupportedError" and REFUSAL not in str(failed[0]["message"]):
            wrong[test] = f"{failed[0]['when']}: {failed[0]['error']}: {failed[0]['message']}"
    assert wrong == {}
