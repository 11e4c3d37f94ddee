"""Commands that create, inspect and drop tables."""

from __future__ import annotations

import sys
from typing import Any

import click

from versioned.api.catalog import layout_names
from versioned.cli.context import CliContext, output_option, pass_cli
from versioned.cli.render import echo, render_record, render_rows, utc_time
from versioned.errors import InputError
from versioned.schema import FILE_FORMATS


@click.command("init")
@click.option(
    "--no-class-archive",
    is_flag=True,
    help="Do not prepare Spark's class archive (see below).",
)
@pass_cli
def init(state: CliContext, no_class_archive: bool) -> None:
    """Create the warehouse directory and the catalog, and prepare Spark's class archive
    (safe to run again).

    The class archive (Java's AppCDS) holds the classes of Spark that commands load, parsed
    and verified once: every later command that starts Spark on this machine maps it and
    starts seconds sooner (a scheduled job's 10-row upsert: 3-4 s less). Making it runs a
    probe in a scratch folder once, about a minute on 2 cores; it is kept in
    ~/.cache/versioned (VERSIONED_CLASS_ARCHIVE=DIR names another folder, =off turns it
    off), one per Java and PySpark.
    """
    from versioned.engine.spark.class_archive import enabled, make_archive

    cat = state.catalog
    echo(f"catalog   {_redact(cat.settings.catalog_url)}")
    echo(f"warehouse {cat.settings.warehouse}")
    echo(f"user      {cat.user}")
    if no_class_archive or not enabled():
        echo("classes   (no archive)")
        return
    made = make_archive(lambda message: click.echo(message, err=True))
    echo(f"classes   {made if made is not None else '(no archive)'}")


@click.command("create-table")
@click.argument("name", metavar="DB.TABLE")
@click.option(
    "--columns", required=True, help='Columns with types: "sell_id BIGINT, total DOUBLE".'
)
@click.option("--primary-key", required=True, help="Key column(s), comma-separated.")
@click.option("--partition-by", default=None, help="Partition column(s), comma-separated.")
@click.option("--op-code-column", default=None, help="Input column with I/U/D op codes.")
@click.option("--ordering-column", default=None, help="Column ordering changes (timestamp/LSN).")
@click.option(
    "--layout",
    type=click.Choice(layout_names()),
    default="versioned",
    show_default=True,
    help="How rows are stored: versioned or acid (see Layouts above).",
)
@click.option(
    "--format",
    "file_format",
    type=click.Choice(FILE_FORMATS),
    default=None,
    help="Data file format [default: parquet; orc for the acid layout, which stores only orc].",
)
@click.option(
    "--buckets",
    type=int,
    default=None,
    help="Number of buckets, 1-4096 (with --bucket-by). The acid layout writes one "
    "bucket_NNNNN file per bucket by Hive's hash; the versioned layout only records it.",
)
@click.option(
    "--bucket-by",
    default=None,
    help="Bucket column(s), comma-separated, in CLUSTERED BY order; any non-partition "
    "columns (acid: a key lookup reads one bucket only when the key holds them all).",
)
@click.option(
    "--sort-by",
    default=None,
    help="Sort column(s) of exported files, comma-separated (not with --layout acid).",
)
@click.option(
    "--property",
    "properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="Table property; repeat for several.",
)
@output_option
@pass_cli
def create_table(
    state: CliContext,
    name: str,
    columns: str,
    primary_key: str,
    partition_by: str | None,
    op_code_column: str | None,
    ordering_column: str | None,
    layout: str,
    file_format: str | None,
    buckets: int | None,
    bucket_by: str | None,
    sort_by: str | None,
    properties: tuple[str, ...],
) -> None:
    """Create table DB.TABLE (the database is created when missing).

    \b
    Layouts (README: Choosing a layout):
      versioned  Parquet + key index: cheapest upserts; read it through versioned
      acid       Hive ACID ORC deltas: Hive/Trino/Spark-ACID read it; merge on read

    \b
    Example (the sales table of the version-partition design):
      versioned create-table test.sell \\
        --columns "sell_id BIGINT, acct_id BIGINT, change_ts STRING, total_amt DOUBLE,
                   store_id STRING, create_date STRING" \\
        --primary-key sell_id --partition-by store_id,create_date --op-code-column op_code
      versioned create-table shop.orders --layout acid --bucket-by id --buckets 4 \\
        --columns "id BIGINT, customer STRING, amount DOUBLE" --primary-key id
    """
    props: dict[str, str] = {}
    for item in properties:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--property")
        props[key.strip()] = value
    table = state.catalog.create_table(
        name,
        columns=columns,
        primary_key=primary_key,
        partition_by=partition_by,
        op_code_column=op_code_column,
        ordering_column=ordering_column,
        layout=layout,
        file_format=file_format,
        bucket_by=bucket_by,
        buckets=buckets,
        sort_by=sort_by,
        properties=props,
    )
    if state.output == "table":
        echo(f"created {table.name} ({table.spec.layout} layout, {table.spec.file_format})")
    else:
        echo(render_record(table.describe(), state.output))


