"""Reading a table's changes as a stream: registering ``format("versioned")`` in a session."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from versioned.api.catalog import Catalog
    from versioned.api.table import Table


def register_data_source(spark: SparkSession, catalog: Catalog | None = None) -> None:
    """Make ``spark.readStream.format("versioned")`` available in ``spark``.

    Registration is per session (the latest wins) and costs about a second the first time
    in a JVM, when Spark looks for Python data sources. With ``catalog``, streams default
    to its catalog URL, warehouse and user; without, to the ``VERSIONED_*`` environment of
    Spark's Python processes. Options given to a stream win either way.
    """
    from versioned.change_stream.engine.source import register_data_source as register

    register(spark, None if catalog is None else catalog.settings)


def change_stream(
    table: Table,
    *,
    starting_version: int | str | None = None,
    max_commits_per_trigger: int | None = None,
) -> DataFrame:
    """The streaming DataFrame of ``table``'s changes (see `Table.change_stream`)."""
    from versioned.change_stream.engine.source import FORMAT

    catalog = table.catalog
    settings = catalog.settings
    spark = catalog.spark
    register_data_source(spark, catalog)
    reader = (
        spark.readStream.format(FORMAT)
        .option("table", str(table.name))
        .option("catalog", settings.catalog_url)
        .option("warehouse", settings.warehouse)
        .option("user", settings.user)
    )
    if starting_version is not None:
        reader = reader.option("startingVersion", str(starting_version))
    if max_commits_per_trigger is not None:
        reader = reader.option("maxCommitsPerTrigger", str(max_commits_per_trigger))
    return reader.load()
