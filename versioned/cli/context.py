"""What every command shares: resolved settings, the output format, a lazily opened catalog."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import click

from versioned.cli.render import OUTPUT_FORMATS, OutputFormat
from versioned.config import Settings

if TYPE_CHECKING:
    from versioned.api.catalog import Catalog
    from versioned.api.table import Table
    from versioned.cli.interrupts import Interrupts

F = TypeVar("F", bound=Callable[..., Any])
INTERRUPTS = "versioned.interrupts"
"""Where `VersionedGroup` leaves the command's `Interrupts` in ``click.Context.meta``."""


@dataclass
class CliContext:
    """State of one CLI invocation."""

    settings: Settings
    output: OutputFormat
    interrupts: Interrupts | None = None
    """Ctrl-C's handler, told about the catalog changes the command makes."""
    _catalog: Catalog | None = field(default=None, repr=False)

    @property
    def catalog(self) -> Catalog:
        """The catalog, opened on first use."""
        if self._catalog is None:
            from versioned.api.catalog import Catalog

            interrupts = self.interrupts
            self._catalog = Catalog(
                self.settings,
                on_spark_start=_say_unless_quiet,
                on_spark_ready=None if interrupts is None else interrupts.install,
                on_change=interrupts,
            )
        return self._catalog

    def table(
        self, name: str, need: Literal["read", "write"] = "read", *, now: bool = True
    ) -> Table:
        """Open table ``name``, checking that the user may do what ``need`` says (so that a
        missing grant is reported as the one the command needs).

        ``now=False`` (a command whose one operation changes the table: an upsert, a
        vacuum) names it only: that operation reads the table and checks ``write`` itself,
        once.
        """
        return self.catalog.table(name, need=need if now else None)

    def close(self) -> None:
        """Close the catalog if it was opened."""
        if self._catalog is not None:
            self._catalog.close()


pass_cli = click.make_pass_decorator(CliContext)


def _say_unless_quiet(message: str) -> None:
    """A progress line on stderr, unless the running command was given ``--quiet``."""
    context = click.get_current_context(silent=True)
    if context is None or not context.params.get("quiet"):
        click.echo(message, err=True)


def progress_printer(quiet: bool) -> Callable[[str], None]:
    """A progress callback printing ``[elapsed] message`` to stderr (silent when quiet)."""
    started = time.monotonic()

    def say(message: str) -> None:
        if not quiet:
            click.echo(f"[{time.monotonic() - started:7.1f}s] {message}", err=True)

    return say


def output_option(func: F) -> F:
    """Add a per-command ``--output`` that overrides the global one."""

    @click.option(
        "--output",
        "-o",
        "output",
        type=click.Choice(OUTPUT_FORMATS),
        default=None,
        help="Output format for this command (overrides the global --output).",
    )
    @wraps(func)
    def wrapper(*args: Any, output: str | None = None, **kwargs: Any) -> Any:
        ctx = click.get_current_context().find_object(CliContext)
        if ctx is not None and output is not None:
            ctx.output = cast(OutputFormat, output)
        return func(*args, **kwargs)

    return cast(F, wrapper)
