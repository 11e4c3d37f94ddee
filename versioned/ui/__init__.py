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
CATALOG_WAIT_S = 2.0
"""How long a request keeps trying a catalog that cannot be reached (at most: a shorter
``VERSIONED_CATALOG_OUTAGE_S`` wins) before its page says so: the page tries again by
itself, so it need not ride out an outage the way a command does."""
RETRY_S = 10
"""Seconds after which a page that could not reach the catalog reloads itself."""


def missing_requirements() -> list[str]:
    """The modules of `REQUIREMENTS` that cannot be imported here."""
    missing = []
    for name in REQUIREMENTS:
        try:
            import_module(name)
        except ImportError:
            missing.append(name)
    return missing
