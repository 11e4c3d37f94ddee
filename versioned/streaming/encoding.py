"""What every record writer shares: raw records in, typed rows and rejected records out.

A writer turns a list of records (bytes or str) into a `pyarrow.Table` with the table's data
columns (partition columns come from the endpoint) in table order, typed by the rules of
docs/input-formats.md (`versioned.values.text_rules`): the same rules as a CSV or JSON feed
given to ``Table.upsert``. A format (`RecordWriter._parse`) only splits records into text
per column; typing, checks and the dead-letter decision are here, vectorised over the list.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from versioned.errors import InputError
from versioned.layouts.ingest_errors import SerializationError
from versioned.schema import Column, TableSpec
from versioned.values.arrow_text import cast_locating, convert_text_column
from versioned.values.arrow_types import arrow_type
from versioned.values.orc_values import orc_problems
from versioned.values.text_rules import REPLACE_INVALID_UTF8, Lenience, null_problem

_STRING = pa.string()
_BAD_UTF8 = (
    "record is not valid UTF-8; fix the encoding, or set table property "
    f"{REPLACE_INVALID_UTF8}=true"
)


class HasSpec(Protocol):
    """What a writer needs of an endpoint: the table's definition."""

    @property
    def spec(self) -> TableSpec: ...


@dataclass(frozen=True)
class RejectedRecord:
    """A record that cannot be written: its position in the encoded list, its bytes as
    given (a str record UTF-8 encoded), and why."""

    index: int
    record: bytes
    reason: str


@dataclass(frozen=True)
class EncodedRecords:
    """The outcome of `RecordWriter.encode`.

    Attributes:
        rows: The good records, typed, with the table's data columns in table order, in
            input order.
        rejected: The records that cannot be written, in input order (only with
            ``dead_letter=True``; otherwise `encode` raises instead).
        coerced: How many of ``rows`` a lenient conversion changed (table properties
            ``round_decimals``, ``replace_invalid_utf8``).
    """

    rows: pa.Table
    rejected: tuple[RejectedRecord, ...] = ()
    coerced: int = 0


@dataclass(frozen=True)
class TextRecords:
    """Records split into text per data column by a format.

    Attributes:
        texts: Data column name -> its text per record (null: no value); a column not in
            here is null in every record.
        malformed: Per record, why it could not be parsed at all (null: it could).
        problems: Data column name -> a reason per record found while parsing (e.g. a JSON
            object where a STRING is wanted; null: none).
        empty_string_is_null: Whether an empty text is null in string columns too.
    """

    texts: Mapping[str, pa.Array]
    malformed: pa.Array | None = None
    problems: Mapping[str, pa.Array] = field(default_factory=dict)
    empty_string_is_null: bool = True


