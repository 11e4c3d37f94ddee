"""Partition specs as users type them: ``key=value`` items joined by a separator.

Users type one syntax, `LIST_SPEC`: ``store=a%2Fb,day=1``, values escaped as in directory
names (``%2C`` is a comma, ``%25`` a percent sign). It names one partition of a table
(`table_partition`: ``versioned compact --partition``, ``Table.compact``) or selects by some
partition keys in any order (``versioned import --partition``: every comma ends an item, an
empty value stays empty).

The old spelling of ``compact``, `PATH_SPEC` (``store_id=7/create_date=2024-01-01``, values
unescaped, a value running up to ``/<next key>=``), is still read, with a deprecation
warning.

In both, `DEFAULT_PARTITION_NAME` is the null partition.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from versioned.errors import InputError
from versioned.storage.partition_paths import DEFAULT_PARTITION_NAME, unescape_path_name


@dataclass(frozen=True)
class PartitionSpecSyntax:
    """How one spelling of a partition spec writes its items and values.

    Attributes:
        separator: What joins the ``key=value`` items.
        escaped: Values carry ``%XX`` escapes, decoded when parsed.
        empty_is_null: An empty value is the null partition (else it stays ``""``).
    """

    separator: str
    escaped: bool
    empty_is_null: bool


PATH_SPEC = PartitionSpecSyntax("/", escaped=False, empty_is_null=True)
LIST_SPEC = PartitionSpecSyntax(",", escaped=True, empty_is_null=False)


def parse_partition_spec(
    text: str, syntax: PartitionSpecSyntax, keys: Sequence[str] | None = None
) -> Iterator[tuple[str, str | None]]:
    """Parse a partition spec into ``(key, value)`` pairs; a null value is the null partition.

    The pairs come in the spec's order, each as it is read, so a caller that checks a key
    refuses it before a later item is looked at.

    Args:
        text: The spec as typed.
        syntax: Its spelling (`PATH_SPEC` or `LIST_SPEC`).
        keys: The partition columns the spec must name, in order. Then an item starts only
            where the separator is followed by the next key and ``=``, so values may contain
            the separator. Without them every separator ends an item, blank items are
            skipped, and the keys are returned as written.

    Raises:
        InputError: An item is not ``key=value``, or (with ``keys``) the spec does not name
            exactly those keys in order.
    """
    items: Iterable[tuple[str, str]]
    if keys is None:
        items = _free_items(text, syntax.separator)
    else:
        items = _keyed_items(text, syntax.separator, keys)
    return ((key, _value(raw, syntax)) for key, raw in items)


def _free_items(text: str, separator: str) -> Iterator[tuple[str, str]]:
    for item in [i for i in text.split(separator) if i.strip()]:
        key, sep, raw = item.partition("=")
        if not sep:
            raise InputError(f"partition item {item!r} is not key=value", value=text)
        yield key, raw


def _keyed_items(text: str, separator: str, keys: Sequence[str]) -> list[tuple[str, str]]:
    example = separator.join(f"{k}=..." for k in keys)
    rest = text.strip().strip(separator)
    items = []
    for i, key in enumerate(keys):
        prefix = f"{key}="
        if not rest.startswith(prefix):
            raise InputError(
                f"partition {text!r} does not match the table's partition columns: "
                f"write it as {example}",
                partition=text,
            )
        rest = rest[len(prefix) :]
        if i + 1 < len(keys):
            cut = rest.find(f"{separator}{keys[i + 1]}=")
            if cut < 0:
                raise InputError(
                    f"partition {text!r} lacks {keys[i + 1]}: write it as {example}",
                    partition=text,
                )
            value, rest = rest[:cut], rest[cut + len(separator) :]
        else:
            value = rest
        items.append((key, value))
    return items


def _value(raw: str, syntax: PartitionSpecSyntax) -> str | None:
    if raw == DEFAULT_PARTITION_NAME or (syntax.empty_is_null and raw == ""):
        return None
    return unescape_path_name(raw) if syntax.escaped else raw


def table_partition(text: str, partition_by: Sequence[str]) -> tuple[str | None, ...]:
    """The values of one partition of a table, from the one syntax users type.

    ``store_id=7,create_date=2024-01-01`` (`LIST_SPEC`, as ``import``, ``export`` and
    ``stream`` take it) gives ``("7", "2024-01-01")``: the table's partition columns in order,
    values escaped as in directory names (``%2C`` a comma); an empty value or
    ``__HIVE_DEFAULT_PARTITION__`` is the null partition. The old path syntax of ``compact``,
    ``store_id=7/create_date=2024-01-01`` (values unescaped), is still read, with a
    `DeprecationWarning` that says how to write it.

    Raises:
        InputError: The text does not name every partition column in order.
    """
    if not partition_by:
        raise InputError("the table is not partitioned: name no partition")
    if _path_syntax(text, partition_by):
        warnings.warn(
            f"partition {text!r}: the a=1/b=2 syntax is deprecated; write "
            f"{','.join(f'{k}=...' for k in partition_by)}",
            DeprecationWarning,
            stacklevel=2,
        )
        return partition_path_values(text, partition_by)
    pairs = parse_partition_spec(text, LIST_SPEC, partition_by)
    return tuple(None if value == "" else value for _, value in pairs)


def _path_syntax(text: str, partition_by: Sequence[str]) -> bool:
    """Whether ``text`` is written in the old path syntax: ``/`` before a later column."""
    return any(f"/{key}=" in text and f",{key}=" not in text for key in partition_by[1:])


def partition_path_values(text: str, partition_by: Sequence[str]) -> tuple[str | None, ...]:
    """Partition values from a Hive-style path with unescaped values.

    ``store_id=7/create_date=2024-01-01`` gives ``("7", "2024-01-01")``. The keys must be
    the table's partition columns in order; a value runs up to ``/<next key>=``, so values may
    contain ``/`` and ``=``. ``__HIVE_DEFAULT_PARTITION__`` (or an empty value) is the null
    partition.

    Raises:
        InputError: The text does not name every partition column in order.
    """
    if not partition_by:
        raise InputError("the table is not partitioned: compact it without --partition")
    return tuple(value for _, value in parse_partition_spec(text, PATH_SPEC, partition_by))


def partition_values(
    spec_partition_by: Sequence[str], partition: str | Mapping[str, object] | Sequence[object]
) -> tuple[str | None, ...]:
    """Partition values from a spec as users type it (`table_partition`), a
    ``{column: value}`` mapping or a tuple."""
    if isinstance(partition, str):
        return table_partition(partition, spec_partition_by)
    if isinstance(partition, Mapping):
        unknown = sorted(set(map(str, partition)) - set(spec_partition_by))
        missing = [k for k in spec_partition_by if k not in partition]
        if unknown or missing:
            raise InputError(
                f"partition {dict(partition)!r} must give exactly the partition columns "
                f"{', '.join(spec_partition_by)}",
                partition=repr(partition),
            )
        raw = [partition[k] for k in spec_partition_by]
    else:
        raw = list(partition)
    return tuple(None if v is None or v == "" else str(v) for v in raw)
