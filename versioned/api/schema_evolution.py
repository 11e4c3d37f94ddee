"""``upsert(..., evolve=True)``: add the input's new columns to the table, then read the feed.

The columns are added by an ``alter`` commit of their own just before the data's commit,
and only once the whole feed is known to fit the table with them (every other whole-batch
problem fails first, with nothing changed). If the data write fails after that, the table
keeps the new, nullable columns: every version reads as before, with nulls in them, and
running the upsert again writes the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from versioned.errors import SchemaError
from versioned.schema import Column, TableSpec
from versioned.schema_changes import SchemaChange, evolve

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from versioned.engine.feeds.reader import Feed

_MAX_ROUNDS = 50
"""CSV headers are checked file by file: each round may find another file's new columns."""


@dataclass(frozen=True)
class EvolvedFeed:
    """A feed read against the table with the input's new columns.

    Attributes:
        feed: The feed, read against ``spec``.
        spec: The table's definition with the new columns added.
        added: The columns to add (none: the feed fits the table as it is).
    """

    feed: Feed
    spec: TableSpec
    added: tuple[Column, ...]


def read_feed_evolving(
    spark: SparkSession,
    changes: Any,
    spec: TableSpec,
    *,
    format: str | None,
    op_code_column: str | None,
) -> EvolvedFeed:
    """Read ``changes`` for the table ``spec``, adding the input columns it lacks.

    The caller adds ``added`` to the table (an ``alter`` commit) before it writes the feed.

    Raises:
        SchemaError: The feed does not fit the table for a reason other than new columns,
            or a new column's type cannot be told; the table is unchanged.
    """
    from versioned.engine.feeds.columns import new_columns
    from versioned.engine.feeds.reader import read_feed

    wanted = spec
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
    return EvolvedFeed(feed, wanted, tuple(added))
