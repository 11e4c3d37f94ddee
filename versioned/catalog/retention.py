"""How far back time travel reaches once vacuum has deleted the files of old snapshots.

Vacuum records, as table properties, the oldest commit whose snapshot it keeps readable
(``vacuumed_before_seq``, and that commit's version for messages). Resolving a snapshot of an
older commit then fails with a clear error instead of reading a snapshot with missing files.
"""

from __future__ import annotations

from collections.abc import Mapping

from versioned.errors import NoSuchVersionError

VACUUMED_BEFORE_SEQ = "vacuumed_before_seq"
VACUUMED_BEFORE_VERSION = "vacuumed_before_version"


def oldest_readable_seq(properties: Mapping[str, str]) -> int:
    """The oldest commit sequence number vacuum keeps readable (0: nothing vacuumed)."""
    try:
        return int(properties.get(VACUUMED_BEFORE_SEQ, 0))
    except ValueError:
        return 0


def check_readable(name: str, properties: Mapping[str, str], seq: int, as_of: int) -> None:
    """Raise `NoSuchVersionError` when version ``as_of`` (commit ``seq``) was vacuumed."""
    oldest = oldest_readable_seq(properties)
    if seq < oldest:
        first = properties.get(VACUUMED_BEFORE_VERSION, "?")
        raise NoSuchVersionError(
            f"{name}: version {as_of} was vacuumed; the oldest version still readable is "
            f"{first} (`versioned history {name}` lists the versions)",
            table=name,
            version=as_of,
            oldest_version=first,
        )
