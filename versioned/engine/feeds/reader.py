"""Reading change feeds: files, DataFrames or Arrow tables in, typed rows and dead letters out.

`read_feed` returns a `Feed` of two lazy DataFrames. Only schema work runs Spark jobs here:
the header of each CSV file, one pass over JSON input to learn its keys, the Parquet footers.
Input order (``_seq``) is described in `versioned.engine.feeds.files`; for a DataFrame (or Arrow
table) it is the DataFrame's partition order, then row order within each partition, so a
DataFrame straight out of a shuffle has no meaningful order (give such tables an ordering
column). Values convert to the table's types as `versioned.engine.feeds.rows` describes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeGuard

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.debezium import DebeziumEvents, debezium_rows
from versioned.engine.feeds.debezium_options import DebeziumOptions
from versioned.engine.feeds.files import (
    FEED_FORMATS,
    describe,
    feed_paths,
    format_from_names,
    list_feed_files,
    scan_in_order,
)
from versioned.engine.feeds.rows import (
    IN_COERCED,
    IN_KEEP,
    IN_MALFORMED,
    IN_PROBLEMS,
    IN_RAW,
    IN_RECORD,
    IN_SEQ,
    IN_SOURCE,
    OP,
    RAW,
    REASON,
    SEQ,
    SOURCE,
    ObservedCount,
    op_input,
    split_rows,
)
from versioned.engine.feeds.schema import ColumnMapping, map_columns
from versioned.engine.feeds.text import JsonRecords, json_records, read_csv, read_json_lines
from versioned.engine.spark.types import spark_schema
from versioned.errors import InputError, SchemaError
from versioned.schema import TableSpec

if TYPE_CHECKING:
    import pyarrow as pa

FeedFormat: TypeAlias = Literal["csv", "json", "parquet", "debezium"]
EVENT_TEXT_COLUMN = "value"
"""A DataFrame of this one STRING or BINARY column is Debezium events as JSON text when the
format is ``debezium`` (Kafka's record values; a null value is a tombstone)."""
FeedSource: TypeAlias = (
    "DataFrame | pa.Table | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]"
)


@dataclass(frozen=True, eq=False)
class Feed:
    """A normalised change batch; both DataFrames are lazy.

    Attributes:
        rows: The table's columns (in table order, cast to the table's types), ``_op``
            (``I``, ``U`` or ``D``) and ``_seq`` (long, increasing in input order).
        reject: Builds `rejected` (its reasons are many expressions, built only when the
            dead letters are written).
        filled_columns: Table columns a partial update lacks; rows keep their stored values.
        rejections: Counts the rejected (and the coerced) rows while the first action on
            ``rows`` reads it (None: no observation, count ``rejected`` instead; so also
            when Spark reports no counts). The count is exact only if
            that first action reads every row: the writer's first action is the whole
            deduplicated batch, and nothing reads ``rows`` before it.

        keeps: ``rows`` has a ``#keep`` column: per row, the columns whose stored value it
            keeps (partial updates, unchanged TOAST values). `versioned.engine.feeds.kept_values`
            fills them in before the batch is written.
        events: Debezium tombstones and truncates (Debezium feeds only).
        source: What the feed is (a file URI, ``DataFrame``), for messages.
        checked: Every row, applicable or not, unobserved (`SplitRows.checked`), for a
            writer that counts the rejected, deleted and coerced rows in what it writes
            (``rejections`` then counts nothing); None for a feed made otherwise.
    """

    rows: DataFrame
    reject: Callable[[], DataFrame]
    filled_columns: tuple[str, ...] = ()
    rejections: ObservedCount | None = None
    keeps: bool = False
    events: DebeziumEvents | None = None
    source: str = ""
    checked: DataFrame | None = None

    @property
    def rejected(self) -> DataFrame:
        """Dead letters with ``_raw`` (the exact line for JSON and unparseable CSV records;
        otherwise the record re-rendered as a CSV line or, for Parquet and DataFrames, as a
        JSON object), ``_reason`` and ``_source`` (the file URI, or ``DataFrame`` /
        ``pyarrow.Table``); lazy."""
        return self.reject()

    def rejected_count(self) -> int | None:
        """The rejected rows counted while ``rows`` was read, or None if unknown yet."""
        return self.rejections.value() if self.rejections is not None else None

    def coerced_count(self) -> int:
        """Applied rows whose values were coerced by the table's lenient conversion
        properties (``round_decimals``, ``replace_invalid_utf8``), counted while ``rows``
        was read; 0 before that."""
        counted = self.rejections.value("coerced") if self.rejections is not None else None
        return counted or 0

    def delete_count(self) -> int | None:
        """The deletes among the applied rows, counted while ``rows`` was read; None if
        unknown yet."""
        return self.rejections.value("deletes") if self.rejections is not None else None


def read_feed(
    spark: SparkSession,
    source: FeedSource,
    spec: TableSpec,
    *,
    format: FeedFormat | None = None,
    op_code_column: str | None = None,
    partial: bool = False,
    ordering_from: str | None = None,
) -> Feed:
    """Read a change batch for a table into typed rows and dead letters.

    Args:
        spark: The session to read with.
        source: A Spark DataFrame, a ``pyarrow.Table``, or a path, glob or list of them.
        spec: The table the batch is for.
        format: ``csv``, ``json``, ``parquet`` or ``debezium`` (JSON Lines, or a DataFrame,
            of Debezium change events; a DataFrame of one STRING or BINARY column ``value``
            holds the events as JSON text, as Kafka's source gives them); inferred from file
            extensions when ``None``. Directories and Debezium need it.
        op_code_column: The input column holding op codes; defaults to the table's. Without
            one every row is an upsert. Debezium feeds carry their own op codes.
        partial: The feed is a partial update: table columns it lacks keep each key's stored
            values (a new key gets NULL there). Without it a feed must carry every column.
        ordering_from: Debezium only: fill the table's ordering column from the events'
            ``lsn``, ``binlog`` position or ``ts_ms`` (default: the table property
            ``debezium.ordering_from``; see `versioned.engine.feeds.debezium_options`).

    Returns:
        The feed. Rows that cannot be applied (unparseable, null key, unknown op code,
        unconvertible value, null in a NOT NULL column) are in ``Feed.rejected``.

    Raises:
        SchemaError: The input lacks a key, partition or ordering column, lacks another
            column without ``partial``, has columns the table does not know, or has a column
            of an unconvertible type.
        InputError: A path does not exist, the format cannot be told, or arguments clash.
    """
    _check_arguments(format, op_code_column, ordering_from)
    options = (
        DebeziumOptions.resolve(
            spec.properties, ordering_column=spec.ordering_column, ordering_from=ordering_from
        )
        if format == "debezium"
        else None
    )
    op_column = None if format == "debezium" else (op_code_column or spec.op_code_column)
    reading = _Reading(spec, op_column, partial, options)
    if isinstance(source, DataFrame) or _is_arrow_table(source):
        return _from_frame(spark, source, reading, format)
    return _from_files(spark, source, reading, format)


def _check_arguments(
    format: FeedFormat | None, op_code_column: str | None, ordering_from: str | None
) -> None:
    if format is not None and format not in FEED_FORMATS:
        raise InputError(f"unknown feed format {format!r}; use one of {', '.join(FEED_FORMATS)}")
    if format == "debezium" and op_code_column is not None:
        raise InputError("Debezium feeds carry their own op codes; do not pass op_code_column")
    if ordering_from is not None and format != "debezium":
        raise InputError("ordering_from is for Debezium feeds; pass format='debezium'")


def _from_frame(
    spark: SparkSession,
    source: DataFrame | pa.Table,
    reading: _Reading,
    format: FeedFormat | None,
) -> Feed:
    """A feed from a Spark DataFrame or a ``pyarrow.Table``, in partition and row order."""
    label = "DataFrame" if isinstance(source, DataFrame) else "pyarrow.Table"
    if format not in (None, "debezium"):
        raise InputError(f"format={format!r} is for files; a {label} needs none")
    frame = source if isinstance(source, DataFrame) else spark.createDataFrame(source)
    if format == "debezium" and _is_event_texts(frame):
        return _from_event_texts(frame, reading, label)
    # ``#seq`` is numbered where the record's fields are taken (`_from_records`): a
    # projection numbering rows cannot merge with the one below it, so numbering here would
    # build every record's struct instead of reading its fields straight from the input.
    records = frame.select(F.struct(F.col("*")).alias(IN_RECORD), F.lit(label).alias(IN_SOURCE))
    return _from_records(_typed(records), frame.schema, reading, format, label)


def _from_files(
    spark: SparkSession, source: FeedSource, reading: _Reading, format: FeedFormat | None
) -> Feed:
    """A feed from CSV, JSON Lines, Parquet or Debezium files (paths, globs, directories)."""
    spec = reading.spec
    paths = feed_paths(source)
    fmt = format or format_from_names(paths)
    files = list_feed_files(spark, paths)
    if not files:
        return _empty_feed(spark, spec)
    label = describe(files, fmt)
    if fmt == "csv":
        read = read_csv(spark, files, spec, reading.op_column, partial=reading.partial)
        if read is None:
            return _empty_feed(spark, spec)
        frame, present, filled = read
        return _feed(frame, spec, present, filled, label)
    if fmt == "parquet":
        schema = _parquet_schema(spark, files, label)
        # Each file's columns by position, gathered into the record above the union: Spark
        # then reads the record's fields straight from the scans instead of building it.
        positional = [f"#c{i}" for i in range(len(schema.fields))]

        def scan(path: str) -> DataFrame:
            return spark.read.schema(schema).parquet(path).toDF(*positional)

        scans = scan_in_order(files, scan)
        fields = [F.col(f"`{p}`").alias(f.name) for p, f in zip(positional, schema, strict=True)]
        records = scans.select(F.struct(*fields).alias(IN_RECORD), IN_SOURCE, IN_SEQ)
        return _from_records(_typed(records), schema, reading, fmt, label)
    return _from_json_lines(spark, files, reading, fmt, label)


def _from_json_lines(
    spark: SparkSession, files: list[str], reading: _Reading, fmt: str, label: str
) -> Feed:
    """A feed from JSON Lines files: plain rows, or Debezium events when ``fmt`` says so."""
    spec = reading.spec
    json = read_json_lines(
        spark,
        files,
        spec,
        debezium=fmt == "debezium",
        op_column=reading.op_column,
        label=label,
        partial=reading.partial,
        options=reading.debezium,
    )
    return _json_feed(json, reading, fmt, label)


def _is_event_texts(frame: DataFrame) -> bool:
    """Whether ``frame`` is Debezium events as text: one ``value`` column, STRING or BINARY
    (the record values of Spark's Kafka source)."""
    fields = frame.schema.fields
    return (
        len(fields) == 1
        and fields[0].name == EVENT_TEXT_COLUMN
        and isinstance(fields[0].dataType, T.StringType | T.BinaryType)
    )


def _from_event_texts(frame: DataFrame, reading: _Reading, label: str) -> Feed:
    """Debezium events as JSON text, one per row (as JSON Lines files hold them); a null
    value is a Kafka tombstone, as the line ``null`` is."""
    text = F.col(EVENT_TEXT_COLUMN).cast("string")
    lines = frame.select(
        F.coalesce(text, F.lit("null")).alias(IN_RAW), F.lit(label).alias(IN_SOURCE)
    ).withColumn(IN_SEQ, F.monotonically_increasing_id())
    json = json_records(
        lines,
        reading.spec,
        debezium=True,
        op_column=None,
        label=label,
        partial=reading.partial,
        options=reading.debezium,
    )
    return _json_feed(json, reading, "debezium", label)


def _json_feed(json: JsonRecords, reading: _Reading, fmt: str, label: str) -> Feed:
    """The feed of parsed JSON lines: plain rows, or Debezium events when ``fmt`` says so."""
    spec = reading.spec
    if not json.schema.fields:  # no line is a JSON object: every line is a dead letter
        records = json.records
        events = None
        if fmt == "debezium":  # ... but for Kafka tombstones
            tombstone = F.col(IN_MALFORMED).isNull()
            events = DebeziumEvents(records, tombstone, F.lit(False))
            records = events.frame.where(~tombstone)
        frame = records.select(op_input(None, F.col), IN_MALFORMED, IN_RAW, IN_SOURCE, IN_SEQ)
        return _feed(frame, spec, frozenset(), (), label, events)
    return _from_records(
        json.records, json.schema, reading, fmt, label, json.mapping, json_lines=True
    )


def _typed(records: DataFrame) -> DataFrame:
    """Typed records (Parquet, DataFrames): nothing is malformed, ``_raw`` is JSON."""
    return records.select(
        IN_RECORD,
        F.lit(None).cast("string").alias(IN_MALFORMED),
        F.to_json(F.col(IN_RECORD)).alias(IN_RAW),
        IN_SOURCE,
        *([IN_SEQ] if IN_SEQ in records.columns else []),
    )


@dataclass(frozen=True)
class _Reading:
    """How the records of one feed are matched to the table."""

    spec: TableSpec
    op_column: str | None
    partial: bool
    debezium: DebeziumOptions | None


def _from_records(
    records: DataFrame,
    schema: T.StructType,
    reading: _Reading,
    fmt: str | None,
    label: str,
    mapping: ColumnMapping | None = None,
    *,
    json_lines: bool = False,
) -> Feed:
    """Match a one-struct-per-record frame to the table, then type and check its rows."""
    spec = reading.spec
    # A DataFrame's records are numbered in input order here (see `_from_frame`).
    seq = F.col(IN_SEQ) if IN_SEQ in records.columns else F.monotonically_increasing_id()
    if fmt == "debezium":
        records = records.withColumn(IN_SEQ, seq)
        frame, debezium_mapping, present, events = debezium_rows(
            records,
            schema,
            spec,
            source=label,
            options=reading.debezium,
            partial=reading.partial,
            json_lines=json_lines,
        )
        return _feed(frame, spec, present, debezium_mapping.filled, label, events)
    if mapping is None:
        mapping = map_columns(
            schema.fieldNames(),
            spec,
            source=label,
            op_code_column=reading.op_column,
            partial=reading.partial,
        )
    record = F.col(IN_RECORD)
    values = [record.getField(inp).alias(name) for name, inp in mapping.present.items()]
    op = op_input(mapping.op_column, record.getField)
    extra = [c for c in records.columns if c == IN_COERCED or c.startswith(IN_PROBLEMS)]
    keep = [F.array(*[F.lit(n) for n in mapping.filled]).alias(IN_KEEP)] if mapping.filled else []
    frame = records.select(
        *values, op, IN_MALFORMED, IN_RAW, IN_SOURCE, seq.alias(IN_SEQ), *extra, *keep
    )
    return _feed(frame, spec, frozenset(mapping.present), mapping.filled, label)


def _feed(
    frame: DataFrame,
    spec: TableSpec,
    present: frozenset[str],
    filled: tuple[str, ...],
    label: str,
    events: DebeziumEvents | None = None,
) -> Feed:
    split = split_rows(frame, spec, present, source=label)
    return Feed(
        rows=split.rows,
        reject=split.rejected,
        filled_columns=filled,
        rejections=split.counts,
        keeps=IN_KEEP in split.rows.columns,
        events=events,
        source=label,
        checked=split.checked,
    )


def _empty_feed(spark: SparkSession, spec: TableSpec) -> Feed:
    row_fields = [
        *spark_schema(spec).fields,
        T.StructField(OP, T.StringType()),
        T.StructField(SEQ, T.LongType()),
    ]
    rejected = T.StructType([T.StructField(n, T.StringType()) for n in (RAW, REASON, SOURCE)])
    return Feed(
        rows=spark.createDataFrame([], T.StructType(row_fields)),
        reject=lambda: spark.createDataFrame([], rejected),
    )


def _parquet_schema(spark: SparkSession, files: list[str], label: str) -> T.StructType:
    """The union of the files' columns (Spark reads the footers in one job)."""
    try:
        return spark.read.option("mergeSchema", "true").parquet(*files).schema
    except AnalysisException as error:
        first_line = str(error).strip().splitlines()[0]
        raise SchemaError(
            f"cannot read the columns of {label}: {first_line}; make the files' columns agree",
            source=label,
        ) from error


def _is_arrow_table(source: object) -> TypeGuard[pa.Table]:
    try:
        import pyarrow as pa
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return False
    return isinstance(source, pa.Table)
