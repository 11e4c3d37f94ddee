"""Results documents: JSON files under the output folder, stamped with what they were measured on.

A benchmark run for several sizes keeps the runs of other sizes already in its document
(`ResultsFile`), so that a 10M run does not drop the 1M one.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness.record import machine, stamp


def write_json(path: Path, doc: Any, *, indent: int = 1, newline: bool = True) -> None:
    """Write ``doc`` as JSON (values JSON does not know as their ``str``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent, default=str) + ("\n" if newline else ""))


def read_json(path: Path, default: Any) -> Any:
    """The JSON document at ``path``, or ``default`` if there is none."""
    return json.loads(path.read_text()) if path.exists() else default


def rerender(out: Path, name: str, render: Callable[[Any, Path], None]) -> None:
    """``--report-only``: render ``out/<name>.json`` again, measuring nothing."""
    render(read_json(out / f"{name}.json", None), out)


def save(out: Path, name: str, doc: dict[str, Any], render: Callable[[Any, Path], None]) -> None:
    """Stamp ``doc`` (commit, date), write it as ``out/<name>.json`` and render its report."""
    doc["stamp"] = stamp()
    write_json(out / f"{name}.json", doc)
    render(doc, out)


def command_line(module: str, argv: list[str] | None) -> str:
    """``python -m module ARGS`` as the benchmark was asked to run (``argv``, else the
    process's own arguments)."""
    return shlex.join(["python", "-m", module, *(sys.argv[1:] if argv is None else argv)])


def _rows(run: dict[str, Any]) -> Any:
    return run["rows"]


class ResultsFile:
    """``{out}/{name}.json``: ``{"machine", ..., "runs": [...], "stamp"}``, one run per key
    (by default the table size ``rows``), runs of earlier invocations kept."""

    def __init__(self, out: Path, name: str, key: Callable[[dict[str, Any]], Any] = _rows) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / f"{name}.json"
        self.previous: dict[str, Any] = read_json(self.path, {"runs": []})
        self._key = key
        self.runs = {key(r): r for r in self.previous.get("runs", [])}

    def add(self, run: dict[str, Any], spark: Any = None, **fields: Any) -> dict[str, Any]:
        """Stamp ``run`` (`stamp`: commit, date), keep it in place of an earlier run of its
        key and write the document (the `machine`, ``fields``, the runs, the latest run's
        stamp); returns it."""
        run["stamp"] = stamp()
        self.runs[self._key(run)] = run
        doc = {
            "machine": machine(spark),
            **fields,
            "runs": [self.runs[k] for k in sorted(self.runs)],
            "stamp": run["stamp"],
        }
        write_json(self.path, doc)
        return doc
