"""Totals of `make soak-long`'s history checks: ``python -m tests.faults.totals LOG`` reads the
JSON lines the runs appended (`test_history.py`, ``$VERSIONED_HISTORY_LOG``) and prints each
run's line and the sums: runs, operations, connection kills, commits, problems."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str) -> int:
    runs = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for r in runs:
        print(r["summary"])
    problems = sum(len(r["problems"]) for r in runs)
    print(
        f"{len(runs)} runs: {sum(r['ops'] for r in runs)} operations, "
        f"{sum(r['faults'] for r in runs)} connection kills, "
        f"{sum(r['commits'] for r in runs)} commits, {problems} problems"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