class RecordWriter(ABC):
    """Base of the record writers: the table, the dead-letter choice, and `encode`.

    Args:
        endpoint: An object with a ``spec`` (the table's `TableSpec`), e.g. an ``EndPoint``.
        spec: The table's definition, instead of ``endpoint``.
        dead_letter: Return records that cannot be written (with their reason) instead of
            raising `SerializationError`.

    Raises:
        InputError: Neither or two different tables given.
        SchemaError: A table property of lenient conversion is neither true nor false.
    """

    def __init__(
        self,
        *,
        endpoint: HasSpec | None = None,
        spec: TableSpec | None = None,
        dead_letter: bool = False,
    ) -> None:
        self.spec = _resolve_spec(endpoint, spec)
        self.dead_letter = dead_letter
        self.columns: tuple[Column, ...] = self.spec.data_columns
        self.lenience = Lenience.of(self.spec)
        self.schema = pa.schema(
            [pa.field(c.name, arrow_type(c.type), nullable=c.nullable) for c in self.columns]
        )

    @abstractmethod
    def _parse(self, texts: pa.Array) -> TextRecords:
        """Split records (a string array; null where a record is not valid UTF-8) into text
        per data column."""

    def encode(self, records: Iterable[bytes | str]) -> EncodedRecords:
        """Type a list of records.

        Returns:
            The typed good records and, with ``dead_letter=True``, the rejected ones.

        Raises:
            SerializationError: Some record cannot be written and ``dead_letter`` is false;
                names the first one (``index``, ``reason``) and how many (``rejected``).
                Nothing is returned for any record of the list.
            TypeError: A record is neither bytes nor str.
        """
        raw = _records_array(records)
        texts, utf8_reasons, repaired = self._decoded(raw)
        parsed = self._parse(texts)
        table, reasons, coerced = self._typed(parsed, len(raw))
        for extra in (utf8_reasons, parsed.malformed):
            if extra is not None:  # the record as a whole: its only reason
                reasons = extra if reasons is None else pc.coalesce(extra, reasons)
        if repaired is not None:
            coerced = repaired if coerced is None else pc.or_(coerced, repaired)
        if reasons is None or reasons.null_count == len(reasons):
            return EncodedRecords(table, (), _count(coerced))
        bad = pc.is_valid(reasons)
        rejected = tuple(
            RejectedRecord(int(i), raw[int(i)].as_py(), reasons[int(i)].as_py())
            for i in np.flatnonzero(bad.to_numpy(zero_copy_only=False))
        )
        if not self.dead_letter:
            raise self._refusal(rejected, len(raw))
        good = pc.invert(bad)
        kept = None if coerced is None else pc.and_(coerced, good)
        return EncodedRecords(table.filter(good), rejected, _count(kept))

    def _decoded(self, raw: pa.Array) -> tuple[pa.Array, pa.Array | None, pa.Array | None]:
        """``(texts, reasons, repaired)``: records as text, and per record whether it is
        not valid UTF-8 (a reason, or with ``replace_invalid_utf8`` a repair)."""
        texts, invalid = cast_locating(raw, _STRING)
        if not pc.any(invalid).as_py():
            return texts, None, None
        if not self.lenience.replace_invalid_utf8:
            reasons = pc.if_else(invalid, _BAD_UTF8, pa.scalar(None, _STRING))
            return texts, reasons, None
        rows = np.flatnonzero(invalid.to_numpy(zero_copy_only=False))
        fixed = [raw[int(i)].as_py().decode("utf-8", "replace") for i in rows]
        return pc.replace_with_mask(texts, invalid, pa.array(fixed, _STRING)), None, invalid

    def _typed(
        self, parsed: TextRecords, count: int
    ) -> tuple[pa.Table, pa.Array | None, pa.Array | None]:
        """``(table, reasons, coerced)`` over every record; reasons joined with ``; ``."""
        arrays: list[pa.Array] = []
        reasons: list[pa.Array] = []
        coerced: list[pa.Array] = []
        for column in self.columns:
            text = parsed.texts.get(column.name)
            if text is None:
                values, failed = pa.nulls(count, arrow_type(column.type)), None
            else:
                converted = convert_text_column(
                    text, column, self.lenience, empty_string_is_null=parsed.empty_string_is_null
                )
                values, failed = converted.values, converted.failed
                reasons.extend(converted.problems)
                if converted.coerced is not None:
                    coerced.append(converted.coerced)
            if self.spec.file_format == "orc":
                unstored = orc_problems(column.name, column.type, values)
                if unstored is not None and unstored.null_count < len(unstored):
                    reasons.append(unstored)
            problem = null_problem(self.spec, column.name)
            if problem is not None and values.null_count:
                is_null = pc.is_null(values)
                if failed is not None:
                    is_null = pc.and_(is_null, pc.invert(failed))
                reasons.append(pc.if_else(is_null, problem, pa.scalar(None, _STRING)))
            if column.name in parsed.problems:
                reasons.append(parsed.problems[column.name])
            arrays.append(values)
        table = pa.Table.from_arrays(arrays, schema=self.schema)
        return table, _joined(reasons), _either(coerced)

    def _refusal(self, rejected: tuple[RejectedRecord, ...], count: int) -> SerializationError:
        first = rejected[0]
        return SerializationError(
            f"record {first.index} cannot be written to {self.spec.name}: {first.reason} "
            f"({len(rejected)} of {count} record(s) rejected, none of them written); fix "
            "or drop the rejected records, or build the writer with dead_letter=True to "
            "send them to the table's dead-letter area",
            table=str(self.spec.name),
            index=first.index,
            reason=first.reason,
            rejected=len(rejected),
            records=count,
        )


def _resolve_spec(endpoint: HasSpec | None, spec: TableSpec | None) -> TableSpec:
    if endpoint is not None:
        if spec is not None and spec != endpoint.spec:
            raise InputError(
                "a record writer got both an endpoint and a different table spec; give one"
            )
        return endpoint.spec
    if spec is None:
        raise InputError("a record writer needs the table: pass endpoint= or spec=")
    return spec


def _records_array(records: Iterable[bytes | str]) -> pa.Array:
    items: Any = records if isinstance(records, list | tuple) else list(records)
    try:
        raw = pa.array(items, type=pa.binary())
    except (pa.ArrowTypeError, pa.ArrowInvalid, TypeError) as error:
        raise _not_records(items) from error
    if raw.null_count:
        raise _not_records(items)
    return raw


def _not_records(items: Any) -> TypeError:
    kinds = sorted({type(r).__name__ for r in items if not isinstance(r, bytes | str)})
    return TypeError(f"records must be bytes or str, got {', '.join(kinds)}")


def _joined(reasons: list[pa.Array]) -> pa.Array | None:
    present = [r for r in reasons if r.null_count < len(r)]
    if not present:
        return None
    result = present[0]
    for reason in present[1:]:  # (null_handling="skip" drops all-null rows in pyarrow 26)
        both = pc.binary_join_element_wise(result, reason, "; ")
        result = pc.coalesce(both, result, reason)
    return result


def _either(flags: list[pa.Array]) -> pa.Array | None:
    if not flags:
        return None
    result = flags[0]
    for flag in flags[1:]:
        result = pc.or_(result, flag)
    return result


def _count(flags: pa.Array | None) -> int:
    return 0 if flags is None else int(pc.sum(pc.cast(flags, pa.int64())).as_py() or 0)
