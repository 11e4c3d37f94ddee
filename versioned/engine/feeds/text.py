"""CSV and JSON Lines feeds: every value read as text, unparseable records kept as dead letters.

CSV: a header row names the columns (matched per file, so files may order them differently;
a UTF-8 byte-order mark is skipped; two columns of the same name are a whole-batch error);
RFC 4180 quoting (``""`` escapes a quote) and quoted fields may span lines; an empty field is
null; a record with too many or too few fields is malformed. Files are read as bytes (Spark
reads them as ISO-8859-1, which maps every byte to one character, and the bytes are taken
back), so that invalid UTF-8 is seen and refused instead of silently becoming U+FFFD.

JSON Lines: one object per line, blank lines skipped. A line that is not valid UTF-8 is a
dead letter (or, with table property ``replace_invalid_utf8=true``, repaired and counted).
Plain JSON is parsed with Spark's VARIANT parser, which keeps numbers exact (Spark's JSON
reader takes fractions through a double): a value is read as its text, a JSON number in its
exact decimal form. An object or array in a STRING column is refused (send it as a JSON
string if text is meant); an object with a duplicate key is malformed. The keys of a JSON
feed are found with one Spark job over its lines, spelled exactly as written.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from versioned.engine.feeds.debezium import debezium_shape, text_schema
from versioned.engine.feeds.debezium_options import DebeziumOptions
from versioned.engine.feeds.files import local_path, scan_in_order
from versioned.engine.feeds.rows import (
    IN_COERCED,
    IN_KEEP,
    IN_MALFORMED,
    IN_PROBLEMS,
    IN_RAW,
    IN_RECORD,
    IN_SEQ,
    IN_SOURCE,
    op_input,
)
from versioned.engine.feeds.schema import ColumnMapping, map_columns
from versioned.engine.feeds.text_values import Lenience
from versioned.engine.spark.types import spark_type
from versioned.errors import SchemaError
from versioned.schema import TableSpec

_CORRUPT = "__corrupt_record"
_BYTES = "ISO-8859-1"  # one character per byte: reading and re-encoding keeps the bytes
_CSV_OPTIONS = {"header": "true", "multiLine": "true", "escape": '"', "encoding": _BYTES}
_BAD_CSV = "malformed CSV record (wrong number of fields or unbalanced quotes)"
_BAD_JSON = "malformed JSON record (expected one JSON object per line, keys unique)"
_BAD_UTF8 = (
    "JSON line is not valid UTF-8 (shown with U+FFFD); fix the encoding, or set table "
    "property replace_invalid_utf8=true"
)
_BAD_SURROGATE = (
    "JSON string holds an unpaired surrogate escape (\\ud800-\\udfff alone), text that UTF-8 "
    "cannot store; send the character's pair of escapes, or the character itself"
)
# An unescaped \uD800-\uDBFF not followed by a low surrogate's escape, or an unescaped
# \uDC00-\uDFFF not preceded by a high surrogate's (a backslash counts when an even number
# of backslashes precede it). Spark's parsers differ across 4.x on such text (4.1 refuses it,
# 4.0's VARIANT parser reads the string as null), so the feed refuses it on every line.
_LONE_SURROGATE = (
    r"(?<!\\)(?:\\\\)*(?:"
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)
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
    """CSV files as the frame `versioned.engine.feeds.rows.split_rows` takes.

    Runs one small Spark job per file to read its header. In a partial update each file's
    rows keep (``#keep``) the columns that file lacks.

    Returns:
        ``(frame, present, filled)``, or ``None`` if every file is empty.

    Raises:
        SchemaError: A file's header does not fit the table.
    """
    headers: dict[str, tuple[list[str], ColumnMapping]] = {}
    for path in files:
        header = csv_header(spark, path)
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
        positions = {name: f"_c{i}" for i, name in enumerate(header)}
        fields = [T.StructField(p, T.StringType()) for p in [*positions.values(), _CORRUPT]]
        options = {**_CSV_OPTIONS, "columnNameOfCorruptRecord": _CORRUPT}
        data = spark.read.options(**options).schema(T.StructType(fields)).csv(path)
        data = data.select(*[_utf8_bytes(F.col(f.name)).alias(f.name) for f in fields])
        line = F.to_csv(F.struct(*[F.col(p) for p in positions.values()]), {"escape": '"'})
        values = [
            (F.col(positions[mapping.present[n]]) if n in mapping.present else F.lit(None))
            for n in present
        ]
        return data.select(
            *[v.cast("string").alias(name) for v, name in zip(values, present, strict=True)],
            op_input(mapping.op_column, lambda name: F.col(positions[name])),
            F.when(F.col(_CORRUPT).isNotNull(), F.lit(_BAD_CSV)).alias(IN_MALFORMED),
            F.coalesce(F.col(_CORRUPT), line).alias(IN_RAW),
            *([_names(mapping.filled).alias(IN_KEEP)] if keeps else []),
        )

    frame = scan_in_order(list(headers), scan)
    filled = tuple(n for n in spec.column_names if n not in present)
    return frame, frozenset(present), filled


def csv_header(spark: SparkSession, path: str) -> list[str]:
    """The column names of a CSV file's header (its first non-blank line; a UTF-8 BOM is
    skipped), or ``[]`` for a file without one. One small Spark job, or none for a plain
    local file (`files.local_path`), which is read here.

    Raises:
        SchemaError: The header is not valid UTF-8, spans lines, or names a column twice.
    """
    local = local_path(path)
    if local is not None:
        header = first_nonblank_line(local)
    else:
        lines = spark.read.text(path)
        first = lines.where(F.trim(F.col("value")) != F.lit("")).select(
            F.col("value").cast("binary").alias("b")
        )
        row = first.first()
        header = None if row is None else bytes(row["b"])
    if header is None:
        return []
    try:
        text = header.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SchemaError(
            f"the header of {path} is not valid UTF-8 ({error.reason} at byte {error.start}); "
            "save the file as UTF-8",
            source=path,
        ) from error
    try:
        (names,) = list(csv.reader([text], strict=True))
    except (ValueError, csv.Error) as error:
        raise SchemaError(
            f"cannot read the header of {path} ({error}); put the column names on the first "
            "line, separated by commas",
            source=path,
        ) from error
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    twice = [n for n, count in seen.items() if count > 1]
    if twice:
        raise SchemaError(
            f"the header of {path} names column(s) {', '.join(map(repr, twice))} more than "
            "once; remove or rename the duplicates",
            source=path,
        )
    return names


def first_nonblank_line(path: str, chunk: int = 1 << 16) -> bytes | None:
    """The first line of a local file that holds more than spaces, split as Spark's text
    reader splits lines (at ``\\n``, ``\\r\\n`` or ``\\r``), without its end; None if none."""
    buffered = b""
    with open(path, "rb") as stream:
        while True:
            data = stream.read(chunk)
            at_end = not data
            buffered += data
            lines = buffered.splitlines(keepends=True)
            buffered = b""
            for i, line in enumerate(lines):
                unfinished = not line.endswith((b"\n", b"\r"))
                # Until the file ends, a last line may go on, and a last "\\r" may be half
                # of a "\\r\\n".
                if not at_end and i == len(lines) - 1 and (unfinished or line.endswith(b"\r")):
                    buffered = line
                    break
                content = line.rstrip(b"\r\n")
                if content.strip(b" "):
                    return content
            if at_end:
                return None


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
            `versioned.engine.feeds.debezium.debezium_rows`).
    """
    lines = scan_in_order(
        files, lambda path: spark.read.text(path).select(F.col("value").alias(IN_RAW))
    )
    return json_records(
        lines,
        spec,
        debezium=debezium,
        op_column=op_column,
        label=label,
        partial=partial,
        options=options,
    )


