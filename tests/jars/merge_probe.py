"""A Spark session of its own with one table format's jars: it creates a table, applies a
change batch with ``MERGE INTO`` (an update, a delete, an insert), has versioned upsert the same
rows and batch in the same session, and prints what each reads back as JSON.
tests/jars/test_runtimes.py runs it with the Python of the format's Spark line
(benchmarks/harness/jars.py: `spark_python`), whose virtualenv holds that line's PySpark and
versioned: the peer and versioned run side by side there, as the benchmarks run them.

    python merge_probe.py delta|iceberg SPARK_JARS WAREHOUSE
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def settings(fmt: str, warehouse: str) -> tuple[dict[str, str], str]:
    """The session settings of the format ``fmt`` and the name of its test table."""
    if fmt == "delta":
        return {
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "spark.databricks.delta.snapshotPartitions": "1",
        }, f"delta.`{warehouse}/t`"
    return {  # iceberg: a Hadoop catalog in the warehouse folder
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lake.type": "hadoop",
        "spark.sql.catalog.lake.warehouse": warehouse,
    }, "lake.db.t"


def upserted(spark: SparkSession, warehouse: str) -> list[list[object]]:
    """The rows of a versioned table after the probe's first rows and change batch."""
    import versioned

    catalog = versioned.connect(warehouse=warehouse, spark=spark)
    table = catalog.create_table(
        "probe.t", columns="id BIGINT, v STRING", primary_key=["id"], op_code_column="op"
    )
    table.upsert(
        spark.sql(
            "SELECT * FROM VALUES (1, 'a', 'I'), (2, 'a', 'I'), (3, 'a', 'I') AS s(id, v, op)"
        )
    )
    table.upsert(spark.table("changes"))
    rows = sorted([row.id, row.v] for row in table.read().collect())
    catalog.close()
    return rows


def main(fmt: str, jars: str, warehouse: str) -> None:
    conf, table = settings(fmt, warehouse)
    builder = SparkSession.builder.master("local[1]").appName(f"versioned-{fmt}-probe")
    conf |= {
        "spark.jars": jars,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "1",
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sql(f"CREATE TABLE {table} (id BIGINT, v STRING) USING {fmt}")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'a'), (3, 'a')")
    spark.sql(
        "SELECT * FROM VALUES (2, 'b', 'U'), (3, CAST(NULL AS STRING), 'D'), (4, 'b', 'I') "
        "AS s(id, v, op)"
    ).createOrReplaceTempView("changes")
    spark.sql(
        f"MERGE INTO {table} t USING changes s ON t.id = s.id "
        "WHEN MATCHED AND s.op = 'D' THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT (id, v) VALUES (s.id, s.v)"
    )
    rows = sorted([row.id, row.v] for row in spark.table(table).collect())
    if fmt == "delta":
        history = spark.sql(f"DESCRIBE HISTORY {table}").orderBy("version").collect()
        operations = [row.operation for row in history]
    else:
        snapshots = spark.sql(f"SELECT * FROM {table}.snapshots ORDER BY committed_at").collect()
        operations = [row.operation for row in snapshots]
    print(
        json.dumps(
            {
                "spark": spark.version,
                "rows": rows,
                "operations": operations,
                "versioned": upserted(spark, f"{warehouse}/versioned"),
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
