"""A version-layout table on an S3 warehouse, in a process of its own (its Spark has the S3A
jars): create it, upsert two batches (the second updates and deletes), read it and travel back
in time, counting the S3 requests of each step from the server's log. Prints JSON.

    python s3_probe.py WAREHOUSE CATALOG_URL REQUEST_LOG
(the AWS settings and VERSIONED_SPARK_JARS come from the environment)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa

import versioned
from tests.support.s3_server import logged_requests, request_counts


def main() -> None:
    warehouse, catalog_url, log = sys.argv[1], sys.argv[2], Path(sys.argv[3])

    def counts() -> dict[str, int]:
        found = request_counts(logged_requests(log))
        log.write_text("")
        return {kind: n for kind, n in found.items() if n}

    cat = versioned.connect(catalog=catalog_url, warehouse=warehouse, spark_master="local[2]")
    t = cat.create_table(
        "db.t", columns="id BIGINT, v STRING, p STRING", primary_key="id", partition_by="p"
    )
    spark = cat.spark
    steps: dict[str, dict[str, int]] = {"create": counts()}
    first = spark.createDataFrame(
        [(i, f"v{i}", "a" if i % 2 else "b") for i in range(200)], "id long, v string, p string"
    )
    v1 = t.upsert(first).version
    steps["upsert 1"] = counts()
    second = pa.table(
        {
            "op": ["U", "U", "D", "I"],
            "id": pa.array([1, 2, 3, 500], pa.int64()),
            "v": ["x1", "x2", None, "x500"],
            "p": ["a", "b", "a", "b"],
        }
    )
    t.upsert(second, op_code_column="op")
    steps["upsert 2"] = counts()
    rows = sorted(tuple(r) for r in t.read().collect())
    steps["read"] = counts()
    before = t.read(as_of=v1).count()
    steps["time travel"] = counts()
    bulk = cat.create_table(
        "db.bulk",
        columns="id BIGINT, v STRING, p STRING",
        primary_key="id",
        partition_by="p",
        properties={"write.bulk_load_min_bytes": "0"},  # the tasks write it: the bulk load
    )
    said: list[str] = []
    rows_by_spark = spark.range(0, 20_000, 1, 2).selectExpr(
        "id", "concat('v', id) AS v", "IF(id % 2 = 1, 'a', 'b') AS p"
    )
    loaded = bulk.upsert(rows_by_spark, progress=said.append)
    steps["bulk load"] = counts()
    bulk_rows = bulk.read().count()
    counts()
    # A table whose every batch Spark's tasks write (write.driver_max_rows=0), and whose
    # compaction is Spark's (an ordering column: its tombstones are kept by a Spark job).
    ordered = cat.create_table(
        "db.ordered",
        columns="id BIGINT, v STRING, p STRING, ts BIGINT",
        primary_key="id",
        partition_by="p",
        ordering_column="ts",
        properties={"write.driver_max_rows": "0"},
    )
    counts()
    for ts in (1, 2):
        ordered.upsert(
            spark.range(0, 4_000, 1, 2).selectExpr(
                "id", f"concat('v{ts}-', id) AS v", "IF(id % 2 = 1, 'a', 'b') AS p", f"{ts} AS ts"
            )
        )
        steps[f"spark upsert {ts}"] = counts()
    compacted = ordered.compact()
    steps["spark compaction"] = counts()
    ordered_rows = sorted(tuple(r) for r in ordered.read().where("id < 2").collect())
    print(
        json.dumps(
            {
                "location": t.describe()["location"],
                "rows": len(rows),
                "some": [list(r) for r in rows if r[0] in (1, 2, 3, 500)],
                "as_of_first": before,
                "bulk": {
                    "inserted": loaded.inserted,
                    "rows": bulk_rows,
                    "said": said,
                    "files": len(bulk.snapshot().files),
                },
                "ordered": {
                    "compacted": compacted.compacted,
                    "rows": [list(r) for r in ordered_rows],
                    "files": [f.path for f in ordered.snapshot().files if f.kind == "data"],
                },
                "requests": steps,
                "filesystem": spark._jvm.org.apache.hadoop.fs.FileSystem.get(
                    spark._jvm.java.net.URI(t.describe()["location"]),
                    spark._jsc.hadoopConfiguration(),
                )
                .getClass()
                .getName(),
            }
        )
    )


if __name__ == "__main__":
    main()