def json_records(
    lines: DataFrame,
    spec: TableSpec,
    *,
    debezium: bool,
    op_column: str | None,
    label: str,
    partial: bool = False,
    options: DebeziumOptions | None = None,
) -> JsonRecords:
    """`read_json_lines` for lines at hand: ``lines`` has ``#raw`` (one JSON text per row),
    ``#source`` and ``#seq`` (input order)."""
    lines = lines.where(F.trim(F.col(IN_RAW)) != F.lit(""))
    valid = F.is_valid_utf8(F.col(IN_RAW))
    repair = Lenience.of(spec).replace_invalid_utf8
    text = F.make_valid_utf8(F.col(IN_RAW)) if repair else F.col(IN_RAW)
    fields = json_fields(lines, _DEBEZIUM_OBJECTS if debezium else ())
    extra: list[Column] = []
    mapping = None
    if debezium or not fields.fields:  # no object at all: every line is a dead letter
        parse = (
            text_schema(fields, debezium_shape(fields, spec, options)) if fields.fields else fields
        )
        record = F.from_json(
            text,
            T.StructType([*parse.fields, T.StructField(_CORRUPT, T.StringType())]),
            {"columnNameOfCorruptRecord": _CORRUPT},
        )
        bad = record.isNull() | record.getField(_CORRUPT).isNotNull()
        parsed = record.dropFields(_CORRUPT) if parse.fields else F.lit(None)
        if debezium:  # a Kafka tombstone: no record, and nothing wrong with it
            tombstone = F.trim(F.col(IN_RAW)) == F.lit("null")
            bad = bad & ~tombstone
            parsed = F.when(~tombstone, parsed)
        parsed = parsed.alias(IN_RECORD)
    else:
        mapping = map_columns(
            fields.fieldNames(), spec, source=label, op_code_column=op_column, partial=partial
        )
        parse, parsed, bad, extra = _variant_records(text, mapping, spec)
    malformed = (
        F.when(~valid & F.lit(not repair), F.lit(_BAD_UTF8))
        .when(F.col(IN_RAW).rlike(_LONE_SURROGATE), F.lit(_BAD_SURROGATE))
        .when(bad, F.lit(_BAD_JSON))
    )
    records = lines.select(
        parsed,
        malformed.alias(IN_MALFORMED),
        IN_RAW,
        IN_SOURCE,
        IN_SEQ,
        *extra,
        (~valid & F.lit(repair)).alias(IN_COERCED),
    )
    return JsonRecords(records, parse, mapping)


