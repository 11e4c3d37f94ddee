"""The layer rules of docs/architecture.md, checked on the source.

Imports are read with `ast` (nothing is imported), including imports inside functions (the
API imports the engine lazily, so Spark starts only when needed) and excluding those under
``if TYPE_CHECKING:``, which never run. The rules:

1. Dependencies point down the floors of `FLOORS`.
2. Nothing outside ``layouts/<name>/`` imports ``versioned.layouts.<name>``: a layout is
   reached only through the registry (`versioned.layouts.base`), which loads each layout's
   ``layout`` module by name. So neither layout imports the other.
3. No code outside the registry compares a layout name (``spec.layout == "acid"``) or asks
   for a layout by a literal name (``layout_of("acid")``).
4. ``pyspark`` is imported only in the engine folders (`ENGINE_FOLDERS`).
5. Every folder under ``layouts/`` is a registered layout with a ``layout.py``.
6. The web page (``ui/``) is a client of the public API, like the command line: it imports
   only `UI_MAY_IMPORT` of versioned (no layout, engine or catalog module, not even for
   types) and never pyspark.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "versioned"
LAYOUTS_DIR = PACKAGE / "layouts"
REGISTRY = "layouts.base"

FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset(floor)
    for floor in (
        {"cli", "demo", "ui"},  # the script, the demo and the web page
        {"api"},  # Catalog and Table: resolve a table once, hand its layout one request
        {"streaming", "mutation", "change_stream"},  # clients of tables, beside the API
        {REGISTRY},  # the registry: the one place that knows every layout
        {"layouts.<name>"},  # one folder per layout, its engine in layouts/<name>/engine/
        {"layouts"},  # what every layout implements: StorageLayout, its abilities, vacuum
        {"engine"},  # Spark machinery every layout shares: feeds/, spark/
        {"collections"},  # the data-collection format (folder, metadata, matching)
        {"options", "maintenance_policy"},  # options of table operations; the auto_compact policy
        {"catalog"},  # the SQLAlchemy metastore
        {"keys"},  # key encoding, Bloom filters, ranges, stats, latest-per-key
        {"storage", "values"},  # file systems and paths; typed values from text
        {
            "errors",
            "names",
            "schema",
            "schema_changes",
            "config",
            "results",
            "transaction_state",
            "record_ids",
        },
    )
)
"""Top to bottom: a module may import its own floor's area and the floors below it."""

FACES = {("collections.__init__", "versioned.api.collection_files")}
"""Package faces allowed one upward import: ``versioned.collections`` re-exports `read` and
`write` (they need Spark) from the API, imported inside its module ``__getattr__``."""

UI_MAY_IMPORT = ("api", "errors", "names", "ui")
"""What of versioned the web page imports: the public API, its errors and names, itself."""

ENGINE_FOLDERS = ("engine", "layouts.*.engine", "change_stream.engine", "mutation.engine")
"""Where pyspark may be imported: the shared engine, each layout's engine, the change
stream's Spark data source, the mutation API's Spark form."""


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


def _layout_folders() -> list[str]:
    return sorted(p.parent.name for p in LAYOUTS_DIR.glob("*/__init__.py"))


def _layout_folder(module: str) -> str | None:
    """``acid`` for ``layouts.acid.engine.writer``; None outside a layout's folder."""
    parts = module.split(".")
    if parts[0] == "layouts" and len(parts) > 2 and parts[1] in _layout_folders():
        return parts[1]
    return None


def _area(module: str) -> str:
    """The floor area of a module: ``engine`` for ``engine.feeds.reader``,
    ``layouts.<name>`` for anything in a layout's folder, ``layouts.base`` for the registry,
    ``layouts`` for the other shared layout modules, ``errors`` for ``errors``."""
    if _layout_folder(module) is not None:
        return "layouts.<name>"
    if module == REGISTRY:
        return REGISTRY
    return module.split(".")[0]


def _floor(area: str) -> int:
    for i, floor in enumerate(FLOORS):
        if area in floor:
            return i
    raise AssertionError(f"{area} is on no floor: add it to FLOORS (and docs/architecture.md)")


def _imported_module(name: str) -> str | None:
    parts = name.split(".")
    return ".".join(parts[1:]) if parts[0] == "versioned" and len(parts) > 1 else None


def _in_engine_folder(module: str) -> bool:
    parts = module.split(".")
    return (
        parts[0] == "engine"
        or (parts[0] == "layouts" and len(parts) > 2 and parts[2] == "engine")
        or (parts[0] in ("change_stream", "mutation") and parts[1:2] == ["engine"])
    )


def test_every_module_is_on_a_floor() -> None:
    """The checks below would pass vacuously for a module on no floor."""
    areas = {_area(module) for module, _ in _modules() if module != "__init__"}
    for area in areas:
        _floor(area)
    assert {"cli", "api", "layouts.<name>", "engine", "catalog", "keys", "storage"} <= areas


