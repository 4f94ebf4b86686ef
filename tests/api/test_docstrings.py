"""Every public function documents its parameters and what it returns (numpydoc).

"Public" means listed in the ``__all__`` of a module of the library (the
command line, whose docstrings are its help text, and the server's migration
scripts excepted). Checked with numpydoc's own validator: a missing
docstring (GL08), a parameter not documented (PR01), a documented parameter
that does not exist (PR02) and a missing ``Returns``/``Yields`` section
(RT01) on a function that returns something.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate", reason="numpydoc is a dev dependency")

import sdckit  # noqa: E402

CHECKS = {"GL08", "PR01", "PR02", "RT01"}
SKIP_PACKAGES = ("sdckit.cli", "sdckit.server.migrations")


def _modules() -> list[str]:
    names = ["sdckit"]
    for info in pkgutil.walk_packages(sdckit.__path__, "sdckit."):
        if info.name.startswith(SKIP_PACKAGES):
            continue
        names.append(info.name)
    return sorted(names)


def _public_callables() -> list[str]:
    """Dotted names of every function and class listed in a module's ``__all__``."""
    seen: dict[int, str] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            home = getattr(obj, "__module__", "")
            if not home.startswith("sdckit") or home.startswith(SKIP_PACKAGES):
                continue
            seen.setdefault(id(obj), f"{home}.{obj.__qualname__}")
    return sorted(set(seen.values()))


def _problems(dotted: str) -> list[str]:
    result = numpydoc_validate.validate(dotted)
    module_name, _, qualname = dotted.rpartition(".")
    obj = getattr(importlib.import_module(module_name), qualname, None)
    found = []
    for code, message in result["errors"]:
        if code not in CHECKS:
            continue
        if inspect.isclass(obj):
            # Frozen results and other dataclasses are built by the library and
            # document their fields as Attributes; exceptions need no Parameters.
            if code in {"PR01", "PR02", "RT01"} and (
                dataclasses.is_dataclass(obj) or issubclass(obj, BaseException)
            ):
                continue
            if code == "RT01":
                continue
        if code == "RT01" and obj is not None and inspect.isfunction(obj):
            returns = inspect.signature(obj).return_annotation
            if returns in (None, "None"):
                continue
        found.append(f"{code} {message}")
    return found


PUBLIC = _public_callables()


def test_there_is_a_public_api() -> None:
    assert len(PUBLIC) > 50


@pytest.mark.parametrize("dotted", PUBLIC)
def test_public_callable_is_documented(dotted: str) -> None:
    problems = _problems(dotted)
    assert not problems, f"{dotted}: " + "; ".join(problems)


if __name__ == "__main__":
    # The same check as a report, for one package while writing it:
    #   python tests/api/test_docstrings.py [sdckit.package ...]
    import sys

    prefixes = tuple(sys.argv[1:]) or ("sdckit",)
    failing = 0
    for dotted in PUBLIC:
        if not dotted.startswith(prefixes):
            continue
        problems = _problems(dotted)
        if problems:
            failing += 1
            print(f"{dotted}: " + "; ".join(problems))
    print(f"{failing} public callables with docstring problems")