@click.command("describe")
@click.argument("name", metavar="DB.TABLE")
@output_option
@pass_cli
def describe(state: CliContext, name: str) -> None:
    """Show a table's columns, keys, layout, owner and current version."""
    info = describe_record(state, name)
    if state.output != "table":
        echo(render_record(info, state.output))
        return
    summary = {k: v for k, v in info.items() if k != "columns"}
    echo(render_record(summary, "table"))
    echo("")
    rows = [
        {
            "column": c["name"],
            "type": c["type"],
            "nullable": "yes" if c["nullable"] else "no",
            "role": _role(c["name"], info),
        }
        for c in info["columns"]
    ]
    echo(render_rows(rows, "table"))


@click.command("alter-table")
@click.argument("name", metavar="DB.TABLE")
@click.option(
    "--add-columns",
    "add",
    default=None,
    help='Nullable columns to add, with types: "discount DOUBLE, note STRING".',
)
@click.option(
    "--widen",
    default=None,
    help='Columns with a wider type: "qty BIGINT, price DECIMAL(12,2)".',
)
@click.option(
    "--set",
    "set_",
    multiple=True,
    metavar="KEY=VALUE",
    help="Set a table property (repeatable), e.g. auto_compact=false.",
)
@click.option("--unset", multiple=True, metavar="KEY", help="Remove a table property (repeatable).")
@output_option
@pass_cli
def alter_table(
    state: CliContext,
    name: str,
    add: str | None,
    widen: str | None,
    set_: tuple[str, ...],
    unset: tuple[str, ...],
) -> None:
    """Add columns to DB.TABLE, widen their types, or set its properties (one commit each).

    Only the catalog changes: no file is rewritten. Rows written before read null in added
    columns; old files are read under widened types; --as-of V still shows the schema of V.
    Widening: TINYINT/SMALLINT/INT to a wider integer, FLOAT to DOUBLE, DECIMAL(p,s) to
    DECIMAL(p',s) with p' >= p; not for partition columns. Anything else (narrowing, other
    type changes) fails and changes nothing. Dropping and renaming columns are not
    supported. Needs write permission on the table.

    Properties: --set KEY=VALUE and --unset KEY change table properties, e.g. the table's
    own maintenance after each write (auto_compact=true|false, auto_compact.min_versions,
    auto_compact.index_ratio, auto_compact.min_small_files, auto_compact.min_rows; see
    'versioned describe').

    \b
    Examples:
      versioned alter-table test.sell --add-columns "discount DOUBLE, channel STRING"
      versioned alter-table test.sell --widen "batch BIGINT"
      versioned alter-table test.sell --set auto_compact=false
      versioned alter-table test.sell --set auto_compact.min_versions=4
    """
    if add is None and widen is None and not set_ and not unset:
        raise click.UsageError("give --add-columns, --widen, --set or --unset")
    table = state.catalog.table(name)
    commits = []
    if add is not None or widen is not None:
        commits.append(table.alter_columns(add=add, widen=widen))
    if set_ or unset:
        props: dict[str, str | None] = {}
        for item in set_:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--set")
            props[key.strip()] = value
        props.update({key: None for key in unset})
        commits.append(table.set_properties(props))
    if state.output == "table":
        for commit in commits:
            m = commit.metrics
            changes = [f"added {c}" for c in m.get("added_columns", [])]
            changes += [f"widened {c}" for c in m.get("widened_columns", [])]
            changes += [f"set {k}={v}" for k, v in m.get("set_properties", {}).items()]
            changes += [f"removed {k}" for k in m.get("unset_properties", [])]
            echo(f"altered {name} as version {commit.version}: {', '.join(changes)}")
    else:
        echo(render_record(describe_record(state, name), state.output))


