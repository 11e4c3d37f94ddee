"""The rows of a query's DataFrame as plain records, for a caller that prints them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def collected_rows(
    frame: DataFrame, *, limit: int = 0, what: str = "query"
) -> tuple[list[str], list[dict[str, Any]]]:
    """The column names and the rows (up to ``limit``; 0: all) of ``frame``, as dicts.

    Values Python cannot hold (a date past year 9999) come as Spark prints them.

    Raises:
        QueryError: Spark failed to run the query (the message names ``what``).
    """
    from versioned.engine.spark.display import displayable
    from versioned.engine.spark.errors import user_query_errors

    shown = displayable(frame)
    with user_query_errors(what):
        rows = shown.limit(limit).collect() if limit > 0 else shown.collect()
    return list(shown.columns), [r.asDict() for r in rows]
