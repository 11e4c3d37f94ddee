"""The layout boundary: what a storage layout is, and the one registry that picks it.

A table's ``layout`` (``TableSpec.layout``) names how its rows, versions and deletes sit on
storage. Everything else a user sees of a table (upsert semantics, dead letters, time travel,
changes, permissions, compaction, crash safety) is the same for every layout, so the API
never asks which layout a table has: it asks the registry for the table's `TableLayout`
(plain Python: names, capabilities, path rules) and, for the work itself, for the layout's
engine (`versioned.layouts.engine_protocol.TableEngine`, loaded lazily because it needs Spark).

This module is the only place that tells layouts apart by name.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from versioned.errors import NotSupportedError, SchemaError
from versioned.schema import LAYOUTS as LAYOUT_NAMES

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
        imports_by_copy: An import copies the collection's files into the table as they
            are (no Spark); otherwise it upserts the collection's rows through the engine.
        table_rules: ``module:function`` of the layout's own checks of a table definition,
            imported on first use: it raises `SchemaError` for a definition the layout
            cannot store and returns the settings it derives (``describe`` shows them).
        data_kinds: Catalog file kinds that hold rows (``partitions`` counts them).
        entry_kinds: Catalog file kinds whose entries retire older rows, and the name
            ``partitions`` gives their count.
    """

    name: str
    description: str
    capabilities: frozenset[str]
    file_formats: tuple[str, ...]
    transaction_dirs: str
    engine: str
    reserved_columns: frozenset[str] = frozenset()
    imports_by_copy: bool = False
    table_rules: str | None = None
    data_kinds: frozenset[str] = frozenset({"data"})
    entry_kinds: tuple[str, frozenset[str]] = ("index_entries", frozenset({"index"}))
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
        module, _, name = self.table_rules.partition(":")
        settings: dict[str, Any] = getattr(importlib.import_module(module), name)(spec)
        return settings

    def staging_dir(self, table_location: str, txn_id: int) -> str:
        """Where transaction ``txn_id`` stages its files (relative to the warehouse)."""
        return f"{table_location}/{STAGING_DIR}/txn={txn_id}"

    def dead_letter_dir(self, table_location: str) -> str:
        """Where the table's rejected rows go (relative to the warehouse)."""
        return f"{table_location}/{DEAD_LETTER_DIR}"

    def transaction_of(self, relative_path: str) -> int | None:
        """The transaction that wrote a file, from its path under the table (None: unknown)."""
        for segment in relative_path.split("/"):
            match = self._segment.match(segment)
            if match:
                return int(match.group(1))
        return None

    def load_engine(self) -> Any:
        """A new instance of the layout's engine (imports Spark)."""
        module, _, name = self.engine.partition(":")
        return getattr(importlib.import_module(module), name)(self)


_REGISTRY: dict[str, TableLayout] = {}


def register(layout: TableLayout) -> TableLayout:
    """Add a layout to the registry (its name must be one of ``TableSpec``'s layouts)."""
    if layout.name not in LAYOUT_NAMES:
        raise ValueError(f"layout {layout.name!r} is not among {LAYOUT_NAMES}")
    _REGISTRY[layout.name] = layout
    return layout


def layout_of(name: str) -> TableLayout:
    """The registered layout called ``name``.

    Raises:
        SchemaError: No layout has that name.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise SchemaError(
            f"unknown layout {name!r}; use one of {', '.join(sorted(_REGISTRY))}"
        ) from None


def layouts() -> Iterable[TableLayout]:
    """Every registered layout, in registration order."""
    return tuple(_REGISTRY.values())


register(
    TableLayout(
        name="versioned",
        description="version partitions: one version_id=V folder per batch, with a "
        "version index and Bloom filters over its keys",
        capabilities=frozenset(OPERATIONS),
        file_formats=("parquet", "orc"),
        transaction_dirs=r"^(?:version_id|txn)=(\d+)$",
        engine="versioned.layouts.version_partition.engine.table_engine:VersionPartitionEngine",
        imports_by_copy=True,
        table_rules="versioned.layouts.version_partition.table_rules:version_table_settings",
    )
)
register(
    TableLayout(
        name="acid",
        description="Hive ACID deltas: base / delta / delete_delta folders of bucket ORC "
        "files with ROW__IDs",
        capabilities=frozenset(OPERATIONS),
        file_formats=("orc",),
        # an old compactor's ``_vT`` folder (or merged tombstones), the staging folder, and a
        # compactor's mark in its output folder (`layouts.acid.compacted_dirs`)
        transaction_dirs=(
            r"^(?:(?:base|delta|delete_delta)_\d+(?:_\d+)?(?:_\d{4})?_v|txn="
            r"|_versioned_compactor_txn=)(\d+)(?:\.orc)?$"
        ),
        engine="versioned.layouts.acid.engine.table_engine:AcidEngine",
        reserved_columns=frozenset({"ROW__ID"}),
        table_rules="versioned.layouts.acid.table_rules:acid_table_settings",
        data_kinds=frozenset({"base", "delta"}),
        entry_kinds=("delete_events", frozenset({"delete_delta"})),
    )
)
