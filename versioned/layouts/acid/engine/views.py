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
those the catalog lists for the chosen base and deltas (`snapshot_dirs.snapshot_files`),
by a predicate on ``_metadata.file_path`` that Spark evaluates while listing, so other files
are not read. Registering the view lists the folder once to learn the URI Spark gives each
of those files; each row then takes its partition (the catalog's id and values) from a
join of its file's URI to a small table of the snapshot's files. As in
`events.read_events`, a condition naming every event field makes Spark request all six.

A row's write id must be valid in the snapshot's write id list, and a delete event removes
the insert event with the same ROW__ID in the same partition (broadcast when the delete
events are at most ``broadcast_limit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote

from pyspark.sql import SparkSession

from versioned.catalog.records import Snapshot
from versioned.engine.spark.catalog_views import (
    ddl_type,
    literal,
    prepare,
    private,
    quote,
    replace_view,
    stale_digest,
)
from versioned.errors import StorageError
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
    already (`TableEngine.register_view`); returns its qualified name."""
    spec = snapshot.table.spec
    root = ctx.fileio.full_path(snapshot.table.location)
    broadcast_limit = ctx.broadcast_limit
    digest = stale_digest(
        spark, snapshot, source=source, root=root, broadcast_limit=broadcast_limit
    )
    if digest is None:
        return str(spec.name)
    files = snapshot_files(snapshot, ctx.store.write_ids(spec.name, snapshot.seq))
    broadcast = sum(r.file.row_count for r in files.deletes) <= broadcast_limit
    stem = prepare(spark, spec, digest)
    if not files.inserts:
        return replace_view(spark, spec, _empty(spec), digest, [])
    events = private(f"{stem}_events")
    _events_table(spark, events, spec, root)
    refs = [*files.inserts, *files.deletes]
    uris = _file_tails(spark, events, spec, refs)
    body = merge_sql(
        spec,
        events,
        inserts=[uris[r.file.path] for r in files.inserts],
        deletes=[uris[r.file.path] for r in files.deletes],
        files={
            uris[r.file.path]: _partition_of(snapshot, r) for r in files.inserts + files.deletes
        },
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
    files: dict[str, tuple[int, tuple[str | None, ...]]],
    write_ids: ValidWriteIdList,
    broadcast: bool,
) -> str:
    """The view's query: live rows of the files ``inserts`` minus the delete events of
    ``deletes`` (the tails of their URIs: `_file_tails`), in the table's columns.

    Each row gets its partition (the catalog's id and values) from a join of its file's tail
    to ``files`` (tail -> partition id, values), a small table Spark broadcasts: per row that
    is one hash of the tail, where splitting and URL-decoding the path of every row cost
    about 1.5 s per 1M rows (`benchmarks/results/continuous_notes.md`).

    Args:
        events: The private table over the table's folder.
    """
    rows = _scan(spec, events, inserts, write_ids)
    columns = [
        f"CAST(f.{quote(f'#p{spec.partition_by.index(c.name)}')} AS {ddl_type(c.type)}) "
        f"AS {quote(c.name)}"
        if c.name in spec.partition_by
        else f"r.{quote(s.ROW)}.{quote(c.name)} AS {quote(c.name)}"
        for c in spec.columns
    ]
    hint = "/*+ BROADCAST(d) */ " if broadcast and deletes else ""
    file_table = _files_values(spec, files)
    query = f"SELECT {hint}{', '.join(columns)} FROM ({rows}) r"
    query += f" JOIN {file_table} ON r.{quote(_FILE)} = f.{quote(_FILE)}"
    if deletes:
        fields = [s.ORIGINAL_WRITE_ID, s.BUCKET, s.ROW_ID]
        picked = ", ".join(f"e.{quote(f)} AS {quote('#d' + f)}" for f in fields)
        on = " AND ".join(f"r.{quote(f)} = d.{quote('#d' + f)}" for f in fields)
        query += (
            f" LEFT ANTI JOIN (SELECT {picked}, f.{quote(_PART)} AS {quote('#d' + _PART)}"
            f" FROM ({_scan(spec, events, deletes, write_ids)}) e"
            f" JOIN {file_table} ON e.{quote(_FILE)} = f.{quote(_FILE)})"
            f" d ON {on} AND f.{quote(_PART)} = d.{quote('#d' + _PART)}"
        )
    return query


def _files_values(spec: TableSpec, files: dict[str, tuple[int, tuple[str | None, ...]]]) -> str:
    """``(VALUES (uri, partition id, values...), ...) AS f(...)``."""
    numbered = [f"#p{i}" for i in range(len(spec.partition_by))]
    names = ", ".join(quote(n) for n in [_FILE, _PART, *numbered])
    values = ", ".join(
        "(" + ", ".join([literal(uri), f"CAST({pid} AS BIGINT)", *map(_value, vals)]) + ")"
        for uri, (pid, vals) in sorted(files.items())
    )
    return f"(VALUES {values}) AS f({names})"


def _scan(spec: TableSpec, events: str, tails: Sequence[str], write_ids: ValidWriteIdList) -> str:
    """The events of exactly the files whose path ends in one of ``tails`` (`_file_tails`)
    and whose write id is valid, with that tail as `_FILE`.

    The condition on ``_metadata.file_path`` is a constant per file: Spark evaluates it while
    listing, so the other files under the folder (retired ones vacuum has not deleted yet,
    the delete events when inserts are read) are not opened. Per row it costs one cut of
    the path from its end (no decoding), and one hash."""
    depth = len(spec.partition_by) + 2  # partition folders, the acid folder, the file
    fields = ", ".join(quote(f) for f in (*s.EVENT_FIELDS, s.ROW))
    valid = f"{quote(s.CURRENT_WRITE_ID)} <= {write_ids.high_water_mark}"
    if write_ids.invalid_ids:
        invalid = ", ".join(map(str, write_ids.invalid_ids))
        valid += f" AND {quote(s.CURRENT_WRITE_ID)} NOT IN ({invalid})"
    listed = ", ".join(literal(p) for p in sorted(tails))
    tail = f"substring_index(_metadata.file_path, '/', -{depth})"
    return (
        f"SELECT * FROM (SELECT {fields}, {tail} AS {quote(_FILE)} FROM {events}) "
        f"WHERE {quote(_FILE)} IN ({listed}) AND {_names_every_event_field(spec)} AND {valid}"
    )


def _file_tails(
    spark: SparkSession, events: str, spec: TableSpec, refs: Sequence[BucketFileRef]
) -> dict[str, str]:
    """The tail of the URI Spark gives each file of ``refs`` (its partition folders, acid
    folder and name, percent-encoded as in ``_metadata.file_path``), by the file's path
    relative to the table, from one listing of the private table's folder (as a query of the
    view lists it). Only the tail: the scheme's part may be written differently
    (``file:///`` in the listing, ``file:/`` in ``_metadata.file_path``).

    Raises:
        StorageError: A file of the snapshot is not in the table's folder.
    """
    depth = len(spec.partition_by) + 2  # partition folders, the acid folder, the file
    tails = ["/".join(uri.split("/")[-depth:]) for uri in spark.table(events).inputFiles()]
    # The URI percent-encodes the escaped folder names; decoded, the tail is the relative path.
    by_path = {unquote(tail): tail for tail in tails}
    missing = sorted(r.file.path for r in refs if r.file.path not in by_path)
    if missing:
        raise StorageError(
            f"{len(missing)} bucket file(s) of the snapshot are missing from the table's "
            f"folder, e.g. {missing[0]}",
            table=str(spec.name),
        )
    return {r.file.path: by_path[r.file.path] for r in refs}


def _partition_of(snapshot: Snapshot, ref: BucketFileRef) -> tuple[int, tuple[str | None, ...]]:
    """The catalog's id and values of the partition of ``ref``'s file."""
    pid = ref.file.partition_id
    if pid is None:  # an unpartitioned table's files: one partition
        return 0, ()
    return pid, snapshot.partitions[pid].values


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
