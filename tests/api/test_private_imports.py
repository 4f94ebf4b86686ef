"""No module of the library reaches into another module's private names.

The rule (docs/architecture.md, "Private names"): a leading underscore means
private to its module, so no other module imports ``_name`` from it —
siblings of the same package included. A helper two modules share lives in
a private module (``_name.py``, whose own names carry no underscore):
``sdckit/_x.py`` serves the whole library, ``sdckit/pkg/_x.py`` only the
modules of ``sdckit/pkg/``. Or it becomes a documented module-level function.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sdckit

ROOT = Path(sdckit.__file__).parent


def _module_name(path: Path) -> tuple[str, bool]:
    """Dotted name of a source file under the package, and whether it is a package."""
    parts = ("sdckit", *path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split(".")[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _private_part(dotted: str) -> int | None:
    """Index of the first private component of a dotted module name (None: all public)."""
    for i, part in enumerate(dotted.split(".")):
        if part.startswith("_") and not part.startswith("__"):
            return i
    return None


def _private_module_allowed(importer: str, module: str) -> bool:
    """``sdckit.pkg._x`` may be imported from inside ``sdckit.pkg`` only."""
    i = _private_part(module)
    if i is None:
        return True
    owner = ".".join(module.split(".")[:i])
    return importer == owner or importer.startswith(owner + ".")


def violations(source: str, importer: str, is_package: bool = False) -> list[str]:
    """Private names ``importer`` takes from other sdckit modules, one line each.

    Parameters
    ----------
    source : str
        The importing module's source.
    importer : str
        Its dotted name.
    is_package : bool
        Whether it is a package's ``__init__`` (for relative imports).

    Returns
    -------
    list of str
    """
    found = []
    parts = importer.split(".")
    modules: dict[str, str] = {}  # local name -> sdckit module it is bound to
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "sdckit":
                    continue
                if not _private_module_allowed(importer, alias.name):
                    found.append(f"{importer}:{node.lineno} imports {alias.name}")
                if alias.asname:
                    modules[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                keep = len(parts) - node.level + (1 if is_package else 0)
                source_module = ".".join(parts[:keep] + ([node.module] if node.module else []))
            else:
                source_module = node.module or ""
            if source_module.split(".")[0] != "sdckit":
                continue
            if not _private_module_allowed(importer, source_module):
                found.append(f"{importer}:{node.lineno} imports from {source_module}")
            for alias in node.names:
                dotted = f"{source_module}.{alias.name}"
                if _is_module(dotted):
                    if not _private_module_allowed(importer, dotted):
                        found.append(f"{importer}:{node.lineno} imports {dotted}")
                    modules[alias.asname or alias.name] = dotted
                elif (
                    alias.name.startswith("_")
                    and not alias.name.startswith("__")
                    and source_module != importer
                ):
                    found.append(f"{importer}:{node.lineno} imports {dotted}")
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not _is_module(f"{modules[node.value.id]}.{node.attr}")
        ):
            found.append(f"{importer}:{node.lineno} uses {modules[node.value.id]}.{node.attr}")
    return found


SOURCES = sorted(ROOT.rglob("*.py"))


def test_the_library_has_sources() -> None:
    assert len(SOURCES) > 50


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_crosses_a_module(path: Path) -> None:
    importer, is_package = _module_name(path)
    found = violations(path.read_text(encoding="utf-8"), importer, is_package)
    assert not found, "private names imported across modules:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "importer"),
    [
        ("from sdckit.tables.tabulate import _helper\n", "sdckit.tables.audit"),
        ("from .tabulate import _helper\n", "sdckit.tables.audit"),
        ("from sdckit.assess._inputs import MeasureInputs\n", "sdckit.attacks.linkage"),
        ("from sdckit.assess import _inputs\n", "sdckit.attacks.linkage"),
        ("import sdckit.assess._inputs\n", "sdckit.attacks.linkage"),
        ("from sdckit.tables import tabulate as t\nt._helper(1)\n", "sdckit.tables.audit"),
    ],
)
def test_the_check_sees_a_private_import(source: str, importer: str) -> None:
    assert violations(source, importer)


@pytest.mark.parametrize(
    ("source", "importer"),
    [
        ("from sdckit._highs import solve_highs\n", "sdckit.tables.additivity"),
        ("from sdckit import _highs\n", "sdckit.attacks.tables"),
        ("from sdckit.assess._inputs import MeasureInputs\n", "sdckit.assess.risk"),
        ("from sdckit.tables.tabulate import tabulate\n", "sdckit.tables.audit"),
        ("def _own():\n    pass\n_own()\n", "sdckit.tables.audit"),
    ],
)
def test_the_check_allows_private_modules_where_they_belong(source: str, importer: str) -> None:
    assert not violations(source, importer)
