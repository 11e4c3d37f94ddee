"""Tables and readers of the mutation tests (Hive's TestMutations uses the same shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.layouts.acid.engine.hive_walk import walk
from tests.support.lake_rows import ROW_ID, lake_rows
from versioned import mutation as vm
from versioned.layouts.acid.snapshot_dirs import valid_write_id_list

COLUMNS = "id INT NOT NULL, msg STRING, continent STRING, country STRING"
ASIA_INDIA = ["Asia", "India"]
EUROPE_UK = ["Europe", "UK"]
EUROPE_FRANCE = ["Europe", "France"]


def alerts(cat: Any, name: str = "m.alerts", *, partitioned: bool = True, **options: Any) -> Any:
    """An acid table of alerts, bucketed by ``id`` into 2 buckets (partitioned by continent
    and country unless ``partitioned=False``)."""
    args: dict[str, Any] = {
        "columns": COLUMNS if partitioned else "id INT NOT NULL, msg STRING",
        "primary_key": "continent,country,id" if partitioned else "id",
        "layout": "acid",
        "bucket_by": "id",
        "buckets": 2,
    }
    if partitioned:
        args["partition_by"] = "continent,country"
    args.update(options)
    return cat.create_table(name, **args)


def rows(table: Any) -> list[tuple[Any, ...]]:
    """Live rows read without Spark (catalog snapshot and pyarrow, as the client reads):
    (partition..., id, msg, (writeid, bucketid, rowid)), sorted."""
    out = []
    for d in lake_rows(table, with_row_id=True):
        key = tuple(d[p] for p in table.spec.partition_by)
        out.append((*key, d["id"], d["msg"], d[ROW_ID]))
    return sorted(out, key=repr)


def spark_rows(table: Any) -> list[tuple[Any, ...]]:
    """`rows` as ``Table.read(with_row_id=True)`` reads them (Spark)."""
    out = []
    for r in table.read(with_row_id=True).collect():
        d = r.asDict()
        row_id = d.pop("ROW__ID")
        key = tuple(d.get(p) for p in table.spec.partition_by)
        out.append((*key, d["id"], d["msg"], (row_id.writeid, row_id.bucketid, row_id.rowid)))
    return sorted(out, key=repr)


def values(table: Any) -> list[tuple[Any, ...]]:
    """Live rows without ROW__IDs: (partition..., id, msg), sorted."""
    return sorted((r[:-1] for r in rows(table)), key=repr)


def hive_values(cat: Any, table: Any) -> list[tuple[Any, ...]]:
    """The live rows as Hive's reader finds them on storage (directory walk)."""
    snapshot = table.snapshot()
    ids = valid_write_id_list(cat.engine_context.store.write_ids(table.name, snapshot.seq))
    table_dir = Path(
        cat.engine_context.fileio.full_path(table.info.location).removeprefix("file://")
    )
    found = walk(table_dir, table.spec, ids)
    return sorted((*[r[p] for p in table.spec.partition_by], r["id"], r["msg"]) for r in found)


def ids_in_bucket(table: Any, bucket: int, count: int) -> list[int]:
    """The first ``count`` ids that Hive's hash puts in ``bucket``."""
    resolver = vm.BucketIdResolver(table)
    found = [i for i in range(1, 200) if resolver.bucket_of({"id": i}) == bucket]
    return found[:count]


def record(resolver: vm.BucketIdResolver, id_: int, msg: str, **more: Any) -> dict[str, Any]:
    """A record to insert, with its bucket attached."""
    return resolver.attach_bucket_id({"id": id_, "msg": msg, **more})


def prop(bucket: int) -> int:
    """The BucketCodec V1 property of a bucket (statement 0)."""
    return (1 << 29) | (bucket << 16)


def begun(cat: Any, *names: str, **options: Any) -> vm.Transaction:
    """A begun transaction of a new client over ``names`` (default ``m.alerts``); its
    client is ``txn.client``."""
    client = vm.MutatorClient(cat, tables=list(names or ["m.alerts"]), **options)
    txn = client.new_transaction()
    txn.begin()
    return txn
