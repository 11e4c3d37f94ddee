"""What a storage layout is: names, capabilities, path rules and hooks, as plain data.

A table's ``layout`` (``TableSpec.layout``) names how its rows, versions and deletes sit on
storage. Each layout lives in one folder, ``versioned/layouts/<name>/``, and describes itself
with one `TableLayout` (its ``layout.py``); `versioned.layouts.base` lists the layouts. Code
outside a layout's folder reaches it only through its `TableLayout`: the engine (Spark), and
hooks for what differs per layout (ingest sink, change images, import of files, compaction
kinds, the mutation writer), each imported on first use.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from versioned.errors import NotSupportedError, SchemaError

if TYPE_CHECKING:
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
"""Operations a layout may support (`TableLayout.capabilities`)."""


@dataclass(frozen=True)
class TableLayout:
    """One storage layout, as plain data.

    Attributes:
        name: The value of ``TableSpec.layout``.
        description: One line for ``--help`` and error messages.
        capabilities: The operations (`OPERATIONS`) its engine implements.
        file_formats: File formats it can store; the first is the default.
        reserved_columns: Column names its files or readers use; a table may not have them.
        transaction_dirs: Path segments naming the transaction that wrote a file
            (``version_id=42``): a regular expression whose group 1 is the transaction id.
        engine: ``module:Class`` of its engine, imported on first use.
        table_rules: ``module:function`` of the layout's own checks of a table definition,
            imported on first use: it raises `SchemaError` for a definition the layout
            cannot store and returns the settings it derives (``describe`` shows them).
        data_kinds: Catalog file kinds that hold rows (``partitions`` counts them).
        entry_kinds: Catalog file kinds whose entries retire older rows, and the name
            ``partitions`` gives their count.
        versions_follow_commits: Its files do not carry versions, so every commit keeps the
            table's versions in commit order: one made after a commit of a higher version
            (its transaction opened earlier) takes a fresh version (`MetaStore.commit`'s
            ``in_commit_order``). A layout whose paths hold the version (``version_id=V``)
            keeps a partition's versions in commit order itself.

    Hooks (``module:attr``, imported on first use by `hook`; ``None``: the layout does not
    do it, and asking raises `NotSupportedError`):

        ingest_sink: The streaming-ingest sink class (``versioned.layouts.ingest``).
        allocates_write_ids: Streaming ingest takes a write id per transaction from the
            catalog (Hive's write ids), not only transaction ids.
        change_files: ``(log, commit) -> (written, before)``: the catalog files holding what a
            commit wrote and those live before it where its pre-images are
            (``versioned.change_stream``).
        change_images: ``(task, fileio) -> Images``: one commit's pre- and post-images, read
            on an executor without Spark.
        import_files: Commits a data collection's files into a table as they are (no Spark);
            ``None``: an import upserts the collection's rows through the engine.
        compaction_kinds: The ``--kind`` values ``compact`` accepts (empty: none).
        live_rows: ``(files) -> int``: the live rows of a partition from its live catalog
            files; ``None``: its stored rows less its entries (each retires exactly one).
        compaction_due: ``(write_ids, snapshot, thresholds) -> {partition id: why}``: the
            partitions a compaction with those thresholds would pick, from catalog metadata
            only (the metadata tables and ``versioned ui`` show it).
        mutation_format: How the mutation API's ROW__ID-ordered mutations sit on storage:
            a `versioned.layouts.mutation_format.MutationFormat` (``versioned.mutation``).
    """

    name: str
    description: str
    capabilities: frozenset[str]
    file_formats: tuple[str, ...]
    transaction_dirs: str
    engine: str
    reserved_columns: frozenset[str] = frozenset()
    table_rules: str | None = None
    data_kinds: frozenset[str] = frozenset({"data"})
    entry_kinds: tuple[str, frozenset[str]] = ("index_entries", frozenset({"index"}))
    versions_follow_commits: bool = False
    ingest_sink: str | None = None
    allocates_write_ids: bool = False
    change_files: str | None = None
    change_images: str | None = None
    import_files: str | None = None
    compaction_kinds: tuple[str, ...] = ()
    compaction_due: str | None = None
    live_rows: str | None = None
    mutation_format: str | None = None
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
        """What the layout derives from a table definition (e.g. acid's bucketing version).

        Raises:
            SchemaError: The definition breaks one of the layout's own rules.
        """
        if self.table_rules is None:
            return {}
        settings: dict[str, Any] = _load(self.table_rules)(spec)
        return settings

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

    def load_engine(self) -> Any:
        """A new instance of the layout's engine (imports Spark)."""
        return _load(self.engine)(self)

    def has(self, hook: str) -> bool:
        """Whether the layout provides ``hook`` (one of the hook attributes)."""
        return getattr(self, hook) is not None

    def hook(self, hook: str, operation: str, table: object | None = None) -> Any:
        """What the layout's ``hook`` names, imported on first use.

        Raises:
            NotSupportedError: The layout has no such hook (it does not do ``operation``).
        """
        target = getattr(self, hook)
        if target is None:
            raise NotSupportedError.of(self.name, operation, table)
        return _load(target)


def _load(target: str) -> Any:
    """The attribute a ``module:attr`` string names."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
