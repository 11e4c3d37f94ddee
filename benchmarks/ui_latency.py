"""How fast ``versioned ui`` answers on a big catalog: 100 tables x 1,000 commits (issue 31).

Builds the catalog (`benchmarks.ui_catalog` says how), then times every page through
Starlette's test client (the whole application in process, without a socket): the overview,
a table page and its two charts,

* *warm*: the tables did not commit since the page last read them (their rows come from the
  page's per-commit cache; streaming progress, transactions and locks are read every time);
* *after a commit*: the table just committed (one streamed transaction), so its page reads
  its metadata again and redraws its charts;
* *cold*: a page just started, nothing read yet (the first request after ``versioned ui``).

The overview reads every table's commits, partition summaries (stored by each commit) and
streaming progress in four catalog queries, whatever the cache holds.

Median and 95th percentile of ``--requests`` requests each (cold: ``--cold`` runs, each on a
fresh application). Target: every page under 300 ms. Run: ``make bench-ui`` (writes
``benchmarks/results/ui_latency.{json,md}``); ``--report-only`` re-renders the report.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.markdown import table
from benchmarks.harness.record import machine, package_version
from benchmarks.harness.results import command_line, rerender, save
from benchmarks.ui_catalog import BuiltCatalog, build, commit_one, hold_lock

NAME = "ui_latency"
TARGET_MS = 300.0
PAGES = ("overview", "table", "commits.svg", "partitions.svg")


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--commits", type=int, default=1000, help="commits per table (about)")
    p.add_argument("--templates", type=int, default=10, help="tables streamed for real")
    p.add_argument("--requests", type=int, default=30, help="timed requests per page and case")
    p.add_argument("--cold", type=int, default=3, help="cold runs (fresh application each)")
    p.add_argument("--out", default="benchmarks/results")
    p.add_argument("--work", default=None, help="scratch folder (default: in /dev/shm)")
    p.add_argument("--report-only", action="store_true", help="re-render ui_latency.md")
    return p


def main(argv: list[str] | None = None) -> None:
    """Build the catalog, time the pages, write the results."""
    args = parser().parse_args(argv)
    out = Path(args.out)
    if args.report_only:
        rerender(out, NAME, render)
        return
    work = (
        Path(args.work)
        if args.work
        else Path(tempfile.mkdtemp(prefix="ui-latency-", dir=_scratch()))
    )
    try:
        built = build(work, tables=args.tables, commits=args.commits, templates=args.templates)
        print(f"built in {built.stream_seconds:.0f} s + {built.copy_seconds:.0f} s", flush=True)
        timings = measure(built, requests=args.requests, cold=args.cold)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    doc = {
        "command": command_line(f"benchmarks.{NAME}", argv),
        "machine": {**machine(), **{p: package_version(p) for p in ("starlette", "matplotlib")}},
        "catalog": {
            "tables": len(built.tables),
            "templates": built.templates,
            "commits_per_table": timings.pop("commits_per_table"),
            "files_per_table": timings.pop("files_per_table"),
            "warm_up_s": timings.pop("warm_up_s"),
            "first_overview_after_warm_up_ms": timings.pop("first_overview_after_warm_up_ms"),
            "stream_seconds": round(built.stream_seconds, 1),
            "copy_seconds": round(built.copy_seconds, 1),
            "where": str(work.parent),
        },
        "requests": args.requests,
        "cold_runs": args.cold,
        "target_ms": TARGET_MS,
        "timings": timings,
    }
    save(out, NAME, doc, render)


def _scratch() -> str | None:
    """/dev/shm when there is one: the catalog is built in memory (a commit's fsync would
    otherwise make the build minutes longer); the page reads it from the page cache either
    way."""
    return "/dev/shm" if os.path.isdir("/dev/shm") else None


def measure(built: BuiltCatalog, *, requests: int, cold: int) -> dict[str, Any]:
    """Milliseconds per page and case (see the module's docstring)."""
    from starlette.testclient import TestClient

    import versioned
    from versioned.ui.app import create_app

    cat = versioned.connect(catalog=built.catalog_url, warehouse=built.warehouse, user="bench")
    shown = built.templates[0]
    paths = {
        "overview": "/",
        "table": f"/table/{shown}",
        "commits.svg": f"/table/{shown}/commits.svg",
        "partitions.svg": f"/table/{shown}/partitions.svg",
    }
    table = cat.table(shown)
    hold_lock(cat, shown)  # the page shows an open transaction and its lock
    facts = {
        "commits_per_table": len(table.history()),
        "files_per_table": table.metadata("files").num_rows,
    }
    results: dict[str, Any] = {page: {} for page in PAGES}
    for page, path in paths.items():
        runs = []
        for _ in range(cold):
            client = TestClient(create_app(cat))
            runs.append(_time(client, path))
        results[page]["cold"] = _summary(runs)
    app = create_app(cat)
    started = time.perf_counter()
    app.state.warm_up()  # what `versioned ui` runs in the background as it starts
    warm_up_s = time.perf_counter() - started
    client = TestClient(app)
    first_overview = _time(client, paths["overview"])
    for path in paths.values():
        client.get(path)
    for page, path in paths.items():
        results[page]["warm"] = _summary([_time(client, path) for _ in range(requests)])
    after: dict[str, list[float]] = {page: [] for page in PAGES}
    day = table.metadata("partitions").to_pylist()[0]["values"][0][1]
    for i in range(requests):
        for page, path in paths.items():
            commit_one(cat, shown, day, f"{10_000_000 + i},late {page}")
            after[page].append(_time(client, path))
    for page in PAGES:
        results[page]["after_commit"] = _summary(after[page])
    cat.close()
    return {
        **facts,
        "warm_up_s": round(warm_up_s, 2),
        "first_overview_after_warm_up_ms": round(first_overview, 1),
        **results,
    }


def _time(client: Any, path: str) -> float:
    """Milliseconds ``client`` takes to GET ``path`` (which must answer 200)."""
    started = time.perf_counter()
    answer = client.get(path)
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != 200:
        raise RuntimeError(f"{answer.url} answered {answer.status_code}")
    return elapsed


def _summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {
        "n": len(ms),
        "median_ms": round(statistics.median(ms), 1),
        "p95_ms": round(p95, 1),
        "max_ms": round(ordered[-1], 1),
    }


def render(doc: Any, out: Path) -> None:
    """``ui_latency.md`` from the results document."""
    c = doc["catalog"]
    lines = [
        "# `versioned ui`: page latency",
        "",
        f"{c['tables']} tables of {c['commits_per_table']:,} commits each "
        f"({c['files_per_table']:,} live files each, no compaction), SQLite catalog. "
        f"Target: every page under {doc['target_ms']:.0f} ms.",
        "",
        "How the catalog was built: "
        f"{len(c['templates'])} tables streamed with the streaming ingest client "
        f"({c['stream_seconds']:.0f} s: real commits of real files, updates, dead letters, an "
        f"`alter` commit, recorded stream batches; half of them acid), the other "
        f"{c['tables'] - len(c['templates'])} copies of those made row by row in the catalog "
        f"database ({c['copy_seconds']:.0f} s; their file records name the templates' files, so "
        "their dead letters are real files to read). Built and read in "
        f"`{c['where']}` (benchmarks/ui_catalog.py).",
        "",
        f"Each page through Starlette's test client (the whole application, no socket); "
        f"median and 95th percentile of {doc['requests']} requests, cold of "
        f"{doc['cold_runs']} fresh applications; milliseconds.",
        "",
        *table(
            [
                "page",
                "warm median",
                "warm p95",
                "after a commit median",
                "after a commit p95",
                "cold median",
                "cold max",
                "every case under target",
            ],
            "lrrrrrrl",
            [
                [
                    f"`{page}`",
                    t["warm"]["median_ms"],
                    t["warm"]["p95_ms"],
                    t["after_commit"]["median_ms"],
                    t["after_commit"]["p95_ms"],
                    t["cold"]["median_ms"],
                    t["cold"]["max_ms"],
                    "yes"
                    if max(t["warm"]["p95_ms"], t["after_commit"]["p95_ms"], t["cold"]["max_ms"])
                    < doc["target_ms"]
                    else "no",
                ]
                for page, t in doc["timings"].items()
            ],
        ),
        "",
        "- *warm*: no table committed since the page last read it: a table page's per-commit "
        "rows (history, partitions, dead letters, charts) come from the page's cache; stream "
        "progress, open transactions and locks are read on every request. The overview reads "
        "every table's commits, partition summaries and stream progress in four catalog "
        "queries on every request.",
        "- *after a commit*: the table shown committed just before each request (one streamed "
        "transaction, not timed): its rows are read again and its charts redrawn.",
        "- *cold*: the first request of a freshly started page that has read nothing yet. "
        "Every commit stored its partitions' summaries, so the overview computes nothing "
        "(the background warm-up of `versioned ui` only computes partitions left without a "
        f"current summary, by an older release or a property change: {c['warm_up_s']:.1f} s "
        "here; the first overview after it took "
        f"{c['first_overview_after_warm_up_ms']:.0f} ms).",
        "",
        f"Machine: {doc['machine']['cpu']}, {doc['machine']['cores']} cores, shared with other "
        f"work; Python {doc['machine']['python']}, starlette {doc['machine']['starlette']}, "
        f"matplotlib {doc['machine']['matplotlib']}. Commit {doc['stamp']['commit'][:10]}"
        f"{' (dirty)' if doc['stamp']['dirty'] else ''}, {doc['stamp']['date']}.",
        "",
        f"Command: `{doc['command']}`",
    ]
    notes = out / f"{NAME}_notes.md"
    if notes.exists():
        lines += ["", notes.read_text().rstrip()]
    (out / f"{NAME}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
