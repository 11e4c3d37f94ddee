"""The acid layout package: no face re-exporting its modules, and no Spark outside `engine/`."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import versioned.layouts.acid as acid
import versioned.layouts.version_partition as version_partition

PACKAGE = Path(acid.__file__).parent


def test_the_layout_packages_re_export_nothing() -> None:
    """Their ``__init__`` is a docstring: what a layout is, is imported by module name."""
    for package in (acid, version_partition):
        tree = ast.parse(Path(str(package.__file__)).read_text())
        body = [n for n in tree.body if not isinstance(n, ast.Expr)]
        assert all(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in body)


def test_registering_the_layouts_imports_nothing_else_of_them() -> None:
    """The registry imports each layout's ``layout`` module; its methods import the rest when
    called (a fresh interpreter: the suite's own has imported everything)."""
    probe = (
        "import sys, versioned.layouts.base as b; b.layout_of('acid'); "
        "print('\\n'.join(m for m in sys.modules if m.startswith('versioned.layouts.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    for name in ("acid", "version_partition"):
        own = {m for m in loaded if m.startswith(f"versioned.layouts.{name}.")}
        assert own == {f"versioned.layouts.{name}.layout"}, own


def test_no_module_imports_pyspark() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert not module.startswith("pyspark"), f"{path.name} imports {module}"
                assert not module.startswith("versioned.engine"), f"{path.name} imports {module}"
