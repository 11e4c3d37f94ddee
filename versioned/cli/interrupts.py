"""Ctrl-C and SIGTERM in a command: Spark's jobs cancelled, one line, exit 130 or 143.

Every command runs with `Interrupts` as its SIGINT and SIGTERM handler (`stream` puts its
own in place while it streams: it commits what it read and stops cleanly). The first signal

1. asks Spark to cancel every job it runs (`engine.spark.session.cancel_all_jobs`);
2. silences Python's logging for the rest of the command: py4j logs the call the interrupt
   broke with its traceback, and a cleanup may warn of a file left for vacuum;
3. raises `KeyboardInterrupt` in the main thread, which unwinds the command as any error
   does: its open transaction is aborted and its files deleted (a file a cancelled task
   writes later is an orphan that vacuum removes). While the main thread is making a catalog
   change (a commit is one SQL transaction) the interrupt is held back until the change
   ended, so that its outcome is known. No commit begins afterwards, in any thread.

The command line then prints one line saying what the command changed, from what the
catalog reported while it ran (`versioned.catalog.change_watch`), and exits with 128 + the
signal's number. A second signal ends the process at once with that line; when a change was
under way the line says that its outcome is unknown and how to look.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from versioned.api.catalog import CatalogChange, ChangeKind
from versioned.cli.console import NOTHING

SIGNALS = (signal.SIGINT, signal.SIGTERM)
_DOING: dict[ChangeKind, str] = {
    "commit": "committing to",
    "create": "creating",
    "drop": "dropping",
    "properties": "changing the properties of",
    "grant": "granting on",
    "revoke": "revoking on",
}
_LOOK: dict[ChangeKind, str] = {
    "commit": "history",
    "create": "describe",
    "drop": "describe",
    "properties": "describe",
    "grant": "grants",
    "revoke": "grants",
}
_DONE: dict[ChangeKind, str] = {
    "create": "{} was created",
    "drop": "{} was dropped",
    "properties": "the properties of {} were changed",
    "grant": "a grant on {} was made",
    "revoke": "a grant on {} was taken back",
}
_LISTED_VERSIONS = 5


def interrupted_line(
    made: Sequence[CatalogChange], making: Sequence[tuple[ChangeKind, str]] = ()
) -> str:
    """The one line an interrupted command prints.

    Args:
        made: The catalog changes the command made, in order.
        making: The changes under way when it ended (their outcome is unknown).
    """
    if not made and not making:
        return NOTHING
    parts = []
    if made:
        parts.append(f"after {_and(_done(made))}")
    if making:
        kind, target = making[0]
        look = f"versioned {_LOOK[kind]} {target.split(', ')[0]}"
        parts.append(f"while {_DOING[kind]} {target} (outcome unknown): check `{look}`")
    return "interrupted " + ", ".join(parts)


def _done(made: Sequence[CatalogChange]) -> list[str]:
    """What ``made`` did, in words: the versions of each table together, in order."""
    phrases: list[str] = []
    versions: dict[str, list[int]] = {}
    for change in made:
        if change.kind != "commit":
            phrases.append(_DONE[change.kind].format(change.target))
        elif change.target in versions:
            versions[change.target].append(change.version or 0)
        else:
            versions[change.target] = [change.version or 0]
            phrases.append(change.target)  # replaced below, keeping the order
    return [_versions(p, versions[p]) if p in versions else p for p in phrases]


def _versions(table: str, versions: list[int]) -> str:
    if len(versions) == 1:
        return f"version {versions[0]} of {table} was committed"
    if len(versions) <= _LISTED_VERSIONS:
        return f"versions {_and([str(v) for v in versions])} of {table} were committed"
    return (
        f"{len(versions)} versions of {table} were committed ({min(versions)} to {max(versions)})"
    )


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


class Interrupts:
    """The SIGINT and SIGTERM handler of one command, and the watch of its catalog changes
    (`versioned.catalog.change_watch.ChangeWatch`).

    Attributes:
        signum: The first signal received, or None.
    """

    def __init__(
        self,
        *,
        cancel_jobs: Callable[[], None] | None = None,
        exit_now: Callable[[int], NoReturn] | None = None,
    ) -> None:
        """``cancel_jobs`` cancels Spark's jobs (default: those of this process's Spark);
        ``exit_now`` ends the process after a second signal (default `os._exit`)."""
        self.signum: int | None = None
        self._cancel_jobs = cancel_jobs or _cancel_spark_jobs
        self._exit_now = exit_now or exit_process
        self._made: list[CatalogChange] = []
        self._making: dict[int, list[tuple[ChangeKind, str]]] = {}  # by thread
        self._held = False
        self._previous: dict[int, Any] = {}
        self._logging_disabled: int | None = None

    # the catalog's reports (any thread) ------------------------------------------------------

    def change_started(self, kind: ChangeKind, target: str) -> None:
        """A catalog change begins in this thread (an interrupt now is held back).

        Raises:
            KeyboardInterrupt: It is a commit and the command was interrupted: no commit
                begins after Ctrl-C (a compaction's other threads would otherwise go on
                committing their partitions while the command unwinds).
        """
        if kind == "commit" and self.signum is not None:
            raise KeyboardInterrupt
        self._making.setdefault(threading.get_ident(), []).append((kind, target))

    def change_ended(self, made: Sequence[CatalogChange]) -> None:
        """It ended: remember what it made; raise an interrupt held back meanwhile."""
        self._made.extend(made)  # first, so that an interrupt from here on names it
        stack = self._making.get(threading.get_ident(), [])
        if stack:
            stack.pop()
        main = threading.current_thread() is threading.main_thread()
        if self._held and main and not stack:
            self._held = False
            raise KeyboardInterrupt

    # the signal handler (the main thread) ----------------------------------------------------

    def handle(self, signum: int, frame: Any) -> None:
        """The first signal interrupts the command (see the module); a second one ends the
        process at once."""
        if self.signum is not None:
            os.write(2, f"{self.line()}\n".encode())
            self._exit_now(self.exit_code)
        self.signum = signum
        self._quiet_logging()
        self._cancel_jobs()
        if self._main_thread_making():
            self._held = True  # raised when the change ended (`change_ended`)
            return
        raise KeyboardInterrupt

    @property
    def exit_code(self) -> int:
        """128 + the first signal's number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + (self.signum or signal.SIGINT)

    def line(self) -> str:
        """The line saying what the command changed (see `interrupted_line`)."""
        making = [item for stack in list(self._making.values()) for item in stack[:1]]
        return interrupted_line(self._made, making)

    def exit(self) -> click.exceptions.Exit:
        """Print the line on stderr; return the exit to raise (`exit_code`)."""
        click.echo(self.line(), err=True)
        return click.exceptions.Exit(self.exit_code)

    # installing ------------------------------------------------------------------------------

    def install(self) -> None:
        """Handle SIGINT and SIGTERM here (again: a SparkContext that starts takes SIGINT).

        Only the main thread can; elsewhere (a command run in a thread) nothing changes.
        """
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in SIGNALS:
            previous = signal.signal(signum, self.handle)
            self._previous.setdefault(signum, previous)

    def restore(self) -> None:
        """Put back the handlers and the logging there were before `install`."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self._logging_disabled is not None:
            logging.disable(self._logging_disabled)
            self._logging_disabled = None

    @contextmanager
    def installed(self) -> Iterator[Interrupts]:
        """`install` for the block, `restore` after it."""
        self.install()
        try:
            yield self
        finally:
            self.restore()

    def _main_thread_making(self) -> bool:
        return bool(self._making.get(threading.main_thread().ident or 0))

    def _quiet_logging(self) -> None:
        self._logging_disabled = logging.root.manager.disable
        logging.disable(logging.CRITICAL)


def exit_at_once_on_signals() -> None:
    """For the console script: a signal outside a command's own handling (while the process
    parses its arguments, or exits after the command) ends it at once, quietly, with 130 or
    143. A command that was interrupted has printed its line by then."""
    for signum in SIGNALS:
        signal.signal(signum, _exit_at_once)


def _exit_at_once(signum: int, frame: Any) -> None:
    exit_process(128 + signum)


def exit_process(code: int) -> NoReturn:
    """End the process now: no cleanup, no waiting for threads (what a second Ctrl-C asks).

    A Spark JVM this process launched is asked to end too: one still starting would not
    notice that we are gone."""
    jvm_output = sys.modules.get("versioned.engine.spark.jvm_output")
    if jvm_output is not None:
        jvm_output.terminate_launched()
    os._exit(code)


def _cancel_spark_jobs() -> None:
    from versioned.engine.spark.session import cancel_all_jobs

    cancel_all_jobs()
