from __future__ import annotations

import ast
from pathlib import Path

import sdckit.tables

FORBIDDEN = ("sdckit.microdata", "sdckit.querylog", "sdckit.cli", "sdckit.server")


def test_tables_imports_no_sibling_capability():
    root = Path(sdckit.tables.__file__).parent
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith(FORBIDDEN), f"{path.name} imports {name}"
