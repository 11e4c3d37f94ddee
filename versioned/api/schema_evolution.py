"""``upsert(..., evolve=True)``: add the input's new columns to the table, then read the feed.

The columns are added by an ``alter`` commit of their own just before the data's commit,
and only once the whole feed is known to fit the table with them (every other whole-batch
problem fails first, with nothing changed). If the data write fails after that, the table
keeps the new, nullable columns: every version reads as before, with nulls in them, and
running the upsert again writes the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from versioned.catalog.records import TableInfo
from versioned.errors import SchemaError
from versioned.schema import Column
from versioned.schema_changes import SchemaChange, evolve

if TYPE_CHECKING:
    from versioned.api.table import Table
    from versioned.engine.feeds.reader import Feed

_MAX_ROUNDS = 50
"""CSV headers are checked file by file: each round may find another file's new columns."""


def read_feed_evolving(
    table: Table, changes: Any, *, format: str | None, op_code_column: str | None
) -> tuple[TableInfo, Feed]:
    """Read ``changes`` for ``table``, first adding the input columns the table lacks.

    Returns:
        The table as it is now (with the added columns) and the feed read against it.

    Raises:
        SchemaError: The feed does not fit the table for a reason other than new columns,
            or a new column's type cannot be told; the table is unchanged.
    """
    from versioned.engine.feeds.columns import new_columns
    from versioned.engine.feeds.reader import read_feed

    spark = table.catalog.spark
    info = table.info
    wanted = info.spec
    added: list[Column] = []
    for _ in range(_MAX_ROUNDS):
        try:
            feed = read_feed(
                spark,
                changes,
                wanted,
                format=format,  # type: ignore[arg-type]
                op_code_column=op_code_column,
            )
            break
        except SchemaError as err:
            unknown = tuple(getattr(err, "unknown", None) or ())
            if not unknown:
                raise
            columns = new_columns(spark, changes, format, unknown)
            wanted = evolve(wanted, SchemaChange(add=columns))
            added += columns
    else:
        raise SchemaError(f"the feed keeps naming new columns after {_MAX_ROUNDS} rounds")
    if not added:
        return info, feed
    table.catalog.store.alter_table(
        info.spec.name, SchemaChange(add=tuple(added)), reason="upsert with evolve"
    )
    info = table.refresh().info
    if info.spec != wanted:  # another change committed in between: read against the table
        feed = read_feed(
            spark,
            changes,
            info.spec,
            format=format,  # type: ignore[arg-type]
            op_code_column=op_code_column,
        )
    return info, feed
