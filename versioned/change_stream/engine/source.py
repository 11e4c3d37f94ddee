"""``spark.readStream.format("versioned")``: a table's committed changes as a stream.

A PySpark Python data source. Spark pickles the class and runs it in processes of its own,
with no SparkSession in any of them: `ChangeStreamSource.schema` and the reader's offset and
planning methods run in planner processes on the driver (they read the catalog), and
`ChangeStreamReader.read` runs in executor Python workers (it reads files with pyarrow).

Offsets are ``{"table_id": T, "seq": S}``: the table's commit counter after the last commit
a micro-batch covers (``history()`` is in that order). Each commit with changes is one
input partition (`commit_tasks`), so executors share a micro-batch's commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from versioned.catalog.store import MetaStore
from versioned.change_stream.change_rows import (
    CHANGE_COLUMNS,
    CHANGE_TYPE,
    COMMIT_SEQ,
    COMMIT_TIMESTAMP,
    COMMIT_VERSION,
    output_schema,
)
from versioned.change_stream.commit_changes import commit_changes
from versioned.change_stream.commit_tasks import plan_tasks
from versioned.change_stream.options import (
    CATALOG,
    LATEST,
    TABLE,
    USER,
    WAREHOUSE,
    StreamOptions,
    stream_options,
)
from versioned.config import Settings
from versioned.engine.spark.python_workers import require_python_workers
from versioned.engine.spark.types import spark_type
from versioned.errors import InputError, SchemaError
from versioned.layouts.change_task import CommitTask
from versioned.schema import Column, TableSpec, normalise_type

FORMAT = "versioned"
TYPE_KEY = "versioned.type"
"""Field metadata carrying a column's type as the table declares it (``VARCHAR(10)``)."""
_BATCH_ROWS = 64 * 1024

try:  # pyspark >= 4.2: admission control
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )
except ImportError:  # pragma: no cover - older pyspark calls latestOffset() bare
    ReadAllAvailable = ReadMaxRows = None  # type: ignore[assignment, misc]

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        """Stand-in: older pyspark has no admission control."""


def stream_schema(spec: TableSpec) -> T.StructType:
    """The stream's Spark schema: the table's columns (nullable), then the change columns.

    Raises:
        SchemaError: A column of the table has the name of a change column.
    """
    clash = sorted(set(spec.column_names) & set(CHANGE_COLUMNS))
    if clash:
        raise SchemaError(
            f"{spec.name} has columns named like the change stream's own "
            f"({', '.join(clash)}); its changes cannot be streamed",
            table=str(spec.name),
        )
    fields = [
        T.StructField(c.name, spark_type(c.type), True, {TYPE_KEY: c.type}) for c in spec.columns
    ]
    fields += [
        T.StructField(CHANGE_TYPE, T.StringType()),
        T.StructField(COMMIT_VERSION, T.LongType()),
        T.StructField(COMMIT_TIMESTAMP, T.TimestampType()),
        T.StructField(COMMIT_SEQ, T.LongType()),
    ]
    return T.StructType(fields)


def stream_columns(schema: T.StructType) -> tuple[Column, ...]:
    """The table's columns as the stream's schema fixed them."""
    return tuple(
        Column(f.name, f.metadata.get(TYPE_KEY) or normalise_type(f.dataType.simpleString()))
        for f in schema.fields
        if f.name not in CHANGE_COLUMNS
    )


