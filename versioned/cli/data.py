"""Commands that write and read table data: upsert, show, sql, history."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

import click

from versioned.cli.context import CliContext, output_option, pass_cli, progress_printer
from versioned.cli.render import CELL_WIDTH, echo, render_record, render_rows, utc_time

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
@click.option(
    "--evolve",
    is_flag=True,
    help="Add input columns the table lacks (nullable, typed from the input) first.",
)
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
    evolve: bool,
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
      versioned upsert test.sell new_columns.parquet --evolve
      versioned upsert test.sell prices.csv --partial
      versioned upsert test.sell 'feed/*.json' --format debezium --ordering-from lsn
    """
    table = state.table(name, "write", now=False)  # the upsert reads it and checks write once
    result = table.upsert(
        list(inputs),
        format=fmt,
        op_code_column=op_code_column,
        partial=partial,
        ordering_from=ordering_from,
        progress=progress_printer(quiet),
        evolve=evolve,
    )
    if result.nothing_applied or result.all_rejected:
        why = f"{' '.join(inputs)}: no rows in the input"
        if result.rejected:
            where = result.dead_letter and state.catalog.full_path(result.dead_letter)
            why = (
                f"all {result.rejected} row(s) of {' '.join(inputs)} were rejected; their "
                f"reasons are in {where or 'the dead-letter area'}"
            )
        say_nothing_applied(state, result.to_dict(), why)
        return
    echo(render_record(result.to_dict(), state.output))


@click.command("show")
@click.argument("name", metavar="DB.TABLE")
@click.option(
    "--as-of",
    type=int,
    default=None,
    metavar="V",
    help="Read the table right after the commit of version V (its latest version at or below V).",
)
@click.option(
    "--as-of-time",
    default=None,
    metavar="TIME",
    help="Read the table as of its last commit made at TIME or before, to the microsecond "
    "(ISO-8601 with a zone, e.g. 2024-05-01T12:00:00Z or 2024-05-01T14:00:00.25+02:00; "
    "`history` shows commit times to the microsecond).",
)
@click.option("--where", "condition", default=None, help="SQL filter, e.g. \"store_id = '7'\".")
@click.option("--limit", type=int, default=20, show_default=True, help="Rows to show (0: all).")
@click.option(
    "--no-truncate",
    is_flag=True,
    help=f"Show whole values (the table output cuts cells at {CELL_WIDTH} characters).",
)
@output_option
@pass_cli
def show(
    state: CliContext,
    name: str,
    as_of: int | None,
    as_of_time: str | None,
    condition: str | None,
    limit: int,
    no_truncate: bool,
) -> None:
    """Show the latest version of the records of DB.TABLE (or as of a version or a time),
    sorted by the primary key.

    \b
    Examples:
      versioned show test.sell --where "store_id = '7'"
      versioned show test.sell --as-of-time 2024-05-01T12:00:00Z
    """
    table = state.table(name)
    if as_of is not None and as_of_time is not None:
        raise click.UsageError("give --as-of or --as-of-time, not both")
    # The time itself, not the version of the commit it finds: the version names the
    # commit only while versions follow the commit order.
    when = None if as_of_time is None else parse_time(as_of_time, "--as-of-time")
    frame = (
        table.matching(condition, as_of, as_of_time=when)
        if condition
        else table.read(as_of=as_of, as_of_time=when)
    )
    frame = frame.orderBy(*table.spec.primary_key)
    what = "--where" if condition else "show"
    print_frame(state, frame, limit, what, truncate=not no_truncate)


@click.command("sql")
@click.argument("query")
@click.option("--limit", type=int, default=0, help="Rows to print at most (0: all).")
@click.option(
    "--no-truncate",
    is_flag=True,
    help=f"Show whole values (the table output cuts cells at {CELL_WIDTH} characters).",
)
@output_option
@pass_cli
def sql(state: CliContext, query: str, limit: int, no_truncate: bool) -> None:
    """Run a read-only Spark SQL query over the latest versions of tables you may read.

    Only queries run (SELECT, WITH, VALUES, TABLE); name tables DB.TABLE. Statements
    that change anything (INSERT, CREATE, DROP, SET, CACHE, ...) and reads of files or
    paths (parquet.`/path`) are refused before anything runs.

    \b
    Example:
      versioned sql "SELECT store_id, COUNT(*) FROM test.sell GROUP BY store_id"
    """
    print_frame(state, state.catalog.sql(query), limit, "query", truncate=not no_truncate)


