"""Running scenarios one after the other in this process, as ``python -m benchmarks run`` does.

Each scenario's ``main(argv)`` runs with its output in a log file of its own (and on the
console too when asked); one line per scenario says whether it passed and its wall time. Spark
scenarios share one session (`shared_session`) in a smoke run and whenever several run; a
single one at a full size builds its own, as when run alone. A scenario fails when
it raises (an engine error, a disagreement between engines, a broken import); the others still
run, and the caller turns a failure into a non-zero exit status.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import shutil
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Literal

from benchmarks.harness.markdown import table
from benchmarks.harness.record import machine, stamp
from benchmarks.harness.results import write_json
from benchmarks.harness.session import shared_session
from benchmarks.scenarios import Scenario

Status = Literal["passed", "FAILED", "skipped", "started"]
STATUSES: tuple[Status, ...] = ("passed", "FAILED", "skipped", "started")
SMOKE_STORES = "4"
# The shared session of a smoke run lives for a few minutes and runs every code path a few
# times on tiny data: one shuffle partition a core, expressions interpreted rather than
# compiled, and the JVM's C1 compiler alone (the settings of the tests' short-lived JVMs;
# tests/support/spark_settings.py says what they save). Full sizes keep Spark's and the JVM's
# defaults, and the memory the benchmarks ask.
SHARED_CONF = {
    "smoke": {
        "spark.driver.memory": "2g",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    },
    "full": {"spark.driver.memory": "8g"},
}


@dataclass(frozen=True)
class Outcome:
    """How one scenario's run ended."""

    name: str
    status: Status
    seconds: float
    argv: tuple[str, ...] = ()
    error: str = ""

    def line(self) -> str:
        """``name  12.3 s  passed`` (and the error of a failed run)."""
        text = f"{self.name:<20} {self.seconds:6.1f} s  {self.status}"
        return f"{text}  {self.error}" if self.error else text


@dataclass(frozen=True)
class Plan:
    """What a run does: the scenarios, the size, and where everything goes."""

    scenarios: Sequence[Scenario]
    size: str
    out: Path | None
    """Results folder passed as ``--out`` (None: each scenario's default)."""
    logs: Path
    """Each scenario's output (``NAME.log``) and the run's record (``run.json``, ``run.md``)."""
    work: Path | None = None
    """Parent of each scenario's ``--work`` folder, removed after it (None: their defaults)."""
    extra: tuple[str, ...] = ()
    verbose: bool = False


class _Tee(io.TextIOBase):
    """A text stream writing to a file and, optionally, to a console stream."""

    def __init__(self, file: IO[str], console: IO[str] | None) -> None:
        super().__init__()
        self._streams = [file] if console is None else [file, console]

    def write(self, text: str) -> int:
        for stream in self._streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self._streams:
            stream.flush()


@contextlib.contextmanager
def _captured(path: Path, verbose: bool) -> Iterator[IO[str]]:
    """Python's stdout and stderr into ``path`` (and still on the console if ``verbose``)."""
    with path.open("w") as file:
        out = _Tee(file, sys.stdout if verbose else None)
        err = _Tee(file, sys.stderr if verbose else None)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield file


def arguments(scenario: Scenario, plan: Plan) -> tuple[str, ...]:
    """The command line ``scenario`` runs with under ``plan``."""
    argv = [*scenario.argv(plan.size)]
    if plan.out is not None and scenario.out:
        argv += ["--out", str(plan.out)]
    if plan.work is not None and scenario.work:
        argv += ["--work", str(plan.work / scenario.name)]
    return (*argv, *plan.extra)


def run_one(scenario: Scenario, plan: Plan) -> Outcome:
    """Import and run one scenario; its outcome (never raises but for Ctrl-C)."""
    if not scenario.has(plan.size):
        return Outcome(scenario.name, "skipped", 0.0, error=f"no {plan.size} size")
    argv = arguments(scenario, plan)
    started = time.perf_counter()
    error = ""
    with _captured(plan.logs / f"{scenario.name}.log", plan.verbose) as log:
        print("$ python -m", scenario.module, *argv, flush=True)
        try:
            importlib.import_module(scenario.module).main(list(argv))
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            if exc.code not in (0, None):
                error = f"exit status {exc.code}"
        except Exception as exc:
            traceback.print_exc(file=log)
            error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    if plan.work is not None:
        shutil.rmtree(plan.work / scenario.name, ignore_errors=True)
    seconds = time.perf_counter() - started
    return Outcome(scenario.name, "FAILED" if error else "passed", seconds, argv, error)