@click.command("list-tables")
@click.argument("database", required=False)
@output_option
@pass_cli
def list_tables(state: CliContext, database: str | None) -> None:
    """List the tables you may read (of DATABASE, or of all databases)."""
    rows = [
        {
            "table": str(t.spec.name),
            "layout": t.spec.layout,
            "format": t.spec.file_format,
            "owner": t.owner,
            "primary_key": ",".join(t.spec.primary_key),
            "partition_by": ",".join(t.spec.partition_by),
        }
        for t in state.catalog.tables(database)
    ]
    cols = ["table", "layout", "format", "owner", "primary_key", "partition_by"]
    echo(render_rows(rows, state.output, cols))


@click.command("partitions")
@click.argument("name", metavar="DB.TABLE")
@click.option("--as-of", type=int, default=None, help="Count files as of version V.")
@output_option
@pass_cli
def partitions(state: CliContext, name: str, as_of: int | None) -> None:
    """List the partitions of DB.TABLE with their latest version, files and rows.

    `rows` counts the rows stored in data files, superseded ones included until compaction;
    the last column counts what retires them: version-index entries (`index_entries`,
    versioned layout) or delete events (`delete_events`, acid layout).
    """
    table = state.catalog.table(name)
    keys = table.spec.partition_by
    entries = table.layout.entry_kinds[0]
    committed_at: dict[int | None, float] = {c.version: c.committed_at for c in table.history()}
    rows = [  # the facts of the partitions metadata table (Table.inspect): one source
        {
            **dict(fact["values"]),
            "path": fact["partition"],
            "head_version": fact["head_version"],
            "committed_at": utc_time(committed_at.get(fact["head_version"])),
            "versions": fact["versions"],
            "data_files": fact["data_files"],
            "rows": fact["stored_rows"],
            entries: fact["entries"],
        }
        for fact in table.inspect.partitions(as_of)
    ]
    cols = [*keys, "path", "head_version", "committed_at", "versions", "data_files", "rows"]
    cols.append(entries)
    echo(render_rows(rows, state.output, cols))


@click.command("drop-table")
@click.argument("name", metavar="DB.TABLE")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (needed in scripts).")
@click.option("--keep-files", is_flag=True, help="Remove the table from the catalog only.")
@pass_cli
def drop_table(state: CliContext, name: str, yes: bool, keep_files: bool) -> None:
    """Drop a table: its catalog entries and (unless --keep-files) all its files.

    Asks for confirmation on the terminal; where stdin is not a terminal (a script, a pipe)
    there is nobody to ask, and --yes is required.
    """
    table = state.catalog.table(name)
    state.catalog.require_writable()  # before asking, not after
    if not yes:
        if not stdin_is_terminal():
            raise InputError(
                f"drop-table asks before it drops {table.name}, and stdin is not a terminal: "
                "pass --yes to drop it without asking",
                table=str(table.name),
            )
        what = "from the catalog" if keep_files else "and delete all its files"
        if not click.confirm(f"Drop {table.name} {what}?", err=True):
            raise click.ClickException(f"{table.name} was not dropped (the answer was no)")
    state.catalog.drop_table(table.name, purge=not keep_files)
    echo(f"dropped {table.name}")


def stdin_is_terminal() -> bool:
    """Whether a question can be asked: stdin is a terminal."""
    return sys.stdin is not None and sys.stdin.isatty()


def describe_record(state: CliContext, name: str) -> dict[str, Any]:
    """`Catalog.describe` with its times as ISO-8601 in UTC in every output format, as
    `history`, `partitions` and the metadata tables print them."""
    info = state.catalog.describe(name)
    last = info.get("last_auto_compaction")
    if isinstance(last, dict) and "committed_at" in last:
        info["last_auto_compaction"] = {**last, "committed_at": utc_time(last["committed_at"])}
    return {**info, "created_at": utc_time(info.get("created_at"))}


def _role(column: str, info: dict[str, Any]) -> str:
    roles = [
        role
        for role, field in (
            ("primary key", "primary_key"),
            ("partition", "partition_by"),
            ("bucket", "bucket_by"),
        )
        if column in info[field]
    ]
    return ", ".join(roles)


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


COMMANDS = [init, create_table, alter_table, describe, list_tables, partitions, drop_table]
