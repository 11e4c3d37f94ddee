"""The pictures of docs/architecture.md: what their script draws, readable, naming real code."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "docs" / "architecture"
SCRIPT = FOLDER / "draw.py"


@pytest.fixture(scope="module")
def draw() -> Iterator[ModuleType]:
    sys.path.insert(0, str(FOLDER))
    try:
        yield importlib.import_module("draw")
    finally:
        sys.path.remove(str(FOLDER))
        sys.modules.pop("draw", None)
        sys.modules.pop("canvas", None)
        sys.modules.pop("content", None)


def test_committed_svgs_are_what_the_script_draws(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    drawn = sorted(p.name for p in tmp_path.glob("*.svg"))
    assert drawn == ["layers.svg", "upsert.svg"]
    for name in drawn:
        assert (tmp_path / name).read_bytes() == (FOLDER / name).read_bytes(), (
            f"docs/architecture/{name} differs from what draw.py draws: run `make docs`"
        )


def test_drawing_twice_gives_the_same_svg(draw: ModuleType) -> None:
    canvas = sys.modules["canvas"]
    first = {stem: canvas.to_svg(c) for stem, c in draw.pictures().items()}
    second = {stem: canvas.to_svg(c) for stem, c in draw.pictures().items()}
    assert first == second


def test_no_label_overlaps_another_or_leaves_its_box(draw: ModuleType) -> None:
    canvas = sys.modules["canvas"]
    assert {stem: canvas.problems(c) for stem, c in draw.pictures().items()} == {
        "layers": [],
        "upsert": [],
    }


def test_overlapping_labels_are_found(draw: ModuleType) -> None:
    canvas = sys.modules["canvas"]
    c = canvas.Canvas(200, 100, "t")
    box = c.rect(10, 10, 60, 30)
    c.text(12, 30, "a label too long for its box", 12, owner=box)
    c.text(14, 32, "another", 12)
    found = canvas.problems(c)
    assert any(p.startswith("outside its box") for p in found)
    assert any(p.startswith("overlap") for p in found)
    assert any(p.startswith("outside the picture") for p in found)


def _named_modules(draw: ModuleType) -> set[str]:
    names: set[str] = set()
    for c in draw.pictures().values():
        for item in c.texts():
            names.update(re.findall(MODULE, item.text))
    return names


MODULE = r"[\w/]+\.py\b"


def _missing(names: set[str]) -> list[str]:
    """Names that end no path of a file of the package, the tests or docs/."""
    files = [
        p.relative_to(ROOT).as_posix()
        for top in ("versioned", "tests", "docs")
        for p in (ROOT / top).rglob("*.py")
    ]
    return sorted(
        name for name in names if not any(f == name or f.endswith("/" + name) for f in files)
    )


def test_modules_named_in_the_pictures_exist(draw: ModuleType) -> None:
    named = _named_modules(draw)
    assert len(named) > 40
    assert _missing(named) == []


def test_modules_named_in_architecture_md_exist() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(MODULE, text))
    assert len(named) > 30
    assert _missing(named) == []
