"""The fixed cost of a scheduled job: a new process's `versioned upsert` of a 10-row file,
against a new process that only starts the same SparkSession and stops it.

Run: ``.venv/bin/python -m benchmarks.scheduled_job --runs 5`` (about 3 minutes on 2 cores;
writes ``scheduled_job.{json,md}`` under ``--out``, default benchmarks/results). Issue 44.

Per layout, on a table that already holds rows (created and loaded untimed, as a scheduled
job finds it), the two kinds of process alternate ``--runs`` times each:

* **upsert**: ``versioned upsert db.t feed.csv -q``, a CSV of 10 rows (5 updates of stored keys,
  5 new keys), in a new process with a scheduled job's environment (no ``VERSIONED_*``,
  ``SPARK_*`` or ``PYSPARK_*`` settings), through `benchmarks.scheduled_job_probe`, which
  times its phases: imports, catalog, Spark start, the operation (and the Spark jobs in it);
* **start only**: a new process that imports PySpark, starts a SparkSession with the master
  and settings versioned starts its own with, and stops it.

The fixed cost is the upsert's median wall time minus the start-only median (target: 3 s or
less on both layouts). Each process's wall time is split into: interpreter start (until the
probe's first line), imports, catalog, Spark start, the operation, the rest of the command,
and the exit (the JVM's shutdown). ``others``: the share of the cores other processes used
while it ran (above 10 % marks a run provisional).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import log, machine, read_json, stamp, write_json
from benchmarks.harness.meter import system_busy
from versioned.engine.spark.class_archive import ENV_CLASS_ARCHIVE, archive_dir, make_archive

LAYOUTS = ("versioned", "acid")
ROWS = 10
TARGET_S = 3.0
BUSY = 0.10
COLUMNS = "id BIGINT, v STRING, amount DOUBLE, p STRING"
PHASES = ("interpreter", "imports", "catalog", "spark_start", "operation", "rest", "exit")


def _env(home: Path, archive: str) -> dict[str, str]:
    """A scheduled job's environment; ``archive``: its ``VERSIONED_CLASS_ARCHIVE``."""
    dropped = ("VERSIONED_", "PYSPARK_", "SPARK_", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env["HOME"] = str(home)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    env[ENV_CLASS_ARCHIVE] = archive
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``argv`` to its end: wall seconds and the share of the cores others used."""
    cores = os.cpu_count() or 1
    busy = system_busy()
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return {"seconds": seconds, "busy_s": system_busy() - busy, "cores": cores}


def _feed(path: Path, start: int) -> str:
    """5 updates of stored keys (start-5 .. start-1) and 5 new keys (start .. start+4)."""
    lines = ["op,id,v,amount,p"]
    for key in range(start - ROWS // 2, start + ROWS // 2):
        lines.append(f"U,{key},v{key},{key * 1.5},{'xyz'[key % 3]}")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _script() -> str:
    return str(Path(sys.executable).with_name("versioned"))


def _breakdown(record: dict[str, Any], wall: float) -> dict[str, float]:
    """A process's wall time by phase (`PHASES`), from its probe record: the interpreter's
    start and bare exit (``python -c pass``), the probe's phases, and the exit after them
    (the interpreter's exit stops the JVM)."""
    phases = record["phases"]
    in_command = sum(phases.get(k, 0.0) for k in ("catalog", "operation"))
    python_start = record["python_start"]
    spark_start = phases.get("spark_start", 0.0)  # inside the operation: it starts Spark
    return {
        "interpreter": python_start,
        "imports": phases["imports"],
        "catalog": phases.get("catalog", 0.0),
        "spark_start": spark_start,
        "operation": max(0.0, phases.get("operation", 0.0) - spark_start),
        "rest": max(0.0, phases["command"] - in_command),
        "exit": max(0.0, wall - record["since_interpreter"] - python_start),
    }


def _python_start(cwd: Path, env: dict[str, str]) -> float:
    """Median wall time of ``python -c pass`` (the interpreter's start and exit)."""
    times = [_run([sys.executable, "-c", "pass"], cwd, env)["seconds"] for _ in range(5)]
    return statistics.median(times)


def run_layout(
    layout: str, root: Path, runs: int, python_start: float, archive: str
) -> dict[str, Any]:
    """Alternate start-only and upsert processes on one layout's table; their records.
    ``archive``: the processes' ``VERSIONED_CLASS_ARCHIVE`` (``off``, or the folder)."""
    base = root / f"{layout}-{'none' if archive == 'off' else 'archive'}"
    for sub in ("cwd", "home", "feeds", "probes"):
        (base / sub).mkdir(parents=True)
    env = _env(base / "home", archive)
    cwd = base / "cwd"
    cli = [
        "--warehouse", str(base / "wh"), "--catalog", f"sqlite:///{base / 'catalog.db'}",
        "--user", "bench",
    ]  # fmt: skip
    setup = [
        [*cli, "create-table", "bench.t", "--columns", COLUMNS,
         "--primary-key", "id", "--partition-by", "p", "--op-code-column", "op",
         "--layout", layout],
        [*cli, "upsert", "bench.t", _feed(base / "feeds" / "load.csv", 1000), "-q"],
    ]  # fmt: skip
    for args in setup:
        _run([_script(), *args], cwd, env)
    conf = base / "spark_conf.json"
    conf.write_text(json.dumps(_session_settings(archive)))
    upserts: list[dict[str, Any]] = []
    starts: list[dict[str, Any]] = []
    for i in range(runs):
        probe = base / "probes" / f"start-{i}.json"
        measured = _run(
            [sys.executable, "-m", "benchmarks.scheduled_job_probe", str(probe),
             "--start-only", str(conf)],
            cwd, env,
        )  # fmt: skip
        starts.append({**measured, "record": json.loads(probe.read_text())})
        feed = _feed(base / "feeds" / f"batch-{i}.csv", 2000 + i * ROWS)
        probe = base / "probes" / f"upsert-{i}.json"
        measured = _run(
            [sys.executable, "-m", "benchmarks.scheduled_job_probe", str(probe), "--",
             *cli, "upsert", "bench.t", feed, "-q"],
            cwd, env,
        )  # fmt: skip
        record = json.loads(probe.read_text())
        record["python_start"] = python_start
        upserts.append({**measured, "record": record})
        log(
            f"{layout}, class archive {archive}: run {i + 1}/{runs}: start only "
            f"{starts[-1]['seconds']:.2f} s, upsert {measured['seconds']:.2f} s"
        )
    mapped = "none" if archive == "off" else "archive"
    return {"layout": layout, "archive": mapped, "upserts": upserts, "starts": starts}


def _session_settings(archive: str) -> dict[str, Any]:
    """The master and settings `get_or_create_spark` starts a command's session with, under
    ``VERSIONED_CLASS_ARCHIVE=archive``."""
    from versioned.engine.spark.session import session_conf

    saved = os.environ.get(ENV_CLASS_ARCHIVE)
    os.environ[ENV_CLASS_ARCHIVE] = archive
    try:
        return {"master": "local[*]", "conf": session_conf(None, level=None)}
    finally:
        if saved is None:
            del os.environ[ENV_CLASS_ARCHIVE]
        else:
            os.environ[ENV_CLASS_ARCHIVE] = saved


def summarize(layout_run: dict[str, Any], python_start: float) -> dict[str, Any]:
    """Medians, the fixed cost and the phase breakdown of one layout's runs."""
    upsert_s = [u["seconds"] for u in layout_run["upserts"]]
    start_s = [s["seconds"] for s in layout_run["starts"]]
    cores = layout_run["upserts"][0]["cores"]
    every = layout_run["upserts"] + layout_run["starts"]
    own = [_own_cpu_share(e) for e in every]
    breakdowns = [_breakdown(u["record"], u["seconds"]) for u in layout_run["upserts"]]
    start_phases = [s["record"]["phases"] for s in layout_run["starts"]]
    jobs: dict[str, list[float]] = {}
    for u in layout_run["upserts"]:
        for job in u["record"]["spark_jobs"]:
            jobs.setdefault(job["name"], []).append(job["seconds"])
    return {
        "layout": layout_run["layout"],
        "archive": layout_run["archive"],
        "runs": len(upsert_s),
        "upsert_median_s": statistics.median(upsert_s),
        "upsert_min_s": min(upsert_s),
        "start_only_median_s": statistics.median(start_s),
        "start_only_min_s": min(start_s),
        "fixed_cost_s": statistics.median(upsert_s) - statistics.median(start_s),
        "python_start_s": python_start,
        "phases_median_s": {p: statistics.median(b[p] for b in breakdowns) for p in PHASES},
        "start_only_phases_median_s": {
            k: statistics.median(p[k] for p in start_phases) for k in start_phases[0]
        },
        "spark_jobs_median_s": {name: statistics.median(times) for name, times in jobs.items()},
        "spark_jobs_per_upsert": statistics.median(
            len(u["record"]["spark_jobs"]) for u in layout_run["upserts"]
        ),
        "others": max(own),
        "cores": cores,
    }


def _own_cpu_share(entry: dict[str, Any]) -> float:
    """Busy share of all cores during a run (its own process included: an upper bound)."""
    return float(entry["busy_s"] / (entry["seconds"] * entry["cores"]))


def _name(s: dict[str, Any]) -> str:
    return f"{s['layout']}, {'with' if s.get('archive') == 'archive' else 'no'} class archive"


def render(report: dict[str, Any]) -> str:
    """``scheduled_job.md``."""
    lines = [
        "# The fixed cost of a scheduled job",
        "",
        f"Generated by `python -m benchmarks.scheduled_job --runs {report['runs']}` on "
        f"{report['stamp']['date']} (commit {report['stamp'].get('commit', '?')[:10]}): "
        f"{report['machine']['cores']} cores, Java {report['machine'].get('java', '?')}. "
        f"A new process's `versioned upsert` of a {ROWS}-row CSV into a table that holds rows, "
        "against a new process that starts the same SparkSession (same settings, the class "
        "archive too when there is one) with PySpark alone and stops it; medians of "
        f"{report['runs']} alternating runs of each. Target: at most {TARGET_S:.0f} s more "
        "than the start alone. *No class archive*: a new machine's commands before `versioned "
        "init` (or with `VERSIONED_CLASS_ARCHIVE=off`); *with*: after it.",
        "",
        "| layout | upsert | start only | fixed cost | target met | machine busy (max) |",
        "|---|---|---|---|---|---|",
    ]
    for s in report["layouts"]:
        met = "yes" if s["fixed_cost_s"] <= TARGET_S else "**no**"
        lines.append(
            f"| {_name(s)} | {s['upsert_median_s']:.2f} s | {s['start_only_median_s']:.2f} s "
            f"| {s['fixed_cost_s']:.2f} s | {met} | {s['others']:.0%} |"
        )
    lines += [
        "",
        "Machine busy counts every process on the machine, the measured one included: on 2 "
        "cores a run that keeps one core busy reads 50 %.",
        "",
        "## Where an upsert process's time goes (medians, seconds)",
        "",
        "`operation` is the upsert's own work without the Spark start it triggers; `exit` is "
        "after the command's last line (the JVM's shutdown).",
        "",
        "| layout | " + " | ".join(PHASES) + " |",
        "|---|" + "---|" * len(PHASES),
    ]
    for s in report["layouts"]:
        ph = s["phases_median_s"]
        lines.append(f"| {_name(s)} | " + " | ".join(f"{ph[p]:.2f}" for p in PHASES) + " |")
    lines += ["", "The start-only process (medians, seconds):", ""]
    for s in report["layouts"]:
        ph = s["start_only_phases_median_s"]
        parts = ", ".join(f"{k} {v:.2f}" for k, v in ph.items())
        lines.append(f"- {_name(s)}: {parts}; interpreter start and exit {s['python_start_s']:.2f}")
    lines += ["", "Spark jobs inside the operation (median wall seconds each):", ""]
    for s in report["layouts"]:
        lines.append(f"- {_name(s)} ({s['spark_jobs_per_upsert']:.0f} jobs an upsert):")
        for name, secs in s["spark_jobs_median_s"].items():
            lines.append(f"  - `{name}`: {secs:.2f}")
    notes = Path(__file__).parent / "results" / "scheduled_job_notes.md"
    if notes.exists():
        lines += ["", notes.read_text().strip()]
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--layout", action="append", choices=LAYOUTS)
    parser.add_argument(
        "--no-archive",
        action="store_true",
        help="measure only without the class archive (a new machine's first commands)",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--report-only", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (or re-render) and write ``scheduled_job.{json,md}``."""
    args = parser().parse_args(argv)
    if args.report_only:
        report = read_json(args.out / "scheduled_job.json", None)
        (args.out / "scheduled_job.md").write_text(render(report), encoding="utf-8")
        return
    if args.runs < 1:
        parser().error("--runs must be at least 1")
    root = Path(tempfile.mkdtemp(prefix="versioned-scheduled-job-"))
    try:
        python_start = _python_start(root, _env(root, "off"))
        archives = ["off"]
        if not args.no_archive:
            made = make_archive(log)
            if made is None:
                raise SystemExit("no class archive could be made (see above)")
            archives.append(str(archive_dir()))
        runs = [
            run_layout(layout, root, args.runs, python_start, archive)
            for archive in archives
            for layout in args.layout or LAYOUTS
        ]
        report = {
            "runs": args.runs,
            "stamp": stamp(),
            "machine": machine(),
            "layouts": [summarize(r, python_start) for r in runs],
            "raw": runs,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write_json(args.out / "scheduled_job.json", report)
    (args.out / "scheduled_job.md").write_text(render(report), encoding="utf-8")
    for s in report["layouts"]:
        log(
            f"{_name(s)}: fixed cost {s['fixed_cost_s']:.2f} s (upsert "
            f"{s['upsert_median_s']:.2f} s, start only {s['start_only_median_s']:.2f} s)"
        )


if __name__ == "__main__":
    main()
