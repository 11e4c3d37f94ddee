"""Hive's ACID directory and file names (``AcidUtils`` / ``AcidConstants``).

Inside a table partition::

    base_%07d[_v%07d]                          major compaction output
    delta_%07d_%07d[_%04d][_v%07d]             insert events of a write id range [statement]
    delete_delta_%07d_%07d[_%04d][_v%07d]      delete events, the same way
      bucket_%05d[_<attempt>]                  one ORC file per bucket
      bucket_%05d_flush_length                 a streaming batch's side file (while open)
      _orc_acid_version                        marker file, contents "2"

Compaction writes ``base_W`` and ``delta_MIN_MAX`` / ``delete_delta_MIN_MAX``: Hive 3's names,
which Hive 2.3, 3 and 4 all read (`versioned.layouts.acid.compacted_dirs` says what else such a
folder holds). Versioned releases before issue 28 wrote ``_vT`` (Hive 4's suffix naming the
compactor's transaction T; Hive 4 ignores such a directory until T commits, Hive 2.3 and 3
cannot parse it); those names still parse, so tables written then still read, compact and
vacuum. Every base is taken for a compactor's (its history erased), since only compaction
writes bases here; Hive's INSERT OVERWRITE base is modelled by ``BaseDir.insert_overwrite``.
Names starting with ``_`` or ``.`` are hidden from readers. Parsing is strict: a name must be
exactly what the formatter writes (Hive pads every number, so its names always are).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from versioned.layouts.acid.errors import AcidNameError

ACID_VERSION_MARKER = "_orc_acid_version"
ACID_VERSION_CONTENT = b"2"
BASE_PREFIX = "base_"
DELTA_PREFIX = "delta_"
DELETE_DELTA_PREFIX = "delete_delta_"
SIDE_FILE_SUFFIX = "_flush_length"
MAX_DIR_STATEMENT_ID = 9999

_BASE = re.compile(r"^base_(\d+)(?:_v(\d+))?$")
_DELTA = re.compile(r"^(delete_delta|delta)_(\d+)_(\d+)(?:_(\d+))?(?:_v(\d+))?$")
_BUCKET = re.compile(r"^bucket_(\d+)(?:_(\d+))?$")
_SIDE = re.compile(r"^bucket_(\d+)_flush_length$")


def _non_negative(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AcidNameError(f"{what} must be a non-negative int, got {value!r}", value=value)
    return value


def _visibility_suffix(txn_id: int) -> str:
    return f"_v{txn_id:07d}" if txn_id else ""


@dataclass(frozen=True)
class BaseDir:
    """A ``base_W[_vT]`` directory.

    Attributes:
        write_id: The highest write id it holds.
        visibility_txn_id: The compactor's transaction id of a ``_vT`` name (0: no suffix,
            what compaction writes since issue 28).
        insert_overwrite: An INSERT OVERWRITE base (Hive tells one by its missing
            ``_metadata_acid``), which keeps its history; versioned writes none, so no
            name parses to one.
    """

    write_id: int
    visibility_txn_id: int = 0
    insert_overwrite: bool = False

    def __post_init__(self) -> None:
        _non_negative(self.write_id, "base write id")
        _non_negative(self.visibility_txn_id, "visibility transaction id")
        if self.insert_overwrite and self.visibility_txn_id:
            raise AcidNameError(
                f"an INSERT OVERWRITE base has no _v suffix, got {self.visibility_txn_id}",
                visibility_txn_id=self.visibility_txn_id,
            )

    @property
    def name(self) -> str:
        """The directory name."""
        return f"base_{self.write_id:07d}{_visibility_suffix(self.visibility_txn_id)}"

    @property
    def compacted(self) -> bool:
        """Whether a compactor wrote it (its history is erased), not INSERT OVERWRITE."""
        return not self.insert_overwrite


@dataclass(frozen=True)
class DeltaDir:
    """A ``delta_MIN_MAX[_SSSS][_vT]`` or ``delete_delta_...`` directory.

    Attributes:
        min_write_id: The lowest write id it holds.
        max_write_id: The highest write id it holds.
        statement_id: The statement of a single-transaction delta, or ``None`` (Hive's -1:
            a streaming batch or minor compaction output).
        visibility_txn_id: The compactor's transaction id of a ``_vT`` name (0: no suffix).
        delete: Whether it holds delete events (``delete_delta_``).
    """

    min_write_id: int
    max_write_id: int
    statement_id: int | None = None
    visibility_txn_id: int = 0
    delete: bool = False

    def __post_init__(self) -> None:
        _non_negative(self.min_write_id, "delta min write id")
        _non_negative(self.max_write_id, "delta max write id")
        _non_negative(self.visibility_txn_id, "visibility transaction id")
        if self.min_write_id > self.max_write_id:
            raise AcidNameError(
                f"delta range {self.min_write_id}..{self.max_write_id} is empty",
                min_write_id=self.min_write_id,
                max_write_id=self.max_write_id,
            )
        if self.statement_id is not None:
            stmt = _non_negative(self.statement_id, "statement id")
            if stmt > MAX_DIR_STATEMENT_ID:
                raise AcidNameError(f"statement id {stmt} does not fit %04d", statement_id=stmt)

    @property
    def name(self) -> str:
        """The directory name."""
        prefix = DELETE_DELTA_PREFIX if self.delete else DELTA_PREFIX
        stmt = "" if self.statement_id is None else f"_{self.statement_id:04d}"
        return (
            f"{prefix}{self.min_write_id:07d}_{self.max_write_id:07d}{stmt}"
            f"{_visibility_suffix(self.visibility_txn_id)}"
        )

    @property
    def sort_key(self) -> tuple[int, int, int, str]:
        """Hive's ``ParsedDelta.compareTo``: min write id ascending, max write id descending
        (wider first), statement id ascending with none (-1) first, then the name."""
        stmt = -1 if self.statement_id is None else self.statement_id
        return (self.min_write_id, -self.max_write_id, stmt, self.name)

    @property
    def may_contain_side_file(self) -> bool:
        """Whether a streaming batch may have left ``_flush_length`` files in it
        (``ParsedDeltaLight.mayContainSideFile``). Without a ``_vT`` suffix a minor
        compaction's ``delta_MIN_MAX`` may be one too by its name (as in Hive 3); it has no
        side file, so its readers find none and read the whole file."""
        return (
            not self.delete
            and self.min_write_id != self.max_write_id
            and self.visibility_txn_id <= 0
        )


AcidDir = BaseDir | DeltaDir


def sort_deltas(deltas: list[DeltaDir] | tuple[DeltaDir, ...]) -> list[DeltaDir]:
    """``deltas`` in the order ``AcidUtils`` sorts them (see `DeltaDir.sort_key`)."""
    return sorted(deltas, key=lambda d: d.sort_key)


def parse_directory(name: str) -> AcidDir | None:
    """The ACID directory a name denotes, or ``None`` if it is not a base or delta name.

    Raises:
        AcidNameError: It looks like a base or delta but is not written as Hive writes one
            (e.g. ``delta_1_1``, unpadded).
    """
    parsed: AcidDir
    base = _BASE.match(name)
    delta = _DELTA.match(name)
    if base:
        parsed = BaseDir(int(base.group(1)), int(base.group(2) or 0))
    elif delta:
        kind, low, high, stmt, vis = delta.groups()
        parsed = DeltaDir(
            int(low),
            int(high),
            None if stmt is None else int(stmt),
            int(vis or 0),
            delete=kind == "delete_delta",
        )
    else:
        if name.startswith((BASE_PREFIX, DELTA_PREFIX, DELETE_DELTA_PREFIX)):
            raise AcidNameError(f"{name!r} is not a valid ACID directory name", name=name)
        return None
    if parsed.name != name:
        raise AcidNameError(
            f"{name!r} is not padded as Hive pads ACID directory names (expected {parsed.name!r})",
            name=name,
        )
    return parsed


@dataclass(frozen=True)
class BucketFile:
    """A ``bucket_NNNNN[_attempt]`` data file.

    Attributes:
        bucket_id: The bucket number (writer id for unbucketed tables).
        attempt: The attempt suffix written by direct inserts, or ``None``.
    """

    bucket_id: int
    attempt: int | None = None

    def __post_init__(self) -> None:
        _non_negative(self.bucket_id, "bucket id")
        if self.attempt is not None:
            _non_negative(self.attempt, "attempt id")

    @property
    def name(self) -> str:
        """The file name."""
        attempt = "" if self.attempt is None else f"_{self.attempt}"
        return f"bucket_{self.bucket_id:05d}{attempt}"

    @property
    def side_file_name(self) -> str:
        """The name of its streaming side file, ``bucket_NNNNN_flush_length``."""
        return side_file_name(self.bucket_id)


def side_file_name(bucket_id: int) -> str:
    """``bucket_%05d_flush_length``."""
    return f"bucket_{_non_negative(bucket_id, 'bucket id'):05d}{SIDE_FILE_SUFFIX}"


def parse_bucket_file(name: str) -> BucketFile | None:
    """The bucket file a name denotes (Hive's ``bucket_([0-9]+)(_[0-9]+)?$``), or ``None``
    for any other name (side files, markers, hidden files).

    Raises:
        AcidNameError: The bucket number is not padded to 5 digits.
    """
    match = _BUCKET.match(name)
    if not match:
        return None
    parsed = BucketFile(
        int(match.group(1)), None if match.group(2) is None else int(match.group(2))
    )
    if parsed.name != name:
        raise AcidNameError(f"{name!r} is not padded as Hive pads bucket files", name=name)
    return parsed


def parse_side_file(name: str) -> int | None:
    """The bucket id of a ``bucket_NNNNN_flush_length`` side file, or ``None``."""
    match = _SIDE.match(name)
    return int(match.group(1)) if match else None


def is_hidden(name: str) -> bool:
    """Whether Hive's readers skip a file or directory name (it starts with ``_`` or ``.``)."""
    return name.startswith(("_", "."))
