"""What a storage layout is: a typed class, `StorageLayout`, with its names, capabilities and
path rules as data and its engine and per-layout parts as methods.

A table's ``layout`` (``TableSpec.layout``) names how its rows, versions and deletes sit on
storage. Each layout lives in one folder, ``versioned/layouts/<name>/``, and describes itself
with one instance of its own `StorageLayout` subclass (its ``layout.py``);
`versioned.layouts.base` lists the layouts. Code outside a layout's folder reaches it only
through that instance: `StorageLayout.engine` (Spark), `StorageLayout.table_settings`, and the
optional abilities (streaming ingest, the change stream, import of files, compaction planning,
live-row counts, the mutation API): protocols in `versioned.layouts.abilities` that the class
subclasses, so mypy checks each against its callers. Every method imports its module on first
call: registering a layout imports nothing of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from versioned.errors import NotSupportedError, SchemaError
from versioned.layouts.abilities import CanImportFiles

if TYPE_CHECKING:
    from versioned.layouts.engine_protocol import TableEngine
    from versioned.schema import TableSpec

STAGING_DIR = "_staging"
"""Folder under a table where a write stages its files before the commit lists them."""

DEAD_LETTER_DIR = "_dead_letter"
"""Folder under a table holding rejected rows with their reason; never vacuumed."""

OPERATIONS = (
    "create",
    "upsert",
    "delete",
    "alter",
    "read",
    "changes",
    "views",
    "compact",
    "vacuum",
    "export",
    "import",
)
"""Operations a layout may support (`StorageLayout.capabilities`)."""


@dataclass(frozen=True)
class StorageLayout:
    """One storage layout: what it is, as data; what it does, as methods a subclass gives.

    Attributes:
        name: The value of ``TableSpec.layout``.
        description: One line for ``--help`` and error messages.
        capabilities: The operations (`OPERATIONS`) its engine implements.
        file_formats: File formats it can store; the first is the default.
        transaction_dirs: Path segments naming the transaction that wrote a file
            (``version_id=42``): a regular expression whose group 1 is the transaction id.
        data_kinds: Catalog file kinds that hold rows (``partitions`` counts them).
        entry_kinds: Catalog file kinds whose entries retire older rows, and the name
            ``partitions`` gives their count.
        reserved_columns: Column names its files or readers use; a table may not have them.
        versions_follow_commits: Its files do not carry versions, so every commit keeps the
            table's versions in commit order: one made after a commit of a higher version
            (its transaction opened earlier) takes a fresh version (`MetaStore.commit`'s
            ``in_commit_order``). A layout whose paths hold the version (``version_id=V``)
            keeps a partition's versions in commit order itself.
        allocates_write_ids: Its writes take a write id per transaction from the catalog
            (Hive's write ids), not only transaction ids.
        compaction_kinds: The ``--kind`` values ``compact`` accepts (empty: none).

    The base class has no engine and no ability: a subclass gives `engine` (and
    `table_settings` if the layout has rules of its own) and subclasses the abilities of
    `versioned.layouts.abilities` it has.
    """

    name: str
    description: str
    capabilities: frozenset[str]
    file_formats: tuple[str, ...]
    transaction_dirs: str
    data_kinds: frozenset[str]
    entry_kinds: tuple[str, frozenset[str]]
    reserved_columns: frozenset[str] = frozenset()
    versions_follow_commits: bool = False
    allocates_write_ids: bool = False
    compaction_kinds: tuple[str, ...] = ()
    _segment: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_segment", re.compile(self.transaction_dirs))
        unknown = self.capabilities - set(OPERATIONS)
        if unknown:
            raise ValueError(f"unknown operations {sorted(unknown)} for layout {self.name}")

    @property
    def default_file_format(self) -> str:
        """The file format a new table of this layout gets when none is named."""
        return self.file_formats[0]

    def supports(self, operation: str) -> bool:
        """Whether the layout's engine implements ``operation``."""
        return operation in self.capabilities

    def require(self, operation: str, table: object | None = None) -> None:
        """Raise `NotSupportedError` unless the layout implements ``operation``."""
        if not self.supports(operation):
            raise NotSupportedError.of(self.name, operation, table)

    def check_spec(self, spec: TableSpec) -> None:
        """Refuse a table definition this layout cannot store.

        Raises:
            SchemaError: The file format, a column name or one of the layout's own rules
                (`table_rules`) does not fit the layout.
        """
        if spec.file_format not in self.file_formats:
            raise SchemaError(
                f"the {self.name} layout stores {' or '.join(self.file_formats)} files, not "
                f"{spec.file_format}; use --format {self.default_file_format}"
            )
        clash = sorted({c.name for c in spec.columns} & self.reserved_columns)
        if clash:
            raise SchemaError(
                f"column names reserved by the {self.name} layout: {', '.join(clash)}"
            )
        self.table_settings(spec)

    def table_settings(self, spec: TableSpec) -> dict[str, Any]:
        """What the layout derives from a table definition (e.g. acid's bucketing version);
        the base derives nothing.

        Raises:
            SchemaError: The definition breaks one of the layout's own rules.
        """
        return {}

    def engine(self) -> TableEngine:
        """A new instance of the layout's engine (imports Spark).

        Raises:
            NotSupportedError: The layout has no engine (the base class).
        """
        raise NotSupportedError.of(self.name, "create")

    @property
    def copies_imported_files(self) -> bool:
        """Whether an import copies a data collection's files as they are
        (`versioned.layouts.abilities.CanImportFiles`) rather than upserting its rows; then
        the collection's file format must be the table's."""
        return isinstance(self, CanImportFiles)

    def staging_dir(self, table_location: str, txn_id: int) -> str:
        """Where transaction ``txn_id`` stages its files (relative to the warehouse)."""
        return f"{table_location}/{STAGING_DIR}/txn={txn_id}"

    def dead_letter_dir(self, table_location: str) -> str:
        """Where the table's rejected rows go (relative to the warehouse)."""
        return f"{table_location}/{DEAD_LETTER_DIR}"

    def transaction_of(self, relative_path: str) -> int | None:
        """The transaction that wrote a file, from its path under the table (None: unknown);
        the segment nearest the file wins (a compaction's file in a version's folder)."""
        for segment in reversed(relative_path.split("/")):
            match = self._segment.match(segment)
            if match:
                return int(match.group(1))
        return None
