"""SQL templates the engine fills in, shipped inside the package.

The templates live in ``versioned/engine/spark/sql/`` and nowhere else: they are package data
(``[tool.setuptools.package-data]`` in ``pyproject.toml``), so a wheel or an editable install
reads the very same file through `importlib.resources`, whatever the working directory. The
repository's top-level ``sql/`` holds only examples for people (queries to run with
``versioned sql``) and a README pointing here; nothing reads it at run time.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

_PACKAGE = __package__ or "versioned.engine.spark"


@cache
def template(name: str) -> str:
    """The text of ``versioned/engine/spark/sql/<name>``, without its leading comment block."""
    text = resources.files(_PACKAGE).joinpath("sql", name).read_text(encoding="utf-8")
    lines = text.splitlines()
    while lines and (lines[0].startswith("--") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)