class ChangeStreamSource(DataSource):
    """The ``versioned`` data source: the committed changes of ``option("table")``."""

    defaults: ClassVar[Mapping[str, str]] = {}
    """Options a registration for a catalog bakes in (`register_data_source`)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> T.StructType:
        options = self._resolved()
        store = _connect(options.settings)
        try:
            info = store.table(options.table)  # needs read; NoSuchTableError names it
            if isinstance(options.starting_version, int):  # a missing one fails at load()
                store.first_seq_of(options.table, options.starting_version)
        finally:
            store.close()
        return stream_schema(info.spec)

    def streamReader(self, schema: T.StructType) -> ChangeStreamReader:
        return ChangeStreamReader(self._resolved(), schema)

    def _resolved(self) -> StreamOptions:
        return stream_options(dict(self.options), self.defaults)


class CommitPartition(InputPartition):
    """One input partition: one commit (or some partitions of a big one)."""

    def __init__(self, task: CommitTask) -> None:
        super().__init__(task.stamp.seq)
        self.task = task


class ChangeStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets from the catalog, one partition per commit, rows read on executors."""

    def __init__(self, options: StreamOptions, schema: T.StructType) -> None:
        self.options = options
        self.schema = schema
        self.columns = stream_columns(schema)
        self._store: MetaStore | None = None
        self._until: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_store"] = None  # a catalog connection does not travel to executors
        return state

    @property
    def store(self) -> MetaStore:
        """The catalog, connected on first use (in the driver's planner process)."""
        if self._store is None:
            self._store = _connect(self.options.settings)
        return self._store

    def initialOffset(self) -> dict[str, int]:
        head = self.store.head(self.options.table)
        start = self.options.starting_version
        if start is None:
            seq = 0
        elif start == LATEST:
            seq = head.seq
        else:
            seq = self.store.first_seq_of(self.options.table, int(start)) - 1
        return {"table_id": head.table_id, "seq": seq}

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, int]:
        head = self.store.head(self.options.table)
        if start is not None:
            self._check_same_table(start, head.table_id)
        seq = head.seq if self._until is None else min(head.seq, self._until)
        most = self._commits_per_batch(limit)
        if start is not None and most is not None:
            seq = min(seq, int(start["seq"]) + most)
        return {"table_id": head.table_id, "seq": seq}

    def prepareForTriggerAvailableNow(self) -> None:
        """``trigger(availableNow=True)``: read up to the commit that is latest now, in
        micro-batches of at most ``maxCommitsPerTrigger`` commits."""
        self._until = self.store.head(self.options.table).seq

    def getDefaultReadLimit(self) -> Any:
        if self.options.max_commits is None or ReadMaxRows is None:
            return ReadAllAvailable()
        return ReadMaxRows(self.options.max_commits)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        after, until = int(start["seq"]), int(end["seq"])
        if until <= after:
            return []
        log = self.store.change_log(self.options.table, after, until)
        self._check_same_table(end, log.table.id)
        tasks = plan_tasks(log, self.columns, self.options.settings.warehouse)
        return [CommitPartition(task) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, CommitPartition)
        rows = commit_changes(partition.task, output_schema(self.columns))
        yield from rows.to_batches(max_chunksize=_BATCH_ROWS)

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to release: the catalog keeps every commit until vacuum."""

    def stop(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _commits_per_batch(self, limit: Any) -> int | None:
        if limit is None:  # pyspark before 4.2 passes no limit
            return self.options.max_commits
        if ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
            return int(limit.max_rows)
        return None

    def _check_same_table(self, offset: Mapping[str, Any], table_id: int) -> None:
        if int(offset.get("table_id", table_id)) != table_id:
            raise InputError(
                f"{self.options.table} was dropped and created again since this stream's "
                "checkpoint was written; read the new table with a new checkpoint location",
                table=str(self.options.table),
            )


def register_data_source(spark: Any, settings: Settings | None = None) -> None:
    """Register ``format("versioned")`` in ``spark`` (per session; the latest registration
    wins). With ``settings`` (a catalog's), streams default to that catalog, warehouse and
    user; options given to a stream still win."""
    require_python_workers(spark)  # the source's reader runs in Python workers
    source: type[ChangeStreamSource] = ChangeStreamSource
    if settings is not None:
        defaults = {
            CATALOG: settings.catalog_url,
            WAREHOUSE: settings.warehouse,
            USER: settings.user,
        }
        # A class of its own, pickled by value with its defaults into the session.
        source = type(
            "CatalogChangeStreamSource",
            (ChangeStreamSource,),
            {"defaults": defaults, "__module__": __name__},
        )
    spark.dataSource.register(source)


def _connect(settings: Settings) -> MetaStore:
    return MetaStore.connect(settings.catalog_url, settings.user, create=False)


__all__ = ["FORMAT", "TABLE", "ChangeStreamSource", "register_data_source"]
