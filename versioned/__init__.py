"""versioned: an upsert engine for data-lake tables on Apache Spark."""

from __future__ import annotations

from versioned.errors import VersionedError

__version__ = "0.1.0"

__all__ = ["VersionedError", "__version__"]
