"""The throw-away layout as the registry sees it: it can create a table and nothing else."""

from __future__ import annotations

from versioned.layouts.engine_protocol import TableEngine
from versioned.layouts.layout import StorageLayout

NAME = "throwaway"


class ThrowawayLayout(StorageLayout):
    """A layout whose engine is not written: loading it at all is a bug of the caller, which
    must ask the layout's capabilities first (`engine_for`)."""

    def engine(self) -> TableEngine:
        raise AssertionError(f"the engine of the {self.name} layout was loaded")


LAYOUT = ThrowawayLayout(
    name=NAME,
    description="a layout with nothing built: a table can be created, no more",
    capabilities=frozenset({"create"}),
    file_formats=("parquet", "orc"),
    transaction_dirs=r"^txn=(\d+)$",
    data_kinds=frozenset({"data"}),
    entry_kinds=("entries", frozenset()),
)
