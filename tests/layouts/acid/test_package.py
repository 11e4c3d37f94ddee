"""The acid layout package: its public names, and no Spark anywhere in it."""

from __future__ import annotations

import ast
from pathlib import Path

import versioned.layouts.acid as acid

PACKAGE = Path(acid.__file__).parent


def test_every_exported_name_exists() -> None:
    assert sorted(acid.__all__) == sorted(set(acid.__all__))
    for name in acid.__all__:
        assert hasattr(acid, name), name


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
