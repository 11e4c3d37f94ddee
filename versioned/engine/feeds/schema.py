"""Whether the columns of a change feed fit a table, and which input column feeds which.

Column names match case-insensitively and ignoring surrounding spaces (table columns are
lower-case). A feed that does not fit
is a whole-batch problem: `map_columns` raises `SchemaError` before anything is read or
written, naming every offending column.

A feed must carry every column of the table, unless it is a partial update (``partial``):
then the columns it lacks keep the stored values of each key, and a key that does not exist
yet gets NULL in them. Key, partition and ordering columns are always needed, with one
exception: a partial update may lack the partition columns that are not part of the primary
key (key scope ``table``), for its deletes, which find their key's row in whichever
partition it lives; its inserts and updates cannot be placed without them and are
dead-lettered (`versioned.engine.feeds.rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from versioned.errors import SchemaError
from versioned.schema import TableSpec


@dataclass(frozen=True)
class ColumnMapping:
    """How the columns of one feed input map onto a table.

    Attributes:
        present: Table column name -> input column name, for every table column the input has.
        filled: Table columns a partial update lacks: each row keeps their stored values.
        op_column: The input column holding op codes; ``None`` means every row is an upsert.
    """

    present: Mapping[str, str] = field(default_factory=dict)
    filled: tuple[str, ...] = ()
    op_column: str | None = None


def omissible_partition_columns(spec: TableSpec) -> tuple[str, ...]:
    """Partition columns a partial update may lack: those outside the primary key, whose
    deletes are found in any partition (none when every partition column is in the key)."""
    return tuple(p for p in spec.partition_by if p not in spec.primary_key)


def required_columns(spec: TableSpec) -> tuple[str, ...]:
    """Columns every row needs, deletes included: primary key, partition and ordering columns."""
    names = [*spec.primary_key, *spec.partition_by]
    if spec.ordering_column is not None:
        names.append(spec.ordering_column)
    return tuple(dict.fromkeys(names))


def map_columns(
    input_columns: Iterable[str],
    spec: TableSpec,
    *,
    source: str,
    op_code_column: str | None = None,
    derived: Collection[str] = (),
    ignore: Callable[[str], bool] | None = None,
    partial: bool = False,
) -> ColumnMapping:
    """Match the columns of a feed input to the table's columns.

    Args:
        input_columns: Column (or JSON key) names of the input.
        spec: The table.
        source: What the input is (a path, "the input DataFrame"), for messages.
        op_code_column: Name of the op-code column the input must have; ``None`` if it has none.
        derived: Table columns the caller supplies by other means (e.g. an ordering value
            taken from Debezium metadata); they need not be in the input.
        ignore: Input columns for which this returns true are neither matched nor unknown
            (e.g. Debezium's ``__op``, ``__deleted``).
        partial: The input is a partial update: table columns it lacks (other than key,
            partition and ordering columns) keep their stored values instead of failing,
            and it may lack the partition columns of `omissible_partition_columns`.

    Returns:
        The mapping.

    Raises:
        SchemaError: The input lacks a primary key, partition or ordering column, lacks any
            other column without ``partial``, lacks the op-code column, has columns the table
            does not know, or has two column names that differ only in case.
    """
    by_lower = _names_by_lower_case(input_columns)
    problems = _ambiguous_names(by_lower)
    op_column = _op_column(by_lower, op_code_column)
    if op_code_column is not None and op_column is None:
        problems.append(
            f"op code column {op_code_column!r} is missing; add it, or name the column "
            "that holds the op codes"
        )
    present = {name: by_lower[name][0] for name in spec.column_names if name in by_lower}
    unknown = _unknown_columns(by_lower, spec, op_column, ignore)
    absent = [n for n in spec.column_names if n not in present and n not in derived]
    required = set(required_columns(spec))
    if partial:
        required -= set(omissible_partition_columns(spec))
    missing_keys = [n for n in absent if n in required]
    missing_others = [n for n in absent if n not in required and n not in spec.partition_by]
    problems += _fit_problems(spec, missing_keys, [] if partial else missing_others, unknown)
    if problems:
        raise SchemaError(
            f"{source} does not fit table {spec.name}: {'; '.join(problems)}",
            source=source,
            missing=tuple(missing_keys + ([] if partial else missing_others)),
            unknown=tuple(unknown),
        )
    filled = tuple(missing_others) if partial else ()
    return ColumnMapping(present=present, filled=filled, op_column=op_column)


def _deletes_by_key(spec: TableSpec, missing: list[str]) -> str:
    """What the message says of missing partition columns: which a file of deletes by key
    alone may leave out, and which it may not (they are part of the primary key)."""
    parts = [p for p in spec.partition_by if p in missing]
    if not parts:
        return ""
    omissible = [p for p in parts if p in omissible_partition_columns(spec)]
    in_key = [p for p in parts if p not in omissible]
    notes = []
    if in_key:
        one = len(in_key) == 1
        notes.append(
            f"{', '.join(in_key)} {'is a partition column' if one else 'are partition columns'}"
            f" in the primary key, so every row, deletes too, must name {'it' if one else 'them'}"
        )
    if omissible:
        notes.append(
            f"a file of deletes by key alone may leave out {', '.join(omissible)} as a partial "
            "update (versioned upsert --partial, upsert(..., partial=True)): a delete finds "
            "its key's row in any partition"
        )
    return f" ({'; '.join(notes)})"


def _names_by_lower_case(input_columns: Iterable[str]) -> dict[str, list[str]]:
    """Input column names grouped by their trimmed lower-case form, in input order."""
    by_lower: dict[str, list[str]] = {}
    for name in input_columns:
        by_lower.setdefault(name.strip().lower(), []).append(name)
    return by_lower


def _ambiguous_names(by_lower: Mapping[str, list[str]]) -> list[str]:
    ambiguous = sorted(n for names in by_lower.values() if len(names) > 1 for n in names)
    if not ambiguous:
        return []
    return [f"column names differ only in case: {', '.join(ambiguous)}; rename one of each pair"]


def _op_column(by_lower: Mapping[str, list[str]], op_code_column: str | None) -> str | None:
    """The input column holding the op codes, or None if there is none (or none is asked)."""
    if op_code_column is None:
        return None
    candidates = by_lower.get(op_code_column.strip().lower())
    return candidates[0] if candidates else None


def _unknown_columns(
    by_lower: Mapping[str, list[str]],
    spec: TableSpec,
    op_column: str | None,
    ignore: Callable[[str], bool] | None,
) -> list[str]:
    """Input columns that are neither table columns, the op-code column nor ignored."""
    table_names = set(spec.column_names)
    op_lower = None if op_column is None else op_column.strip().lower()
    return [
        name
        for lowered, names in by_lower.items()
        for name in names
        if lowered not in table_names
        and lowered != op_lower
        and not (ignore is not None and ignore(name))
    ]


def _fit_problems(
    spec: TableSpec, missing_keys: list[str], missing_others: list[str], unknown: list[str]
) -> list[str]:
    """What to tell the user about missing and unknown columns (``missing_others`` only when
    the feed is not a partial update)."""
    problems = []
    if missing_keys:
        problems.append(
            f"missing key column(s) {', '.join(missing_keys)}; primary key, partition and "
            f"ordering columns must be in every feed{_deletes_by_key(spec, missing_keys)}"
        )
    if missing_others:
        problems.append(
            f"missing column(s) {', '.join(missing_others)}; add them to the feed, or send "
            "it as a partial update (versioned upsert --partial, upsert(..., partial=True)) "
            "to keep their stored values"
        )
    if unknown:
        problems.append(
            f"unknown column(s) {', '.join(unknown)}; remove them from the feed or add them "
            "to the table"
        )
    return problems
