"""Errors of data collections: a folder that is not a usable collection, or that does not
fit the table it is imported into.

They derive from the area bases of `versioned.errors`, so the CLI maps them to exit codes
like every other error, and keep their inputs as attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from versioned.errors import AlreadyExistsError, InputError, SchemaError


class CollectionError(InputError):
    """A folder is not a valid data collection: missing or malformed metadata, listed files
    that are missing or changed, data files that do not match the metadata."""


class IncompleteCollectionError(CollectionError):
    """The folder has no metadata file: not a collection, or a write that did not finish."""


class CollectionFormatError(CollectionError):
    """The metadata file is of a format (major version) this release cannot read."""


class ImportMismatchError(SchemaError):
    """The collection does not fit the target table; ``differences`` lists every mismatch."""

    def __init__(self, message: str, **context: Any) -> None:
        context.setdefault("differences", ())
        super().__init__(message, **context)


class PartitionExistsError(AlreadyExistsError):
    """A partition the collection would create exists in the target table already."""


def mismatch(table: str, differences: Sequence[str]) -> ImportMismatchError:
    """The error listing every way a collection does not fit ``table``."""
    listed = "; ".join(differences)
    return ImportMismatchError(
        f"the collection does not fit {table}, nothing was imported: {listed}",
        table=table,
        differences=tuple(differences),
    )
