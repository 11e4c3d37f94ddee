"""Commands that move data in and out of tables as data collections: export, import, and
``collection show`` (which needs no catalog)."""

from __future__ import annotations

from typing import Any

import click

from versioned.cli.context import CliContext, output_option, pass_cli
from versioned.cli.render import echo, render_record, render_rows

PARTITION_HELP = (
    "Partition values k=v[,k=v...], written as in partition directory names "
    "(%2C is a comma, __HIVE_DEFAULT_PARTITION__ is null)."
)


def _partition(text: str | None) -> dict[str, str | None] | None:
    from versioned.collections.matching import parse_partition_spec

    return None if text is None else parse_partition_spec(text)


@click.command("export")
@click.argument("name", metavar="DB.TABLE")
@click.argument("dest", metavar="DEST")
@click.option("--partition", default=None, metavar="K=V,...", help=PARTITION_HELP)
@click.option("--as-of", type=int, default=None, help="Export version V instead of the latest.")
@output_option
@pass_cli
def export(
    state: CliContext, name: str, dest: str, partition: str | None, as_of: int | None
) -> None:
    """Copy the live rows of DB.TABLE into DEST, a new data collection.

    DEST (a new or empty folder, local or a URI such as hdfs://...) gets the data files in
    Hive-style k=v/ folders and _versioned_collection.json (schema, keys, partitions, sort
    order, format, table name), which Spark and Hadoop jobs ignore. The table is not
    changed. Needs read permission on the table.

    \b
    Examples:
      versioned export sales.orders /data/orders-copy
      versioned export sales.orders /data/orders-7 --partition store=7 --as-of 42
    """
    result = state.catalog.export(name, dest, partition=_partition(partition), as_of=as_of)
    echo(render_record(result.to_dict(), state.output))


@click.command("import")
@click.argument("src", metavar="SRC")
@click.option("--table", "table", default=None, metavar="DB.TABLE", help="Target table.")
@click.option("--partition", default=None, metavar="K=V,...", help=PARTITION_HELP)
@output_option
@pass_cli
def import_(state: CliContext, src: str, table: str | None, partition: str | None) -> None:
    """Import the data collection SRC as one new version of a table.

    The table is the one named by --table, else by the collection. It is created from the
    collection's metadata when it does not exist; otherwise the collection must fit it
    (schema, primary key, sort order, format, partition keys) and its partitions must not
    hold data yet. Anything that does not fit is refused before anything is written.
    Needs write permission on the table.

    \b
    Examples:
      versioned import /data/orders-copy --table backup.orders
      versioned import /data/orders-20101109 --partition datestamp=20101109
    """
    result = state.catalog.import_(src, table=table, partition=_partition(partition))
    echo(render_record(result.to_dict(), state.output))


@click.group("collection")
def collection() -> None:
    """Inspect data collections (no catalog needed)."""


@collection.command("show")
@click.argument("path", metavar="PATH")
@output_option
@pass_cli
def show(state: CliContext, path: str) -> None:
    """Show what the collection at PATH holds: table, schema, keys, partitions, files."""
    from versioned.collections.folder import read_metadata

    metadata = read_metadata(path)
    if state.output == "json":
        echo(render_record(metadata.to_dict(), "json"))
        return
    partitions = [
        {
            "partition": p.path or "(unpartitioned)",
            "values": dict(zip(metadata.partition_by, p.values, strict=True)),
            "files": len(p.files),
            "rows": p.rows,
            "bytes": sum(f.size_bytes for f in p.files),
        }
        for p in metadata.partitions
    ]
    if state.output == "csv":
        echo(render_rows(partitions, "csv", ["partition", "values", "files", "rows", "bytes"]))
        return
    echo(render_record(_summary(metadata.to_dict()), "table"))
    echo("")
    columns = [
        {"column": c.name, "type": c.type, "nullable": "yes" if c.nullable else "no"}
        for c in metadata.columns
    ]
    echo(render_rows(columns, "table"))
    echo("")
    echo(render_rows(partitions, "table", ["partition", "values", "files", "rows", "bytes"]))


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "table": data["table"],
        "format_version": data["format_version"],
        "storage_format": data["storage_format"],
        "layout": data["layout"],
        "primary_key": ",".join(data["primary_key"]),
        "partition_by": ",".join(data["partition_by"]),
        "sort_by": ",".join(data["sort_by"]) or "(unsorted)",
        "partitions": len(data["partitions"]),
        "rows": sum(p["rows"] for p in data["partitions"]),
        "source": data["source"],
    }


COMMANDS = [export, import_, collection]
