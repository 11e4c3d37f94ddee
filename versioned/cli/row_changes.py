"""Commands about changes of rows: what changed between versions, and deletes by predicate."""

from __future__ import annotations

import click

from versioned.cli.context import CliContext, output_option, pass_cli, progress_printer
from versioned.cli.data import print_frame, say_nothing_applied
from versioned.cli.render import echo, render_record


@click.command("changes")
@click.argument("name", metavar="DB.TABLE")
@click.option(
    "--since",
    type=int,
    required=True,
    metavar="V",
    help="Changes after version V (0: from the first commit, every live row an insert).",
)
@click.option("--until", type=int, default=None, help="Up to version W [default: latest].")
@click.option("--limit", type=int, default=0, help="Rows to print at most (0: all).")
@output_option
@pass_cli
def changes(state: CliContext, name: str, since: int, until: int | None, limit: int) -> None:
    """Net change per key of DB.TABLE after version V (up to version W).

    Each row has `_change` (insert, update or delete) and the record: its new values, or
    for a delete its last values before the delete. A key changed several times shows
    once, with its net change. A version the table has no commit of stands for its latest
    version below it (versions are ids shared by all tables).

    \b
    Examples:
      versioned changes test.sell --since 0          # everything, as inserts
      versioned changes test.sell --since 41
      versioned changes test.sell --since 41 --until 45 -o json
    """
    print_frame(state, state.table(name).changes(since=since, until=until), limit, "changes")


@click.command("delete")
@click.argument("name", metavar="DB.TABLE")
@click.option("--where", "condition", required=True, help="SQL condition of the rows to delete.")
@click.option("--dry-run", is_flag=True, help="Count the rows that would be deleted; delete none.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages on stderr.")
@output_option
@pass_cli
def delete(state: CliContext, name: str, condition: str, dry_run: bool, quiet: bool) -> None:
    """Delete the live rows of DB.TABLE matching a condition, as one new version.

    The keys of the matching rows are applied as deletes, like an upsert of delete
    changes: one atomic commit, listed by history and changes. Needs write permission.

    \b
    Examples:
      versioned delete test.sell --where "store_id = '7' AND total_amt < 0" --dry-run
      versioned delete test.sell --where "create_date < '2020-01-01'"
    """
    table = state.table(name, "write")
    if dry_run:
        count = table.matching(condition).count()
        echo(render_record({"table": str(table.name), "rows_to_delete": count}, state.output))
        return
    result = table.delete(condition, progress=progress_printer(quiet))
    if result.nothing_applied:
        say_nothing_applied(state, result.to_dict(), "no live row matches --where")
        return
    echo(render_record(result.to_dict(), state.output))


COMMANDS = [changes, delete]
