"""The ACID user metadata of an ORC bucket file, as ``OrcRecordUpdater`` writes it.

* ``hive.acid.key.index``: ``"writeId,bucket,rowId;"`` for each stripe, the ROW__ID of the
  stripe's last event (readers use it to bound the keys of a split);
* ``hive.acid.stats``: ``"inserts,updates,deletes"`` (event counts of the file; with split
  update, updates are always 0);
* ``hive.acid.version``: ``"2"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from versioned.layouts.acid.bucket_codec import RecordIdentifier
from versioned.layouts.acid.errors import AcidFileError


@dataclass(frozen=True)
class AcidStats:
    """Event counts of one bucket file (``hive.acid.stats``)."""

    inserts: int = 0
    updates: int = 0
    deletes: int = 0

    def to_string(self) -> str:
        """``"inserts,updates,deletes"``."""
        return f"{self.inserts},{self.updates},{self.deletes}"

    @classmethod
    def parse(cls, text: str) -> AcidStats:
        """Inverse of `to_string`.

        Raises:
            AcidFileError: The text is not three comma-separated counts.
        """
        parts = text.split(",")
        try:
            counts = [int(p) for p in parts]
        except ValueError:
            counts = []
        if len(counts) != 3 or min(counts) < 0:
            raise AcidFileError(f"{text!r} is not a hive.acid.stats value", value=text)
        return cls(*counts)


def format_key_index(keys: Sequence[RecordIdentifier]) -> str:
    """``"writeId,bucket,rowId;"`` for each stripe's last key, concatenated."""
    return "".join(f"{k.write_id},{k.bucket_id},{k.row_id};" for k in keys)


def parse_key_index(text: str) -> tuple[RecordIdentifier, ...]:
    """Inverse of `format_key_index` (``OrcRecordUpdater.parseKeyIndex``).

    Raises:
        AcidFileError: An entry is not three integers.
    """
    keys: list[RecordIdentifier] = []
    for entry in text.split(";"):
        if not entry:
            continue
        parts = entry.split(",")
        try:
            if len(parts) != 3:
                raise ValueError(entry)
            keys.append(RecordIdentifier(int(parts[0]), int(parts[1]), int(parts[2])))
        except ValueError as exc:
            raise AcidFileError(
                f"{text!r} is not a hive.acid.key.index value: bad entry {entry!r}", value=text
            ) from exc
    return tuple(keys)