def test_imports_point_down_the_floors() -> None:
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} ({_area(module)}) imports {name} "
        f"({_area(target)})"
        for module, path in _modules()
        if module != "__init__"  # the package's face: versioned.connect and friends
        for name, line in _runtime_imports(path)
        if (target := _imported_module(name)) is not None
        if _floor(_area(target)) < _floor(_area(module))
        if (module, name) not in FACES
    ]
    assert offenders == []


def test_nothing_outside_a_layout_folder_imports_it() -> None:
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} imports {name}"
        for module, path in _modules()
        for name, line in _runtime_imports(path)
        if (target := _imported_module(name)) is not None
        if (folder := _layout_folder(target)) is not None
        if _layout_folder(module) != folder
    ]
    assert offenders == []


def test_type_only_imports_of_a_layout_stay_inside_it_too() -> None:
    """Even ``if TYPE_CHECKING:`` imports: a signature outside a layout naming its types
    would tie that code to the layout."""
    offenders = []
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                target = _imported_module(node.module)
                folder = _layout_folder(target) if target else None
                if folder is not None and _layout_folder(module) != folder:
                    offenders.append(f"versioned/{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


def _compares_a_layout(node: ast.Compare) -> bool:
    """``x.layout == ...``, ``layout != ...``, ``... in x.layout`` and the like."""
    if not all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
        return False
    for operand in (node.left, *node.comparators):
        if isinstance(operand, ast.Attribute) and operand.attr == "layout":
            return True
        if isinstance(operand, ast.Name) and operand.id in {"layout", "layout_name"}:
            return True
    return False


def _asks_by_literal(node: ast.Call) -> bool:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return (
        name == "layout_of"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def test_no_code_outside_the_registry_tells_layouts_apart_by_name() -> None:
    offenders = []
    for module, path in _modules():
        if module == REGISTRY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Compare) and _compares_a_layout(node)) or (
                isinstance(node, ast.Call) and _asks_by_literal(node)
            ):
                offenders.append(
                    f"versioned/{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}"
                )
    assert offenders == []


def test_pyspark_is_imported_only_in_the_engine_folders() -> None:
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}:{line} imports {name}"
        for module, path in _modules()
        if not _in_engine_folder(module)
        for name, line in _runtime_imports(path)
        if name.split(".")[0] == "pyspark"
    ]
    assert offenders == []


@pytest.mark.parametrize("folder", _layout_folders())
def test_every_layout_folder_is_registered_with_its_layout_module(folder: str) -> None:
    tree = ast.parse((LAYOUTS_DIR / "base.py").read_text(encoding="utf-8"))
    listed = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert f"versioned.layouts.{folder}.layout" in listed
    source = (LAYOUTS_DIR / folder / "layout.py").read_text(encoding="utf-8")
    module = ast.parse(source)
    classes = [n for n in module.body if isinstance(n, ast.ClassDef)]
    assert any("StorageLayout" in {ast.unparse(b) for b in c.bases} for c in classes)
    assert any(
        isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["LAYOUT"]
        for n in module.body
    )


def _every_import(path: Path) -> Iterator[tuple[str, int]]:
    """Imports of a module, those under ``if TYPE_CHECKING:`` too."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno


def _ui_offences(imports: list[tuple[str, int]]) -> list[str]:
    return [
        f"{name} (line {line})"
        for name, line in imports
        if name.split(".")[0] == "pyspark"
        or (
            (target := _imported_module(name)) is not None
            and target.split(".")[0] not in UI_MAY_IMPORT
        )
    ]


def test_the_web_page_uses_only_the_public_api() -> None:
    modules = [(module, path) for module, path in _modules() if module.startswith("ui.")]
    assert modules, "versioned/ui/ has no module"
    offenders = [
        f"versioned/{path.relative_to(PACKAGE)}: {offence}"
        for _, path in modules
        for offence in _ui_offences(list(_every_import(path)))
    ]
    assert offenders == []


def test_the_rules_catch_what_they_are_for() -> None:
    """The checks themselves can fail: each finds a planted offence."""
    assert _compares_a_layout(ast.parse('spec.layout == "acid"', mode="eval").body)  # type: ignore[arg-type]
    assert _compares_a_layout(ast.parse('layout in ("acid",)', mode="eval").body)  # type: ignore[arg-type]
    assert not _compares_a_layout(ast.parse("spec.name == other", mode="eval").body)  # type: ignore[arg-type]
    assert _asks_by_literal(ast.parse('layout_of("acid")', mode="eval").body)  # type: ignore[arg-type]
    assert not _asks_by_literal(ast.parse("layout_of(spec.layout)", mode="eval").body)  # type: ignore[arg-type]
    assert _layout_folder("layouts.acid.engine.writer") == "acid"
    assert _layout_folder("layouts.base") is None
    assert _floor(_area("keys.bloom")) > _floor(_area("layouts.version_partition.index"))
    assert _in_engine_folder("layouts.acid.engine.reader")
    assert not _in_engine_folder("layouts.acid.orc_files")
    assert _ui_offences([("versioned.layouts.base", 1), ("pyspark.sql", 2)]) == [
        "versioned.layouts.base (line 1)",
        "pyspark.sql (line 2)",
    ]
    assert _ui_offences([("versioned.api.table", 1), ("starlette.routing", 2)]) == []