def _variant_records(
    text: Column, mapping: ColumnMapping, spec: TableSpec
) -> tuple[T.StructType, Column, Column, list[Column]]:
    """Plain JSON objects through Spark's VARIANT parser: ``(schema, record, bad, problems)``
    with every value as its text and, per STRING column, a problem when it got an object or
    array, per FLOAT/DOUBLE column when a number overflowed."""
    doc = F.try_parse_json(text)
    bad = F.try_variant_get(doc, "$", "map<string,variant>").isNull()
    wanted = [*mapping.present.values(), *([mapping.op_column] if mapping.op_column else [])]
    keys = list(dict.fromkeys(wanted))

    def at(key: str, kind: str) -> Column:
        return F.try_variant_get(doc, "$['" + key + "']", kind)

    floating = {
        key
        for name, key in mapping.present.items()
        if isinstance(spark_type(spec.column(name).type), T.FloatType | T.DoubleType)
    }
    record = F.struct(
        *[(_signed_zero(text, k, at) if k in floating else at(k, "string")).alias(k) for k in keys]
    )
    problems: list[Column] = []
    for name, key in mapping.present.items():
        target = spark_type(spec.column(name).type)
        if isinstance(target, T.StringType):
            nested = F.when(at(key, "map<string,variant>").isNotNull(), F.lit("object"))
            nested = nested.when(at(key, "array<variant>").isNotNull(), F.lit("array"))
            problem = F.concat(
                F.lit(f"column {name}: a JSON "),
                nested,
                F.lit(f" is not {_article(spec.column(name).type)}; send it as a JSON string"),
            )
        elif isinstance(target, T.FloatType | T.DoubleType):
            overflow = (F.schema_of_variant(at(key, "variant")) == F.lit("DOUBLE")) & F.abs(
                at(key, "double")
            ).eqNullSafe(F.lit(float("inf")))
            problem = F.when(
                overflow,
                F.lit(f"column {name}: JSON number out of range of {spec.column(name).type}"),
            )
        else:
            continue
        problems.append(problem.alias(f"{IN_PROBLEMS}:{name}"))
    schema = T.StructType([T.StructField(k, T.StringType()) for k in keys])
    return schema, record.alias(IN_RECORD), bad, problems


def _signed_zero(text: Column, key: str, at: Callable[[str, str], Column]) -> Column:
    """The text of a number for a FLOAT/DOUBLE column, keeping the sign of ``-0.0``: VARIANT
    holds ``-0.0`` as the decimal 0.0, so a zero is read again as written (only zeros)."""
    written = F.get_json_object(text, "$['" + key + "']")
    negative_zero = (at(key, "double") == F.lit(0.0)) & F.startswith(written, F.lit("-"))
    return F.when(negative_zero, F.lit("-0.0")).otherwise(at(key, "string"))


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


def _article(type_name: str) -> str:
    return f"{'an' if type_name[0] in 'AEIOU' else 'a'} {type_name}"


def _utf8_bytes(latin1: Column) -> Column:
    """The bytes a column read as ISO-8859-1 was written with, as a (UTF-8) string."""
    return F.encode(latin1, _BYTES).cast("string")


def _tagged(keys: Column, path: str) -> Column:
    return F.transform(keys, lambda key: F.struct(F.lit(path).alias("c"), key.alias("k")))


def _names(names: Sequence[str]) -> Column:
    return F.array(*[F.lit(n) for n in names]).cast("array<string>")


def _named(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")