HISTORY_COLUMNS = [
    "version",
    "commit",
    "operation",
    "committed_at",
    "user",
    "inserted",
    "updated",
    "deleted",
    "ignored_deletes",
    "stale",
    "superseded",
    "rejected",
    "files",
    "trigger",
]


@click.command("history")
@click.argument("name", metavar="DB.TABLE")
@output_option
@pass_cli
def history(state: CliContext, name: str) -> None:
    """List the versions of DB.TABLE, lowest (oldest) version first, with what each did.

    A version is the id of the transaction that wrote it, or a fresh one when a higher
    version committed first (a write's in its partition; on acid tables any), so a higher
    version wins over a lower one for the same key. `commit` numbers the commits in the
    order they became visible; on the version layout a write can commit after a higher
    version of another partition or a compaction, so the two orders can differ there.
    `committed_at` is to the microsecond: `show --as-of-time` with it reads that commit.
    """
    rows = []
    for c in sorted(state.table(name).history(), key=lambda c: (c.version, c.seq)):
        m = c.metrics
        rows.append(
            {
                "version": c.version,
                "commit": c.seq,
                "operation": c.operation,
                "committed_at": utc_time(c.committed_at, timespec="microseconds"),
                "user": c.user,
                "inserted": m.get("inserted"),
                "updated": m.get("updated"),
                "deleted": m.get("deleted"),
                "ignored_deletes": m.get("ignored_deletes"),
                "stale": m.get("stale"),
                "superseded": m.get("superseded"),
                "rejected": m.get("rejected"),
                "files": m.get("files_written"),
                "trigger": m.get("trigger"),
            }
        )
    echo(render_rows(rows, state.output, HISTORY_COLUMNS))


TIME_FORMS = (
    "an ISO-8601 time with a zone, to the microsecond at most, from 0001-01-01T00:00:00Z to "
    "9999-12-31T23:59:59Z (e.g. 2024-05-01T12:00:00Z or 2024-05-01T14:00:00.25+02:00)"
)


def parse_time(text: str, option: str) -> datetime:
    """An ISO-8601 time with a zone (``2024-05-01T12:00:00Z``, ``...+02:00``)."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError as exc:
        raise click.BadParameter(f"{text!r} is not {TIME_FORMS}", param_hint=option) from exc
    if when.tzinfo is None:
        # The full form: Python reads a zone only after a time (not 2024-05-01Z).
        raise click.BadParameter(
            f"{text!r} has no zone: add one, e.g. {when.isoformat()}Z for UTC",
            param_hint=option,
        )
    try:
        when.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is in the year 0 in UTC
        raise click.BadParameter(
            f"{text!r} is outside the years 1 to 9999 in UTC: give {TIME_FORMS}",
            param_hint=option,
        ) from None
    return when


def say_nothing_applied(state: CliContext, record: dict[str, Any], why: str) -> None:
    """Report a batch that applied no row (exit status 0): it committed nothing, or (every
    row rejected) a version that records only its dead letters."""
    version = record.get("version")
    if version is None:
        line = f"nothing to apply ({why}); no version was committed"
    else:
        line = f"nothing to apply ({why}); version {version} records them"
    if state.output == "table":
        echo(line)
    else:
        click.echo(line, err=True)
        echo(render_record(record, state.output))


def print_frame(
    state: CliContext, frame: Any, limit: int, what: str, *, truncate: bool = False
) -> None:
    """Collect (up to ``limit`` rows of) a DataFrame and print it (``truncate``: cut table
    cells at `CELL_WIDTH` characters)."""
    from versioned.api.frames import collected_rows

    columns, records = collected_rows(frame, limit=limit, what=what)
    width = CELL_WIDTH if truncate else None
    echo(render_rows(records, state.output, columns, cell_width=width))
    if state.output == "table" and limit > 0 and len(records) == limit:
        click.echo(f"(first {limit} rows; --limit 0 shows all)", err=True)
    sys.stdout.flush()


COMMANDS = [upsert, show, sql, history]
