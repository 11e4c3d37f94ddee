"""`api/` is a facade (issue 47): no module of the package past 450 lines, and no private
member of `Table` used outside the three modules that define it (the maintenance and
inspection namespaces go through its public methods)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "versioned"
TABLE_MODULES = ("api/table.py", "api/table_reads.py", "api/table_streams.py")
MAX_LINES = 450


def _private_members() -> set[str]:
    names: set[str] = set()
    for rel in TABLE_MODULES:
        tree = ast.parse((PACKAGE / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name.startswith("Table"):
                for item in ast.walk(node):
                    if isinstance(item, ast.FunctionDef) and item.name.startswith("_"):
                        names.add(item.name)
                    owned = isinstance(item, ast.Attribute) and item.attr.startswith("_")
                    if owned and ast.unparse(item.value) == "self":  # type: ignore[attr-defined]
                        names.add(item.attr)  # type: ignore[attr-defined]
    return {n for n in names if not n.startswith("__")}


def test_no_module_of_the_package_is_past_the_limit() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_private_member_of_table_is_used_outside_it() -> None:
    private = _private_members()
    assert {"_apply", "_engine", "_store"} <= private  # the scan sees Table's members
    used = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE))
        if rel in TABLE_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Attribute) and node.attr in private):
                continue
            owner = ast.unparse(node.value)
            if owner in ("self", "cls") or owner.startswith("self."):
                continue
            if "table" in owner.lower() or owner in ("t", "tbl"):
                used.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert used == []
