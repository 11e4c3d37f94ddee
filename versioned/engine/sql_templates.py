"""SQL shipped in the repository's ``sql/`` folder (and in the package), filled in by the engine."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path


@cache
def template(name: str) -> str:
    """The text of ``sql/<name>``, without its leading comment block."""
    text = _read(name)
    lines = text.splitlines()
    while lines and (lines[0].startswith("--") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)


def _read(name: str) -> str:
    packaged = resources.files("versioned").joinpath("sql", name)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parents[2] / "sql" / name).read_text(encoding="utf-8")
