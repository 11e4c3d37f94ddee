"""Row-level deletes by predicate: the live rows a filter matches, as delete changes."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

DELETE_OP_COLUMN = "__versioned_delete_op"
"""The op-code column of the change batch a delete builds (every row holds ``D``)."""


def delete_changes(matching: DataFrame) -> DataFrame:
    """``matching`` (live rows of a table, every column) as a batch of delete changes."""
    return matching.withColumn(DELETE_OP_COLUMN, F.lit("D"))
