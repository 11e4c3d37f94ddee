"""Record writers of delimited and regex-parsed text (Hive's DelimitedInputWriter and
StrictRegexWriter); the JSON one is `versioned.streaming.json_writer`.

Every writer yields the table's data columns (partition values come from the endpoint) typed
by the rules of docs/input-formats.md, as `versioned.streaming.encoding` describes. Text
fields follow a CSV feed's rules: an empty field is null in every column type (STRING too),
surrounding spaces are ignored except in STRING/VARCHAR/CHAR columns, and a record that is
not valid UTF-8 is rejected (or, with table property ``replace_invalid_utf8=true``,
repaired and counted). Unlike Hive's LazySimpleSerDe, ``\\N`` is not null unless the writer
is given ``null_marker="\\N"``, and a value that does not fit its column rejects its record
instead of silently becoming null.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from versioned.errors import InputError
from versioned.layouts.ingest_errors import InvalidColumn, SerializationError
from versioned.schema import Column, TableSpec
from versioned.streaming.encoding import HasSpec, RecordWriter, TextRecords
from versioned.streaming.json_writer import StrictJsonWriter

__all__ = ["DelimitedInputWriter", "StrictJsonWriter", "StrictRegexWriter"]

_STRING = pa.string()


class DelimitedInputWriter(RecordWriter):
    """Delimited text records (CSV, tab-separated, ...), fields mapped to columns by name.

    As Hive's: ``field_names[i]`` names the table column of the record's i-th field, or is
    ``None`` (or blank) to drop that field; fields may come in any order, and columns no
    field names are null. A record with fewer fields than ``field_names`` has nulls in the
    missing ones (Hive's LazySimpleSerDe pads them); fields past ``len(field_names)`` are
    ignored, as Hive ignores them, unless ``exact_fields=True`` rejects such records. There
    is no quoting: the delimiter splits wherever it occurs (as in Hive).

    Args:
        field_names: The table column of each input field, in record order; names match the
            table's columns case-insensitively.
        delimiter: The field separator, a literal string of one or more characters (Hive
            takes a Java regular expression; write the literal text it matches).
        endpoint: The endpoint whose table the records go to (anything with ``.spec``).
        spec: The table's definition, instead of ``endpoint``.
        dead_letter: Return bad records with their reason instead of raising.
        null_marker: A field equal to this text is null (e.g. Hive's ``\\N``).
        exact_fields: Reject a record whose number of fields differs from
            ``len(field_names)``.

    Raises:
        InvalidColumn: A name is not a data column of the table (partition columns take
            their values from the endpoint), a column is named twice, or more names are
            given than the table has data columns.
        InputError: The delimiter is empty.
    """

    def __init__(
        self,
        field_names: Sequence[str | None],
        delimiter: str = ",",
        *,
        endpoint: HasSpec | None = None,
        spec: TableSpec | None = None,
        dead_letter: bool = False,
        null_marker: str | None = None,
        exact_fields: bool = False,
    ) -> None:
        super().__init__(endpoint=endpoint, spec=spec, dead_letter=dead_letter)
        if not isinstance(delimiter, str) or not delimiter:
            raise InputError(
                f"delimiter {delimiter!r}: give the text that separates fields, e.g. ',' or '\\t'"
            )
        self.field_names = tuple(field_names)
        self.delimiter = delimiter
        self.null_marker = null_marker
        self.exact_fields = exact_fields
        self.field_columns = field_columns(self.field_names, self.spec, self.columns)

    def _parse(self, texts: pa.Array) -> TextRecords:
        fields = pc.split_pattern(texts, self.delimiter)
        counts = pc.fill_null(pc.list_value_length(fields), 0)
        starts = fields.offsets.slice(0, len(fields))
        values = fields.values
        out: dict[str, pa.Array] = {}
        for position, column in enumerate(self.field_columns):
            if column is None:
                continue
            there = pc.greater(counts, position)
            at = pc.if_else(there, pc.add(starts, position), pa.scalar(None, pa.int32()))
            text = pc.take(values, at)
            if self.null_marker is not None:
                text = pc.if_else(pc.equal(text, self.null_marker), pa.scalar(None, _STRING), text)
            out[column.name] = text
        malformed = None
        if self.exact_fields:
            wrong = pc.and_(pc.is_valid(texts), pc.not_equal(counts, len(self.field_names)))
            if pc.any(wrong).as_py():
                expected = len(self.field_names)
                reason = pc.binary_join_element_wise(
                    "record has ",
                    pc.cast(counts, _STRING),
                    f" field(s) separated by {self.delimiter!r}; expected {expected}",
                    "",
                )
                malformed = pc.if_else(wrong, reason, pa.scalar(None, _STRING))
        return TextRecords(out, malformed)


class StrictRegexWriter(RecordWriter):
    """Records parsed by a regular expression: group i is the table's i-th data column.

    As Hive's (RegexSerDe): the expression must match the whole record, and it has one
    capturing group per data column of the table, in table order. An empty group is null
    (as an empty delimited field); a group that did not take part in the match is null.
    Python's ``re`` dialect, close to Java's.

    Raises:
        SerializationError: The expression does not compile (Hive fails its SerDe).
        InvalidColumn: The number of groups differs from the number of data columns.
    """

    def __init__(
        self,
        regex: str,
        *,
        endpoint: HasSpec | None = None,
        spec: TableSpec | None = None,
        dead_letter: bool = False,
    ) -> None:
        super().__init__(endpoint=endpoint, spec=spec, dead_letter=dead_letter)
        try:
            self.regex = re.compile(regex, re.DOTALL)
        except re.error as error:
            raise SerializationError(
                f"regular expression {regex!r} does not compile ({error}); fix it",
                regex=regex,
            ) from error
        names = [c.name for c in self.columns]
        if self.regex.groups != len(names):
            raise InvalidColumn(
                f"regular expression {regex!r} has {self.regex.groups} capturing group(s) "
                f"but table {self.spec.name} has {len(names)} data column(s) "
                f"({', '.join(names)}); use one group per column, in table order, and "
                "(?:...) for other groups",
                regex=regex,
            )

    def _parse(self, texts: pa.Array) -> TextRecords:
        width = len(self.columns)
        groups: list[list[str | None]] = [[] for _ in range(width)]
        malformed: list[str | None] = []
        unmatched = f"record does not match the regular expression {self.regex.pattern!r}"
        fullmatch = self.regex.fullmatch
        empty = (None,) * width
        for text in texts.to_pylist():
            match = None if text is None else fullmatch(text)
            found = empty if match is None else match.groups()
            malformed.append(unmatched if match is None and text is not None else None)
            for values, value in zip(groups, found, strict=True):
                values.append(value)
        out = {c.name: pa.array(g, _STRING) for c, g in zip(self.columns, groups, strict=True)}
        return TextRecords(out, pa.array(malformed, _STRING))


def field_columns(
    field_names: Sequence[str | None], spec: TableSpec, columns: Sequence[Column]
) -> tuple[Column | None, ...]:
    """The data column of each input field (``None``: dropped), as Hive's
    ``getFieldReordering``, with names matched case-insensitively.

    Raises:
        InvalidColumn: See `DelimitedInputWriter`.
    """
    named = [n for n in field_names if n is not None and str(n).strip()]
    if len(named) > len(columns):
        raise InvalidColumn(
            f"{len(named)} field names for table {spec.name}, which has {len(columns)} data "
            f"column(s) ({', '.join(c.name for c in columns)}); name at most one field per "
            "column and None for fields to drop",
            fields=tuple(field_names),
        )
    by_name = {c.name: c for c in columns}
    seen: dict[str, int] = {}
    out: list[Column | None] = []
    for position, name in enumerate(field_names):
        if name is None or not str(name).strip():
            out.append(None)
            continue
        if not isinstance(name, str):
            raise InvalidColumn(f"field {position}: name {name!r} is not a string or None")
        key = name.strip().lower()
        if key not in by_name:
            raise InvalidColumn(_unknown(name, position, spec, columns), column=name)
        if key in seen:
            raise InvalidColumn(
                f"fields {seen[key]} and {position} both name column {key!r}; name each "
                "column once and None for fields to drop",
                column=name,
            )
        seen[key] = position
        out.append(by_name[key])
    return tuple(out)


def _unknown(name: str, position: int, spec: TableSpec, columns: Sequence[Column]) -> str:
    known = ", ".join(c.name for c in columns)
    if name.strip().lower() in spec.partition_by:
        return (
            f"field {position} names partition column {name!r}; its value comes from the "
            f"endpoint's partition values: use None for this field (data columns: {known})"
        )
    return (
        f"field {position} names column {name!r}, which table {spec.name} does not have; "
        f"use one of {known}, or None to drop the field"
    )
