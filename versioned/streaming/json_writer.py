"""Strict JSON records (Hive's StrictJsonWriter): one JSON object per record.

The rules of a JSON Lines feed (docs/input-formats.md): keys name data columns
case-insensitively (as in Hive 3 and in ``Table.upsert``); a missing key is null; a record
that is not one JSON object, or has a key twice (at any depth), is rejected as malformed.
Values are taken as text and typed like a feed's: a JSON number by its exact decimal value
(``5.0`` fits an INT; in a STRING column it is stored in its plain decimal form, ``12.50`` as
``12.5``), ``true``/``false`` as those words, a string as written (``""`` is an empty
string in a STRING column and null in others), an object or array in a STRING column is
refused (send it as a JSON string), in another column it fails like any other text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

from versioned.schema import TableSpec
from versioned.streaming.encoding import HasSpec, RecordWriter, TextRecords
from versioned.values.arrow_types import arrow_type
from versioned.values.text_rules import article

_STRING = pa.string()
_MALFORMED = "malformed JSON record (expected one JSON object, keys unique)"
# A JSON number's exponent beyond which it keeps scientific notation (no column type takes
# more digits than this; writing them out would only cost memory).
_PLAIN_EXPONENT = 400


class _Number(str):
    """The literal text of a JSON number, told apart from a JSON string."""

    __slots__ = ()


class _DuplicateKey(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey("duplicate key")
    return obj


_loads: Callable[[str], Any] = json.JSONDecoder(
    object_pairs_hook=_unique_object, parse_float=_Number, parse_int=_Number
).decode


class StrictJsonWriter(RecordWriter):
    """JSON object records, keys matched to the table's data columns.

    Args:
        endpoint: The endpoint whose table the records go to (anything with ``.spec``).
        spec: The table's definition, instead of ``endpoint``.
        ignore_unknown: Ignore keys that are not data columns (partition columns included)
            instead of rejecting the record.
        dead_letter: Return bad records with their reason instead of raising.
    """

    def __init__(
        self,
        *,
        endpoint: HasSpec | None = None,
        spec: TableSpec | None = None,
        ignore_unknown: bool = False,
        dead_letter: bool = False,
    ) -> None:
        super().__init__(endpoint=endpoint, spec=spec, dead_letter=dead_letter)
        self.ignore_unknown = ignore_unknown
        self._strings = {c.name for c in self.columns if pa.types.is_string(arrow_type(c.type))}

    def _parse(self, texts: pa.Array) -> TextRecords:
        count = len(texts)
        names = [c.name for c in self.columns]
        values: dict[str, list[str | None]] = {n: [None] * count for n in names}
        nested: dict[str, list[str | None]] = {}
        malformed: list[str | None] = [None] * count
        keys: dict[str, str | None] = {n: n for n in names}  # key as written -> column
        for row, text in enumerate(texts.to_pylist()):
            if text is None:
                continue
            try:
                doc = _loads(text)
            except ValueError:
                malformed[row] = _MALFORMED
                continue
            if type(doc) is not dict:
                malformed[row] = _MALFORMED
                continue
            unknown: list[str] = []
            taken: dict[str, str] = {}
            for key, value in doc.items():
                name = keys.get(key, "")
                if name == "":
                    name = keys[key] = self._column_of(key)
                if name is None:
                    unknown.append(key)
                    continue
                if name in taken:
                    malformed[row] = f"keys {taken[name]!r} and {key!r} both name column {name}"
                    break
                taken[name] = key
                kind = type(value)
                if kind is str or value is None:
                    values[name][row] = value
                elif kind is _Number:
                    values[name][row] = _number_text(value)
                elif kind is bool:
                    values[name][row] = "true" if value else "false"
                elif name in self._strings:  # an object or array where text is wanted
                    nested.setdefault(name, [None] * count)[row] = self._nested(name, value)
                else:  # fails the column's type like any other text
                    values[name][row] = _json_text(value)
            if unknown and not self.ignore_unknown and malformed[row] is None:
                malformed[row] = self._unknown(unknown)
        texts_out = {n: pa.array(v, _STRING) for n, v in values.items()}
        problems = {n: pa.array(p, _STRING) for n, p in nested.items()}
        return TextRecords(
            texts_out, pa.array(malformed, _STRING), problems, empty_string_is_null=False
        )

    def _column_of(self, key: str) -> str | None:
        lowered = key.strip().lower()
        return lowered if any(c.name == lowered for c in self.columns) else None

    def _nested(self, name: str, value: Any) -> str:
        what = "object" if type(value) is dict else "array"
        wanted = article(self.spec.column(name).type)
        return f"column {name}: a JSON {what} is not {wanted}; send it as a JSON string"

    def _unknown(self, unknown: list[str]) -> str:
        known = ", ".join(c.name for c in self.columns)
        return (
            f"unknown key(s) {', '.join(map(repr, unknown))}: table {self.spec.name} has data "
            f"column(s) {known}; remove the keys, or build the writer with "
            "ignore_unknown=True (partition values come from the endpoint)"
        )


def _json_text(value: Any) -> str:
    """A nested JSON value written back compactly, numbers as they were written."""
    if type(value) is _Number:
        return str(value)
    if isinstance(value, dict):
        inner = ",".join(
            f"{json.dumps(k, ensure_ascii=False)}:{_json_text(v)}" for k, v in value.items()
        )
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ",".join(_json_text(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _number_text(literal: str) -> str:
    """A JSON number's exact value as plain decimal text: ``12.50`` -> ``12.5``, ``1e3`` ->
    ``1000``, ``-0.0`` -> ``0``."""
    if literal.isdigit() or (literal[0] == "-" and literal[1:].isdigit() and literal != "-0"):
        return str(literal)
    try:
        number = Decimal(literal)
    except InvalidOperation:  # the JSON grammar admits nothing Decimal refuses
        return str(literal)
    if number == 0:
        return "0"
    number = number.normalize()
    if abs(number.adjusted()) > _PLAIN_EXPONENT:
        return str(number)
    return format(number, "f")
