"""Ctrl-C and SIGTERM in a command: one line saying what was committed, exit 130 or 143.

The handler's logic on its own (no signal, no JVM), then real signals raised in this process
while the CLI runs a command in-process (CliRunner): before a commit, during one (held back
until it ended), a second one during a commit, and, on the shared Spark session, during an
upsert and after its commit. The console script with a JVM of its own is
tests/cli/test_interrupt_console.py.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest
from click.testing import CliRunner

from versioned.catalog import schemas
from versioned.catalog.change_watch import CatalogChange
from versioned.catalog.store import MetaStore
from versioned.cli import data, interrupts
from versioned.cli.interrupts import Interrupts, interrupted_line
from versioned.cli.main import cli

NOTHING = "interrupted: nothing was committed"


def _commit(table: str, version: int) -> CatalogChange:
    return CatalogChange("commit", table, version)


# the line --------------------------------------------------------------------------------


def test_nothing_made_says_nothing_was_committed() -> None:
    assert interrupted_line([]) == NOTHING


def test_commits_are_named_by_version_per_table_in_order() -> None:
    assert (
        interrupted_line([_commit("test.t", 7)])
        == "interrupted after version 7 of test.t was committed"
    )
    made = [_commit("test.t", 7), CatalogChange("create", "test.u"), _commit("test.t", 9)]
    assert interrupted_line(made) == (
        "interrupted after versions 7 and 9 of test.t were committed and test.u was created"
    )
    many = [_commit("test.t", v) for v in (12, 3, 40, 41, 42, 43)]
    assert (
        interrupted_line(many) == "interrupted after 6 versions of test.t were committed (3 to 43)"
    )


def test_a_change_under_way_has_an_unknown_outcome_and_says_where_to_look() -> None:
    assert interrupted_line([], [("commit", "test.t")]) == (
        "interrupted while committing to test.t (outcome unknown): check `versioned history test.t`"
    )
    assert interrupted_line([_commit("test.t", 7)], [("drop", "test.t")]) == (
        "interrupted after version 7 of test.t was committed, while dropping test.t "
        "(outcome unknown): check `versioned describe test.t`"
    )


# the handler, called directly ---------------------------------------------------------------


class _Exited(BaseException):
    def __init__(self, code: int) -> None:
        self.code = code


def _exit_now(code: int) -> NoReturn:
    raise _Exited(code)


def _held(call: Callable[[], object]) -> None:
    """``call()`` must not interrupt (a KeyboardInterrupt would stop the whole test run)."""
    try:
        call()
    except KeyboardInterrupt:
        pytest.fail("interrupted at once instead of holding the interrupt back")


@pytest.fixture
def handler() -> Any:
    cancelled: list[int] = []
    made = Interrupts(cancel_jobs=lambda: cancelled.append(1), exit_now=_exit_now)
    made.cancelled = cancelled  # type: ignore[attr-defined]
    yield made
    made.restore()


def test_a_signal_outside_a_change_cancels_jobs_quiets_logging_and_interrupts_at_once(
    handler: Any,
) -> None:
    with pytest.raises(KeyboardInterrupt):
        handler.handle(signal.SIGINT, None)
    assert handler.cancelled == [1]
    assert handler.exit_code == 130
    assert handler.line() == NOTHING
    assert logging.root.manager.disable == logging.CRITICAL  # py4j's traceback stays unsaid
    handler.restore()
    assert logging.root.manager.disable == logging.NOTSET


def test_a_signal_during_a_change_is_held_until_the_outermost_change_ended(handler: Any) -> None:
    handler.change_started("commit", "test.t")  # a transaction's commit ...
    handler.change_started("commit", "test.t")  # ... around the catalog's
    _held(lambda: handler.handle(signal.SIGTERM, None))
    _held(lambda: handler.change_ended([_commit("test.t", 5)]))
    with pytest.raises(KeyboardInterrupt):
        handler.change_ended([])
    assert handler.exit_code == 143
    assert handler.line() == "interrupted after version 5 of test.t was committed"


def test_a_change_in_another_thread_neither_holds_nor_raises_the_interrupt(handler: Any) -> None:
    started, finish = threading.Event(), threading.Event()
    raised: list[BaseException] = []

    def compact_partition() -> None:
        handler.change_started("commit", "test.t")
        started.set()
        finish.wait(10)
        try:
            handler.change_ended([_commit("test.t", 8)])
        except BaseException as exc:  # the test wants to see any
            raised.append(exc)

    worker = threading.Thread(target=compact_partition)
    worker.start()
    started.wait(10)
    with pytest.raises(KeyboardInterrupt):  # the main thread is not committing: unwind now
        handler.handle(signal.SIGINT, None)
    assert handler.line() == (
        "interrupted while committing to test.t (outcome unknown): check `versioned history test.t`"
    )
    finish.set()
    worker.join(10)
    assert raised == []
    assert handler.line() == "interrupted after version 8 of test.t was committed"


def test_no_commit_begins_after_the_interrupt_but_a_cleanup_may_drop(handler: Any) -> None:
    with pytest.raises(KeyboardInterrupt):
        handler.handle(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):  # e.g. a compaction's other partitions
        handler.change_started("commit", "test.t")
    handler.change_started("drop", "test.new")  # an import taking its new table away again
    handler.change_ended([CatalogChange("drop", "test.new")])
    assert handler.line() == "interrupted after test.new was dropped"


def test_a_second_signal_ends_the_process_at_once_with_the_line(
    handler: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    handler.change_started("commit", "test.t")
    _held(lambda: handler.handle(signal.SIGINT, None))
    with pytest.raises(_Exited) as exited:
        handler.handle(signal.SIGINT, None)
    assert exited.value.code == 130
    assert capfd.readouterr().err == (
        "interrupted while committing to test.t (outcome unknown): "
        "check `versioned history test.t`\n"
    )


# real signals, the CLI in-process, no Spark ----------------------------------------------------


@pytest.fixture
def run(tmp_path: Path) -> Callable[..., Any]:
    base = ["--warehouse", str(tmp_path / "wh"), "--catalog", f"sqlite:///{tmp_path}/cat.db"]

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(cli, [*base, "--user", "alice", *args])

    created = invoke(
        "create-table", "test.t", "--columns", "k BIGINT, v STRING, p STRING",
        "--primary-key", "k", "--partition-by", "p",
    )  # fmt: skip
    assert created.exit_code == 0, created.output
    return invoke


def _history(run: Callable[..., Any]) -> list[tuple[int, str]]:
    listed = run("history", "test.t", "-o", "json")
    assert listed.exit_code == 0, listed.output
    return [(r["version"], r["operation"]) for r in json.loads(listed.output)]


def _last_line(result: Any) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    return result.stderr.splitlines()[-1]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_before_the_commit_says_nothing_was_committed_and_commits_nothing(
    run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, signum: int, code: int
) -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    alter = MetaStore.alter_table

    def interrupted_first(self: MetaStore, *args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signum)
        return alter(self, *args, **kwargs)

    monkeypatch.setattr(MetaStore, "alter_table", interrupted_first)
    result = run("alter-table", "test.t", "--add-columns", "note STRING")
    assert result.exit_code == code, result.output
    assert _last_line(result) == NOTHING
    assert result.stdout == ""
    assert _history(run) == []
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    assert logging.root.manager.disable == logging.NOTSET


def test_a_signal_during_the_commit_waits_for_it_and_names_its_version(
    run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    alter = schemas.alter

    def interrupted_inside(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGINT)  # inside the commit's SQL transaction
        return alter(*args, **kwargs)

    monkeypatch.setattr(schemas, "alter", interrupted_inside)
    result = run("alter-table", "test.t", "--add-columns", "note STRING")
    assert result.exit_code == 130, result.output
    [(version, operation)] = _history(run)
    assert operation == "alter"
    assert _last_line(result) == f"interrupted after version {version} of test.t was committed"
    assert "altered" not in result.stdout  # the command stopped right after its commit


def test_a_second_signal_during_the_commit_exits_at_once_saying_the_outcome_is_unknown(
    run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    alter = schemas.alter

    def interrupted_twice(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        return alter(*args, **kwargs)

    exits: list[int] = []

    def exit_process(code: int) -> NoReturn:
        exits.append(code)
        raise _Exited(code)  # os._exit would end this process here

    monkeypatch.setattr(schemas, "alter", interrupted_twice)
    monkeypatch.setattr(interrupts, "exit_process", exit_process)
    run("alter-table", "test.t", "--add-columns", "note STRING")
    assert exits == [130]
    assert capfd.readouterr().err == (  # written to file descriptor 2 at once
        "interrupted while committing to test.t (outcome unknown): "
        "check `versioned history test.t`\n"
    )


# real signals, the CLI in-process, the shared Spark session -----------------------------------


def _upsert_interrupted_at(
    at: str, run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> tuple[Any, Path]:
    """Upsert two rows, raising SIGINT at the first progress line containing ``at``; returns
    the result (exit code 130 checked) and the feed."""
    feed = tmp_path / "feed.csv"
    feed.write_text("k,v,p\n1,a,x\n2,b,y\n")
    printer = data.progress_printer

    def progress_printer(quiet: bool) -> Callable[[str], None]:
        say = printer(quiet)

        def interrupting(message: str) -> None:
            say(message)
            if at in message:
                signal.raise_signal(signal.SIGINT)

        return interrupting

    monkeypatch.setattr(data, "progress_printer", progress_printer)
    result = run("upsert", "test.t", str(feed))
    monkeypatch.undo()
    assert result.exit_code == 130, result.output
    return result, feed


def test_an_interrupted_upsert_commits_nothing_and_the_next_one_applies(
    spark: Any, run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result, feed = _upsert_interrupted_at("reading the batch", run, monkeypatch, tmp_path)
    assert _last_line(result) == NOTHING
    assert _history(run) == []
    again = run("upsert", "test.t", str(feed), "-q", "-o", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["inserted"] == 2


def test_an_interrupt_after_the_upserts_commit_names_the_committed_version(
    spark: Any, run: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result, _ = _upsert_interrupted_at("committed version", run, monkeypatch, tmp_path)
    [(version, operation)] = _history(run)
    assert operation == "upsert"
    assert _last_line(result) == f"interrupted after version {version} of test.t was committed"
