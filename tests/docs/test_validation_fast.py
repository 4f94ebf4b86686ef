"""The fast subset of the validation registry: a change that breaks a reproduced number fails."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


def _registry():
    path = ROOT / "examples" / "validation" / "registry.py"
    spec = importlib.util.spec_from_file_location("validation_registry", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


REGISTRY = _registry()
FAST = [entry for entry in REGISTRY.REGISTRY if entry.fast_args is not None]
NEEDS_DATA = {"rwn_prgeng.py": "prgeng.csv"}


def test_registry_lists_every_validation_script_once_at_least() -> None:
    folder = ROOT / "examples" / "validation"
    scripts = {p.name for p in folder.glob("[!_]*.py")} - {"registry.py"}
    listed = {entry.script for entry in REGISTRY.REGISTRY}
    assert scripts <= listed, f"not in examples/validation/registry.py: {sorted(scripts - listed)}"
    assert listed <= scripts
    assert FAST and all(entry.expect for entry in FAST)


@pytest.mark.slow
@pytest.mark.parametrize("entry", FAST, ids=[entry.script for entry in FAST])
def test_fast_validation_reproduces_its_numbers(entry, tmp_path: Path) -> None:
    needed = NEEDS_DATA.get(entry.script)
    if needed and not (DATA / needed).exists():
        pytest.skip(f"{DATA / needed} is absent")
    row = REGISTRY.run(entry, tmp_path, fast=True)
    output = (tmp_path / row["output"]).read_text(encoding="utf-8")
    assert row["code"] == 0, output[-2000:]
    assert not row["missing"], f"expected text not printed: {row['missing']}\n{output[-2000:]}"
