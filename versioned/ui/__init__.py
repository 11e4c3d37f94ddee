"""``versioned ui``: a local, read-only web page over the catalog, for the user running it.

Every page is built from catalog metadata (`versioned.api.metadata_tables`, through
`Table.metadata`), never from Spark: an overview of the tables the user may read, and one
page per table (commits, partitions, schema history, stream writers, dead letters, open
transactions and locks). It is a client of the public API, like the command line, and sees
exactly what the user's grants let the command line see. Its dependencies are the ``ui``
extra (``pip install 'versioned[ui]'``); `missing_requirements` says which are absent.
"""

from __future__ import annotations

from importlib import import_module

REQUIREMENTS = ("starlette", "jinja2", "uvicorn", "matplotlib")
"""The modules the page needs (the ``ui`` extra of the package)."""
INSTALL_HINT = "pip install 'versioned[ui]'"


def missing_requirements() -> list[str]:
    """The modules of `REQUIREMENTS` that cannot be imported here."""
    missing = []
    for name in REQUIREMENTS:
        try:
            import_module(name)
        except ImportError:
            missing.append(name)
    return missing