def _tail(path: Path, lines: int = 25) -> str:
    return "\n".join("    " + t for t in path.read_text().splitlines()[-lines:])


def run(plan: Plan, console: IO[str] | None = None) -> list[Outcome]:
    """Run every scenario of ``plan``; print a line for each (and the log's end of a failed
    one) on ``console``; write the run's record; return the outcomes."""
    console = console or sys.stdout
    plan.logs.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    # One JVM for every Spark scenario (its start is a line of its own), unless only one runs
    # at a full size: that one builds its session itself, with its own settings, as alone.
    spark_runs = sum(s.spark and s.has(plan.size) for s in plan.scenarios)
    share = spark_runs > 1 or (spark_runs == 1 and plan.size == "smoke")
    session_started = False
    with contextlib.ExitStack() as stack:
        if plan.size == "smoke":
            stack.enter_context(_smoke_data(plan))
        for scenario in plan.scenarios:
            if share and scenario.spark and not session_started:
                outcomes.append(_start_session(stack, plan.size, console))
                session_started = True
            outcome = run_one(scenario, plan)
            outcomes.append(outcome)
            print(outcome.line(), file=console, flush=True)
            if outcome.status == "FAILED" and not plan.verbose:
                print(_tail(plan.logs / f"{scenario.name}.log"), file=console, flush=True)
    if plan.work is not None:
        shutil.rmtree(plan.work, ignore_errors=True)
    total = time.perf_counter() - started
    count = {status: sum(o.status == status for o in outcomes) for status in STATUSES}
    print(
        f"{'total':<20} {total:6.1f} s  {count['passed']} passed, {count['FAILED']} failed, "
        f"{count['skipped']} skipped; logs and run.json in {plan.logs}",
        file=console,
        flush=True,
    )
    write_record(plan, outcomes, total, SHARED_CONF[_kind(plan.size)] if share else None)
    return outcomes


@contextlib.contextmanager
def _environment(settings: dict[str, str]) -> Iterator[None]:
    """``settings`` in ``os.environ`` while the block runs."""
    saved = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _smoke_data(plan: Plan) -> Iterator[None]:
    """The smoke run's generated data (`benchmarks.upsert_data`): 4 ``store_id`` partitions
    instead of 20, and one copy of it for every scenario when several run."""
    from benchmarks.upsert_data import SHARED_DATA, STORES_SETTING

    settings = {STORES_SETTING: SMOKE_STORES}
    if plan.work is not None and len(plan.scenarios) > 1:
        settings[SHARED_DATA] = str(plan.work / "shared-data")
    with _environment(settings):
        yield
    if SHARED_DATA in settings:
        shutil.rmtree(settings[SHARED_DATA], ignore_errors=True)


def _start_session(stack: contextlib.ExitStack, size: str, console: IO[str]) -> Outcome:
    started = time.perf_counter()
    conf = SHARED_CONF[_kind(size)]
    stack.enter_context(shared_session(conf))
    outcome = Outcome("(spark session)", "started", time.perf_counter() - started)
    print(outcome.line(), file=console, flush=True)
    return outcome


def _kind(size: str) -> str:
    return "smoke" if size == "smoke" else "full"


def write_record(
    plan: Plan, outcomes: list[Outcome], total: float, shared: dict[str, str] | None = None
) -> None:
    """``run.json`` (stamped: commit, date, machine) and ``run.md`` under ``plan.logs``;
    ``shared``: the settings of the shared Spark session, if there was one."""
    doc = {
        "size": plan.size,
        "out": str(plan.out) if plan.out else None,
        "wall_s": round(total, 1),
        "shared_session": shared,
        "scenarios": [asdict(o) for o in outcomes],
        "machine": machine(),
        "stamp": stamp(),
    }
    write_json(plan.logs / "run.json", doc)
    lines = [
        f"# Benchmarks, size {plan.size}: {total:.0f} s",
        "",
        *table(
            ("scenario", "wall s", "status", "error"),
            "lrll",
            ((o.name, f"{o.seconds:.1f}", o.status, o.error) for o in outcomes),
        ),
        "",
    ]
    (plan.logs / "run.md").write_text("\n".join(lines))
