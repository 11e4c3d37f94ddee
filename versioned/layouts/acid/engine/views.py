"""Spark SQL views of acid tables: ``SELECT ... FROM db.t`` merges on read, like `read()`.

The view ``db.table`` (`versioned.engine.spark.catalog_views`) reads one private external
table: the table's folder as ORC files of ACID events, one scan for inserts and one for
delete events, and merges them as `events.live_events` does.

Why not one catalog partition per directory, as the version layout registers? The ORC
library takes a bucket file for Hive ACID and reads a requested schema that is not exactly
the six event fields as the ``row`` struct; Spark appends a table's partition columns to the
schema it requests, so a partitioned table cannot read these files. So the private table is
unpartitioned and lists the table folder recursively (``recursiveFileLookup``; hidden
``_staging``, ``_tombstones``, ``_dead_letter`` folders and markers are skipped by Spark,
streaming side files by ``pathGlobFilter``), and the view keeps exactly the snapshot's files:
those the catalog lists for the chosen base and deltas (`snapshot_dirs.snapshot_files`,
matched on each file's path relative to the table, a predicate on ``_metadata.file_path``
that Spark evaluates while listing, so other files are not read), taking each file's
partition values from the catalog. As in `events.read_events`, a condition naming every
event field makes Spark request all six.

A row's write id must be valid in the snapshot's write id list, and a delete event removes
the insert event with the same ROW__ID in the same partition (broadcast when the delete
events are at most ``broadcast_limit``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import SparkSession

from versioned.catalog.records import Snapshot
from versioned.engine.spark.catalog_views import (
    ddl_type,
    literal,
    prepare,
    private,
    quote,
    replace_view,
    shows,
    view_fingerprint,
)
from versioned.layouts.acid import orc_schema as s
from versioned.layouts.acid.snapshot_dirs import BucketFileRef, snapshot_files
from versioned.layouts.acid.write_ids import ValidWriteIdList
from versioned.layouts.engine_protocol import EngineContext
from versioned.schema import TableSpec

BUCKET_FILES = "bucket_[0-9][0-9][0-9][0-9][0-9]{,_[0-9]*}"
"""``pathGlobFilter`` of the private table: bucket files, not ``bucket_N_flush_length``."""
_FILE, _PART = "#file", "#part"


def register_view(
    ctx: EngineContext, spark: SparkSession, snapshot: Snapshot, *, source: str
) -> str:
    """(Re)create the view ``db.table`` over ``snapshot`` in ``spark`` unless it shows it
    already.

    Args:
        spark: The session to register the view in (a query's own session, say).
        source: Identifies the catalog the snapshot comes from (two catalogs may share a
            Spark session and a table name).

    Returns:
        The view's qualified name.
    """
    spec = snapshot.table.spec
    root = ctx.fileio.full_path(snapshot.table.location)
    broadcast_limit = ctx.broadcast_limit
    digest = view_fingerprint(
        snapshot.table, snapshot.seq, source=source, root=root, broadcast_limit=broadcast_limit
    )
    if shows(spark, spec, digest):
        return str(spec.name)
    files = snapshot_files(snapshot, ctx.store.write_ids(spec.name, snapshot.seq))
    broadcast = sum(r.file.row_count for r in files.deletes) <= broadcast_limit
    stem = prepare(spark, spec, digest)
    if not files.inserts:
        return replace_view(spark, spec, _empty(spec), digest, [])
    events = private(f"{stem}_events")
    _events_table(spark, events, spec, root)
    paths = {pid: p.path for pid, p in snapshot.partitions.items()}
    body = merge_sql(
        spec,
        events,
        inserts=_relative(files.inserts),
        deletes=_relative(files.deletes),
        partitions={paths[pid]: p.values for pid, p in snapshot.partitions.items()},
        write_ids=files.write_ids,
        broadcast=broadcast,
    )
    return replace_view(spark, spec, body, digest, [events])


def merge_sql(
    spec: TableSpec,
    events: str,
    *,
    inserts: Sequence[str],
    deletes: Sequence[str],
    partitions: dict[str, tuple[str | None, ...]],
    write_ids: ValidWriteIdList,
    broadcast: bool,
) -> str:
    """The view's query: live rows of the files ``inserts`` minus the delete events of
    ``deletes`` (paths relative to the table), in the table's columns.

    Args:
        events: The private table over the table's folder.
        partitions: Values of each partition, by its path.
    """
    rows = _scan(spec, events, inserts, write_ids)
    columns = [
        f"CAST(p.{quote(f'#p{spec.partition_by.index(c.name)}')} AS {ddl_type(c.type)}) "
        f"AS {quote(c.name)}"
        if c.name in spec.partition_by
        else f"r.{quote(s.ROW)}.{quote(c.name)} AS {quote(c.name)}"
        for c in spec.columns
    ]
    hint = "/*+ BROADCAST(d) */ " if broadcast and deletes else ""
    query = f"SELECT {hint}{', '.join(columns)} FROM ({rows}) r"
    if spec.partition_by:
        numbered = [f"#p{i}" for i in range(len(spec.partition_by))]
        names = ", ".join(quote(n) for n in [_PART, *numbered])
        values = ", ".join(
            "(" + ", ".join([literal(path), *[_value(v) for v in vals]]) + ")"
            for path, vals in sorted(partitions.items())
        )
        query += f" JOIN (VALUES {values}) AS p({names}) ON r.{quote(_PART)} = p.{quote(_PART)}"
    if deletes:
        fields = [s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID, _PART]
        picked = ", ".join(f"{quote(f)} AS {quote('#d' + f)}" for f in fields)
        on = " AND ".join(f"r.{quote(f)} = d.{quote('#d' + f)}" for f in fields)
        query += (
            f" LEFT ANTI JOIN (SELECT {picked} FROM ({_scan(spec, events, deletes, write_ids)}))"
            f" d ON {on}"
        )
    return query


def _scan(spec: TableSpec, events: str, paths: Sequence[str], write_ids: ValidWriteIdList) -> str:
    """The events of exactly the files ``paths`` whose write id is valid, with the file's
    relative path and its partition's path."""
    depth = len(spec.partition_by) + 2  # partition folders, the acid folder, the file
    # The path is a URI: decoded (a '+' in it is a plus, not a space) it is the file's path.
    segments = "split(url_decode(replace(_metadata.file_path, '+', '%2B')), '/')"
    relative = f"array_join(slice({segments}, -{depth}, {depth}), '/')"
    partition = f"array_join(slice({segments}, -{depth}, {depth - 2}), '/')"
    fields = ", ".join(quote(f) for f in (*s.EVENT_FIELDS, s.ROW))
    valid = f"{quote(s.CURRENT_WRITE_ID)} <= {write_ids.high_water_mark}"
    if write_ids.invalid_ids:
        invalid = ", ".join(map(str, write_ids.invalid_ids))
        valid += f" AND {quote(s.CURRENT_WRITE_ID)} NOT IN ({invalid})"
    listed = ", ".join(literal(p) for p in sorted(paths))
    return (
        f"SELECT * FROM (SELECT {fields}, {relative} AS {quote(_FILE)}, "
        f"{partition} AS {quote(_PART)} FROM {events}) "
        f"WHERE {quote(_FILE)} IN ({listed}) AND {_names_every_event_field(spec)} AND {valid}"
    )


def _names_every_event_field(spec: TableSpec) -> str:
    """SQL of `events._names_every_event_field`: true, and names all six event fields."""
    first = f"{quote(s.ROW)}.{quote(spec.data_columns[0].name)}"
    named = [*(quote(f) for f in s.EVENT_FIELDS), first]
    return "greatest(" + ", ".join(f"IF({n} IS NULL, 0, 1)" for n in named) + ") >= 0"


def _events_table(spark: SparkSession, table: str, spec: TableSpec, root: str) -> None:
    row = ", ".join(f"{quote(c.name)}: {ddl_type(c.type)}" for c in spec.data_columns)
    columns = (
        f"{quote(s.OPERATION)} INT, {quote(s.ORIGINAL_WRITE_ID)} BIGINT, {quote(s.BUCKET)} INT, "
        f"{quote(s.ROW_ID)} BIGINT, {quote(s.CURRENT_WRITE_ID)} BIGINT, "
        f"{quote(s.ROW)} STRUCT<{row}>"
    )
    spark.sql(f"DROP TABLE IF EXISTS {table}")  # external: the catalog entry only
    spark.sql(
        f"CREATE TABLE {table} ({columns}) USING orc "
        f"OPTIONS ('recursiveFileLookup' 'true', 'pathGlobFilter' {literal(BUCKET_FILES)}) "
        f"LOCATION {literal(root)}"
    )


def _empty(spec: TableSpec) -> str:
    """A query of no rows in the table's columns (a snapshot without data files)."""
    nulls = [f"CAST(NULL AS {ddl_type(c.type)}) AS {quote(c.name)}" for c in spec.columns]
    columns = ", ".join(nulls)
    return f"SELECT {columns} WHERE false"


def _relative(refs: Sequence[BucketFileRef]) -> list[str]:
    return [r.file.path for r in refs]


def _value(value: str | None) -> str:
    return "CAST(NULL AS STRING)" if value is None else literal(value)
