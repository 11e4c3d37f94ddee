"""Commands that write and read table data: upsert, show, sql, history."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from versioned.cli.context import CliContext, output_option, pass_cli, progress_printer
from versioned.cli.render import echo, render_record, render_rows

FEED_FORMATS = ("csv", "json", "parquet", "debezium")


@click.command("upsert")
@click.argument("name", metavar="DB.TABLE")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FEED_FORMATS),
    default=None,
    help="Input format [default: from the file extension].",
)
@click.option(
    "--op-code-column",
    default=None,
    help="Input column with I/U/D op codes [default: the table's].",
)
@click.option(
    "--partial",
    is_flag=True,
    help="Partial update: table columns the input lacks keep each key's stored values "
    "(a new key gets NULL there). Without it such an input fails.",
)
@click.option(
    "--ordering-from",
    type=click.Choice(("lsn", "binlog", "ts_ms")),
    default=None,
    help="Debezium: fill the table's ordering column from source.lsn, the MySQL binlog "
    "position (source.file, source.pos) or ts_ms [default: table property "
    "debezium.ordering_from, else lsn or ts_ms when the rows lack the column].",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress messages on stderr.")
@output_option
@pass_cli
def upsert(
    state: CliContext,
    name: str,
    inputs: tuple[str, ...],
    fmt: str | None,
    op_code_column: str | None,
    partial: bool,
    ordering_from: str | None,
    quiet: bool,
) -> None:
    """Apply a batch of changes (inserts, updates, deletes) to DB.TABLE as one new version.

    INPUT is a file, directory or glob of CSV (with header), JSON lines, Parquet or Debezium
    change events. Rows carry the table's columns and, optionally, an op code (I/U/D,
    insert/update/delete; no op code means upsert); with --partial they may lack columns.
    Rows that cannot be applied go to the table's dead-letter area with their reason; the
    rest commits atomically. Debezium values are decoded by their schema (docs/change-feeds.md).

    \b
    Examples:
      versioned upsert test.sell changes.csv
      versioned upsert test.sell prices.csv --partial
      versioned upsert test.sell 'feed/*.json' --format debezium --ordering-from lsn
    """
    table = state.catalog.table(name)
    result = table.upsert(
        list(inputs),
        format=fmt,
        op_code_column=op_code_column,
        partial=partial,
        ordering_from=ordering_from,
        progress=progress_printer(quiet),
    )
    echo(render_record(result.to_dict(), state.output))


@click.command("show")
@click.argument("name", metavar="DB.TABLE")
@click.option("--as-of", type=int, default=None, help="Read the table as of version V.")
@click.option("--where", "condition", default=None, help="SQL filter, e.g. \"store_id = '7'\".")
@click.option("--limit", type=int, default=20, show_default=True, help="Rows to show (0: all).")
@output_option
@pass_cli
def show(
    state: CliContext, name: str, as_of: int | None, condition: str | None, limit: int
) -> None:
    """Show the latest version of the records of DB.TABLE (or as of version V)."""
    frame = state.catalog.table(name).read(as_of=as_of)
    if condition:
        frame = frame.where(condition)
    _print_frame(state, frame, limit)


@click.command("sql")
@click.argument("query")
@click.option("--limit", type=int, default=0, help="Rows to print at most (0: all).")
@output_option
@pass_cli
def sql(state: CliContext, query: str, limit: int) -> None:
    """Run a Spark SQL query; tables are read at their latest versions.

    \b
    Example:
      versioned sql "SELECT store_id, COUNT(*) FROM test.sell GROUP BY store_id"
    """
    _print_frame(state, state.catalog.sql(query), limit)


@click.command("history")
@click.argument("name", metavar="DB.TABLE")
@output_option
@pass_cli
def history(state: CliContext, name: str) -> None:
    """List the versions of DB.TABLE, oldest first, with what each commit did."""
    rows = []
    for c in state.catalog.table(name).history():
        m = c.metrics
        rows.append(
            {
                "version": c.version,
                "operation": c.operation,
                "committed_at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(c.committed_at)),
                "user": c.user,
                "inserted": m.get("inserted"),
                "updated": m.get("updated"),
                "deleted": m.get("deleted"),
                "stale": m.get("stale"),
                "rejected": m.get("rejected"),
                "files": m.get("files_written"),
            }
        )
    echo(
        render_rows(
            rows,
            state.output,
            [
                "version",
                "operation",
                "committed_at",
                "user",
                "inserted",
                "updated",
                "deleted",
                "stale",
                "rejected",
                "files",
            ],
        )
    )


def _print_frame(state: CliContext, frame: Any, limit: int) -> None:
    columns = list(frame.columns)
    rows = frame.limit(limit).collect() if limit > 0 else frame.collect()
    records = [r.asDict() for r in rows]
    echo(render_rows(records, state.output, columns))
    if state.output == "table" and limit > 0 and len(records) == limit:
        click.echo(f"(first {limit} rows; --limit 0 shows all)", err=True)
    sys.stdout.flush()


COMMANDS = [upsert, show, sql, history]
