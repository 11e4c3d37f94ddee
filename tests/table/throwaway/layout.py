"""The throw-away layout as the registry sees it: it can create a table and nothing else."""

from __future__ import annotations

from versioned.layouts.layout import TableLayout

NAME = "throwaway"


class NoEngine:
    """Stands for an engine that is not written: loading it at all is a bug of the caller,
    which must ask the layout's capabilities first (`engine_for`)."""

    def __init__(self, layout: TableLayout) -> None:
        raise AssertionError(f"the engine of the {layout.name} layout was loaded")


LAYOUT = TableLayout(
    name=NAME,
    description="a layout with nothing built: a table can be created, no more",
    capabilities=frozenset({"create"}),
    file_formats=("parquet", "orc"),
    transaction_dirs=r"^txn=(\d+)$",
    engine="tests.table.throwaway.layout:NoEngine",
)
