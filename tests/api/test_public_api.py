"""Each package's namespace is what a user calls; plumbing lives in its modules.

Names that left a package namespace (issue 14, item 8) stay importable from
it for one release with a DeprecationWarning naming their new home.
"""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "sdckit",
    "sdckit.assess",
    "sdckit.coprivacy",
    "sdckit.microdata",
    "sdckit.neighbors",
    "sdckit.server",
    "sdckit.swaprate",
    "sdckit.tables",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_existing_names(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__, f"{name} has an empty __all__"
    missing = [n for n in package.__all__ if not hasattr(package, n)]
    assert not missing, f"{name}.__all__ names {missing}, which the package does not have"
    assert len(set(package.__all__)) == len(package.__all__)


@pytest.mark.parametrize(
    ("package", "name", "home"),
    [
        ("sdckit.tables", "lookup_noise", "sdckit.tables.cellkey"),
        ("sdckit.tables", "release_frame", "sdckit.tables.release"),
        ("sdckit.server", "xi", "sdckit.server.differencing"),
        ("sdckit.swaprate", "agreement_sums", "sdckit.swaprate.consensus"),
        ("sdckit.microdata", "TreeBackend", "sdckit.neighbors.backends"),
    ],
)
def test_plumbing_left_the_namespace_but_still_imports(package: str, name: str, home: str) -> None:
    module = importlib.import_module(package)
    assert name not in module.__all__
    assert name not in vars(module)
    with pytest.warns(DeprecationWarning, match=f"import it from {home}"):
        moved = getattr(module, name)
    assert moved is getattr(importlib.import_module(home), name)


def test_unknown_names_still_raise_attribute_error() -> None:
    tables = importlib.import_module("sdckit.tables")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tables.nope  # noqa: B018
