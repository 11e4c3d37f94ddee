"""CSV and JSON Lines feeds: every value read as text, unparseable records kept as dead letters.

CSV: a header row names the columns (matched per file, so files may order them differently);
RFC 4180 quoting (``""`` escapes a quote) and quoted fields may span lines; an empty field is
null; a record with too many or too few fields is malformed. JSON Lines: one object per line,
blank lines skipped; nested values become their JSON text. The keys of a JSON feed are found
with one Spark job over its lines, spelled exactly as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.debezium import debezium_shape, text_schema
from versioned.engine.debezium_options import DebeziumOptions
from versioned.engine.feed_files import scan_in_order
from versioned.engine.feed_rows import (
    IN_KEEP,
    IN_MALFORMED,
    IN_RAW,
    IN_RECORD,
    IN_SEQ,
    IN_SOURCE,
    op_input,
)
from versioned.engine.feed_schema import ColumnMapping, map_columns
from versioned.schema import TableSpec

_CORRUPT = "__corrupt_record"
_CSV_OPTIONS = {"header": "true", "multiLine": "true", "escape": '"'}
_BAD_CSV = "malformed CSV record (wrong number of fields or unbalanced quotes)"
_BAD_JSON = "malformed JSON record (expected one JSON object per line)"
# The objects whose keys a Debezium feed's shape depends on.
_DEBEZIUM_OBJECTS = (
    "payload",
    *(f"{p}{c}" for p in ("", "payload.") for c in ("before", "after", "source")),
)


@dataclass(frozen=True)
class JsonRecords:
    """JSON lines parsed into one struct column.

    Attributes:
        records: ``#record`` (the parsed object), ``#malformed``, ``#raw``, ``#source``,
            ``#seq``.
        schema: The schema of ``#record`` (every value a string); empty when no line is an
            object.
        mapping: The column mapping, already checked, for plain JSON; ``None`` for Debezium.
    """

    records: DataFrame
    schema: T.StructType
    mapping: ColumnMapping | None


def read_csv(
    spark: SparkSession,
    files: Sequence[str],
    spec: TableSpec,
    op_column: str | None,
    *,
    partial: bool = False,
) -> tuple[DataFrame, frozenset[str], tuple[str, ...]] | None:
    """CSV files as the frame `versioned.engine.feed_rows.split_rows` takes.

    Runs one small Spark job per file to read its header. In a partial update each file's
    rows keep (``#keep``) the columns that file lacks.

    Returns:
        ``(frame, present, filled)``, or ``None`` if every file is empty.

    Raises:
        SchemaError: A file's header does not fit the table.
    """
    headers: dict[str, tuple[list[str], ColumnMapping]] = {}
    for path in files:
        header = spark.read.options(**_CSV_OPTIONS).csv(path).columns  # reads the first record
        if header:  # an empty file has neither header nor rows
            mapping = map_columns(
                header, spec, source=path, op_code_column=op_column, partial=partial
            )
            headers[path] = (header, mapping)
    if not headers:
        return None
    present = [n for n in spec.column_names if any(n in m.present for _, m in headers.values())]
    keeps = any(m.filled for _, m in headers.values())

    def scan(path: str) -> DataFrame:
        header, mapping = headers[path]
        schema = T.StructType([T.StructField(h, T.StringType()) for h in [*header, _CORRUPT]])
        options = {**_CSV_OPTIONS, "columnNameOfCorruptRecord": _CORRUPT}
        data = spark.read.options(**options).schema(schema).csv(path)
        line = F.to_csv(F.struct(*[_named(h) for h in header]), {"escape": '"'})
        values = [
            (_named(mapping.present[n]) if n in mapping.present else F.lit(None).cast("string"))
            for n in present
        ]
        return data.select(
            *[value.alias(name) for value, name in zip(values, present, strict=True)],
            op_input(mapping.op_column, _named),
            F.when(_named(_CORRUPT).isNotNull(), F.lit(_BAD_CSV)).alias(IN_MALFORMED),
            F.coalesce(_named(_CORRUPT), line).alias(IN_RAW),
            *([_names(mapping.filled).alias(IN_KEEP)] if keeps else []),
        )

    frame = scan_in_order(list(headers), scan)
    filled = tuple(n for n in spec.column_names if n not in present)
    return frame, frozenset(present), filled


def read_json_lines(
    spark: SparkSession,
    files: Sequence[str],
    spec: TableSpec,
    *,
    debezium: bool,
    op_column: str | None,
    label: str,
    partial: bool = False,
    options: DebeziumOptions | None = None,
) -> JsonRecords:
    """JSON Lines files parsed against the keys they use; ``_raw`` is each line as written.

    A Debezium line ``null`` (a Kafka tombstone) has a null ``#record`` and is not malformed.

    Raises:
        SchemaError: The keys do not fit the table (plain JSON; Debezium rows are checked by
            `versioned.engine.debezium.debezium_rows`).
    """
    lines = scan_in_order(
        files, lambda path: spark.read.text(path).select(F.col("value").alias(IN_RAW))
    )
    lines = lines.where(F.trim(F.col(IN_RAW)) != F.lit(""))
    fields = json_fields(lines, _DEBEZIUM_OBJECTS if debezium else ())
    mapping = None
    if not fields.fields:  # no line is an object: all are dead letters, no columns to check
        parse = fields
    elif debezium:
        parse = text_schema(fields, debezium_shape(fields, spec, options))
    else:
        mapping = map_columns(
            fields.fieldNames(), spec, source=label, op_code_column=op_column, partial=partial
        )
        wanted = [*mapping.present.values(), *([mapping.op_column] if mapping.op_column else [])]
        parse = T.StructType([T.StructField(n, T.StringType()) for n in dict.fromkeys(wanted)])
    record = F.from_json(
        F.col(IN_RAW),
        T.StructType([*parse.fields, T.StructField(_CORRUPT, T.StringType())]),
        {"columnNameOfCorruptRecord": _CORRUPT},
    )
    bad = record.isNull() | record.getField(_CORRUPT).isNotNull()
    parsed = record.dropFields(_CORRUPT) if parse.fields else F.lit(None)
    if debezium:  # a Kafka tombstone: no record, and nothing wrong with it
        tombstone = F.trim(F.col(IN_RAW)) == F.lit("null")
        bad = bad & ~tombstone
        parsed = F.when(~tombstone, parsed)
    records = lines.select(
        parsed.alias(IN_RECORD),
        F.when(bad, F.lit(_BAD_JSON)).alias(IN_MALFORMED),
        IN_RAW,
        IN_SOURCE,
        IN_SEQ,
    )
    return JsonRecords(records, parse, mapping)


def json_fields(lines: DataFrame, objects: Sequence[str] = ()) -> T.StructType:
    """The keys used by the JSON objects in ``lines`` (column ``#raw``) and by their nested
    ``objects`` (JSON paths like ``payload.after``), exactly as spelled, as a schema of strings
    and structs. Runs one Spark job over the lines."""
    raw = F.col(IN_RAW)
    found = []
    for path in ("", *objects):
        doc = raw if not path else F.get_json_object(raw, f"$.{path}")
        keys = F.coalesce(F.json_object_keys(doc), F.array().cast("array<string>"))
        found.append(_tagged(keys, path))
    pairs = lines.select(F.explode(F.concat(*found)).alias("k")).distinct().collect()
    children: dict[str, list[str]] = {}
    for path, key in sorted(tuple(p["k"]) for p in pairs):
        children.setdefault(path, []).append(key)

    def struct(prefix: str) -> T.StructType:
        fields = []
        for key in children.get(prefix, []):
            path = f"{prefix}.{key}" if prefix else key
            kind = struct(path) if path in children else T.StringType()
            fields.append(T.StructField(key, kind))
        return T.StructType(fields)

    return struct("")


def _tagged(keys: Column, path: str) -> Column:
    return F.transform(keys, lambda key: F.struct(F.lit(path).alias("c"), key.alias("k")))


def _names(names: Sequence[str]) -> Column:
    return F.array(*[F.lit(n) for n in names]).cast("array<string>")


def _named(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")
