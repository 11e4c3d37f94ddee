"""The `versioned` command: global options, error mapping, and the command groups."""

from __future__ import annotations

import sys
from typing import Any

import click

from versioned.cli.context import INTERRUPTS, CliContext
from versioned.cli.interrupts import Interrupts, exit_at_once_on_signals
from versioned.cli.render import OUTPUT_FORMATS
from versioned.config import (
    ENV_CATALOG,
    ENV_LOG_LEVEL,
    ENV_SPARK_MASTER,
    ENV_USER,
    ENV_WAREHOUSE,
    resolve_settings,
)
from versioned.errors import VersionedError


class UserError(click.ClickException):
    """A `VersionedError` shown as one line, with the error's exit code and no traceback."""

    def __init__(self, error: VersionedError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it per instance
        self.error = error


class VersionedGroup(click.Group):
    """Turns `VersionedError` into a one-line message and the matching exit code, and an
    interrupted command (Ctrl-C, SIGTERM) into one line and 130 or 143 (`cli.interrupts`)."""

    def invoke(self, ctx: click.Context) -> Any:
        interrupts = Interrupts()
        ctx.meta[INTERRUPTS] = interrupts
        with interrupts.installed():
            try:
                result = super().invoke(ctx)
            except BaseException as exc:
                # Once interrupted, whatever the unwinding raises is the interrupt's doing.
                if interrupts.signum is not None or isinstance(exc, KeyboardInterrupt):
                    raise interrupts.exit() from None
                if isinstance(exc, VersionedError):
                    raise UserError(exc) from exc
                raise
            if interrupts.signum is not None:  # the command swallowed it: still say so
                raise interrupts.exit()
            return result


EPILOG = f"""
\b
Configuration (flags win over environment, environment over defaults):
  --catalog       {ENV_CATALOG}       default sqlite:///<warehouse>/catalog.db
  --warehouse     {ENV_WAREHOUSE}     default ./warehouse
  --spark-master  {ENV_SPARK_MASTER}  default local[*]
  --user          {ENV_USER}          default the OS user
  --verbose       {ENV_LOG_LEVEL}     default quiet (--verbose: WARN)

\b
Start here:
  versioned init
  versioned create-table test.sell --columns "sell_id BIGINT, store_id STRING, total_amt DOUBLE" \\
      --primary-key sell_id --partition-by store_id --op-code-column op_code
  versioned describe test.sell
"""


@click.group(cls=VersionedGroup, epilog=EPILOG, context_settings={"max_content_width": 100})
@click.option("--catalog", metavar="URL", help="SQLAlchemy URL of the catalog database.")
@click.option("--warehouse", metavar="PATH", help="Root directory (or URI) of the table data.")
@click.option(
    "--spark-master", metavar="URL", help="Spark master, e.g. local[4] or spark://h:7077."
)
@click.option("--user", metavar="NAME", help="Act as this principal (permissions are checked).")
@click.option(
    "--output",
    "-o",
    type=click.Choice(OUTPUT_FORMATS),
    default="table",
    show_default=True,
    help="Output format of results.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help=f"Show Spark's own output on stderr (at {ENV_LOG_LEVEL}, else WARN).",
)
@click.version_option(package_name="versioned")
@click.pass_context
def cli(
    ctx: click.Context,
    catalog: str | None,
    warehouse: str | None,
    spark_master: str | None,
    user: str | None,
    output: str,
    verbose: bool,
) -> None:
    """versioned: keep data-lake tables in sync with OLTP change feeds, on Spark.

    Each batch of inserts, updates and deletes becomes a new version of the table, committed
    atomically; readers see the latest version of every record.
    """
    try:
        settings = resolve_settings(
            catalog=catalog,
            warehouse=warehouse,
            spark_master=spark_master,
            user=user,
            verbose=verbose,
        )
    except VersionedError as err:
        raise UserError(err) from err
    state = CliContext(
        settings=settings,
        output=output,  # type: ignore[arg-type]
        interrupts=ctx.meta.get(INTERRUPTS),
    )
    ctx.obj = state
    ctx.call_on_close(state.close)


def _register() -> None:
    from versioned.cli import (
        collections,
        data,
        grants,
        maintenance,
        row_changes,
        stream,
        tables,
        ui,
    )

    for module in (tables, data, row_changes, grants, collections, maintenance, stream, ui):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    exit_at_once_on_signals()
    cli.main(args=argv, prog_name="versioned")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
