"""The fast subset of the validation registry: a change that breaks a reproduced number fails."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
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


def test_no_two_registry_entries_share_a_command() -> None:
    # make validate would run such a command twice, and registry.py --list would count it twice.
    commands = Counter(" ".join(REGISTRY.command(entry)) for entry in REGISTRY.REGISTRY)
    twice = sorted(command for command, n in commands.items() if n > 1)
    assert not twice, f"commands of more than one entry in registry.py: {twice}"


def test_every_generated_block_of_validation_md_is_a_registry_entry() -> None:
    # make validate runs the blocks, then the entries no block runs (--skip-blocks): a block
    # whose command is not an entry would be missing from `registry.py --list`.
    docs = [ROOT / "docs" / "validation.md", ROOT / "docs" / "swaprate.md"]
    blocks = set(REGISTRY.block_commands(docs)) - {"examples/validation/registry.py --by-paper"}
    entries = {" ".join(REGISTRY.command(entry)) for entry in REGISTRY.REGISTRY}
    assert blocks <= entries, f"blocks not in the registry: {sorted(blocks - entries)}"


def test_the_index_by_paper_names_headings_of_validation_md_and_counts_them() -> None:
    text = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]
    for item in REGISTRY.ITEMS:
        assert item.paper in REGISTRY.PAPERS, item
        assert item.verdict in REGISTRY.VERDICTS, item
        assert not item.section or any(item.section in h for h in headings), item.section
    index = REGISTRY.by_paper()
    assert f"| all | {len(REGISTRY.ITEMS)} |" in index
    reproduced = sum(item.verdict == "reproduced" for item in REGISTRY.ITEMS)
    assert index.splitlines()[-1].split(" | ")[2] == str(reproduced)


def test_skip_blocks_finds_the_commands_a_document_runs(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- generated: examples/validation/tables_invariant.py -->\nold\n"
        "<!-- end generated -->\n"
        "<!-- generated markdown: examples/validation/rwn_prgeng.py --n 5000 -->\nold\n"
        "<!-- end generated -->\n",
        encoding="utf-8",
    )
    found = REGISTRY.block_commands([doc])
    assert found == {
        "examples/validation/tables_invariant.py": doc,
        "examples/validation/rwn_prgeng.py --n 5000": doc,
    }
    invariant = next(e for e in REGISTRY.REGISTRY if e.script == "tables_invariant.py")
    assert " ".join(REGISTRY.command(invariant)) in found  # make validate leaves it to the block
