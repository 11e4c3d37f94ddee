"""The layout registry: every storage layout, one line each, and the lookup by name.

This module is the only place that tells layouts apart by name. A new layout is one folder,
``versioned/layouts/<name>/`` with a ``layout.py`` holding its `StorageLayout`, plus one line
in `_LAYOUTS` (see ``docs/architecture.md``, "Adding a layout").
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from versioned.errors import SchemaError
from versioned.layouts.layout import DEAD_LETTER_DIR, OPERATIONS, STAGING_DIR, StorageLayout

__all__ = [
    "DEAD_LETTER_DIR",
    "OPERATIONS",
    "STAGING_DIR",
    "StorageLayout",
    "layout_names",
    "layout_of",
    "layouts",
    "register",
]

_LAYOUTS = (
    "versioned.layouts.version_partition.layout",  # "versioned": version partitions (default)
    "versioned.layouts.acid.layout",  # "acid": Hive ACID deltas
)
"""The registered layouts' ``layout`` modules, each defining ``LAYOUT``; the first is the
default of a new table."""

_REGISTRY: dict[str, StorageLayout] = {}


def register(layout: StorageLayout) -> StorageLayout:
    """Add a layout to the registry (or replace the one of that name)."""
    _REGISTRY[layout.name] = layout
    return layout


def unregister(name: str) -> None:
    """Remove a layout from the registry (a test's throw-away layout)."""
    _REGISTRY.pop(name, None)


def layout_of(name: str) -> StorageLayout:
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


def layouts() -> Iterable[StorageLayout]:
    """Every registered layout, in registration order."""
    return tuple(_REGISTRY.values())


def layout_names() -> tuple[str, ...]:
    """The names a table's ``layout`` may take, the default first."""
    return tuple(_REGISTRY)


for _module in _LAYOUTS:
    register(importlib.import_module(_module).LAYOUT)
