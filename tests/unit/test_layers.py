"""The layer rule of docs/architecture.md, checked on the source: dependencies point down.

Imports are read with `ast` (nothing is imported), including imports inside functions (the
API imports the engine lazily, so Spark starts only when needed) and excluding those under
``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "versioned"

LAYERS = ("cli", "api", "engine", "layouts", "catalog", "storage")
"""Top to bottom: a module may import its own layer and the layers below it."""

PLAIN = (
    "errors",
    "names",
    "schema",
    "schema_changes",
    "config",
    "results",
    "options",
    "values",
    "transaction_state",
    "record_ids",
)
"""Plain modules beside the layers: any layer imports them; they import no layer that runs Spark."""

CLIENTS = ("streaming", "mutation")
"""Clients beside the engine (DESIGN.md): they write files directly and use the catalog, so
they import the layers below the engine (layouts, catalog, storage) and plain modules, never
the engine (Spark), the API or the CLI."""


def _runtime_imports(path: Path) -> Iterator[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_only.update(id(inner) for inner in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno


def _modules() -> list[tuple[str, Path]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    return [(".".join(p.relative_to(PACKAGE).with_suffix("").parts), p) for p in paths]


def _area(module: str) -> str:
    """``engine`` for ``engine.feeds.reader``, ``results`` for ``results``."""
    return module.split(".")[0]


def _imported_area(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if parts[0] == "versioned" and len(parts) > 1 else None


def test_layer_modules_exist() -> None:
    """The check below would pass vacuously if a layer were renamed."""
    areas = {_area(module) for module, _ in _modules()}
    assert set(LAYERS) | set(PLAIN) <= areas


def test_pyspark_is_imported_only_under_versioned_engine() -> None:
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} imports {name}"
        for module, path in _modules()
        if _area(module) != "engine"
        for name, line in _runtime_imports(path)
        if name.split(".")[0] == "pyspark"
    ]
    assert offenders == []


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_only_its_own_layer_and_those_below(layer: str) -> None:
    above = set(LAYERS[: LAYERS.index(layer)])
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} imports {name}"
        for module, path in _modules()
        if _area(module) == layer
        for name, line in _runtime_imports(path)
        if _imported_area(name) in above
    ]
    assert offenders == []


@pytest.mark.parametrize("client", CLIENTS)
def test_clients_import_no_engine_api_or_cli(client: str) -> None:
    modules = [(module, path) for module, path in _modules() if _area(module) == client]
    assert modules, f"no versioned/{client}/ package to check"
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} imports {name}"
        for module, path in modules
        for name, line in _runtime_imports(path)
        if _imported_area(name) in {"cli", "api", "engine"} or name.split(".")[0] == "pyspark"
    ]
    assert offenders == []


def test_plain_modules_import_no_layer_that_runs_spark_or_serves_users() -> None:
    upper = {"cli", "api", "engine"}
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} imports {name}"
        for module, path in _modules()
        if _area(module) in PLAIN
        for name, line in _runtime_imports(path)
        if _imported_area(name) in upper
    ]
    assert offenders == []
