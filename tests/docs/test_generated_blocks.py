"""The generated blocks of the docs: each names a script that exists, and the rewriter works."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"])


def _regenerate_docs():
    spec = importlib.util.spec_from_file_location(
        "regenerate_docs", ROOT / "scripts" / "regenerate_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regenerate_docs"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_generated_block_names_a_script_and_is_closed(doc):
    tool = _regenerate_docs()
    text = doc.read_text(encoding="utf-8")
    found = tool.blocks(doc)
    lines = text.splitlines()
    opened = sum(line.startswith("<!-- generated") for line in lines)
    closed = sum(line == "<!-- end generated -->" for line in lines)
    assert opened == closed == len(found), f"{doc.name}: a block is not closed"
    for block in found:
        assert block.script.is_file(), f"{doc.name}: {block.command} names no script"


def test_a_block_is_rewritten_with_the_output_and_a_failure_keeps_it(tmp_path):
    tool = _regenerate_docs()
    good = tmp_path / "good.py"
    good.write_text("print('figure 42')\n")
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit(3)\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        f"text\n<!-- generated: {good} -->\nold\n<!-- end generated -->\n"
        f"<!-- generated markdown: {bad} --arg -->\nkept\n<!-- end generated -->\nend\n"
    )
    assert tool.main([str(doc)]) == 1  # the failing block makes the run fail
    text = doc.read_text()
    assert "```\nfigure 42\n```" in text and "old" not in text
    assert "load average" in text and "sdckit" in text
    assert "kept" in text  # the failed block is left as it was
    assert text.startswith("text\n") and text.endswith("end\n")


def test_a_command_that_prints_nothing_keeps_its_block(tmp_path):
    tool = _regenerate_docs()
    silent = tmp_path / "silent.py"
    silent.write_text("import sys\nprint('peer absent', file=sys.stderr)\n")
    doc = tmp_path / "doc.md"
    doc.write_text(f"<!-- generated: {silent} -->\nmeasured\n<!-- end generated -->\n")
    assert tool.main([str(doc)]) == 0
    assert doc.read_text() == f"<!-- generated: {silent} -->\nmeasured\n<!-- end generated -->\n"


def test_a_block_edited_above_while_its_command_runs_gets_the_output(tmp_path):
    tool = _regenerate_docs()
    doc = tmp_path / "doc.md"
    slow = tmp_path / "slow.py"
    # The script adds a new block above its own, as a person editing the page would.
    slow.write_text(
        "from pathlib import Path\n"
        f"doc = Path({str(doc)!r})\n"
        "text = doc.read_text()\n"
        f"new = '<!-- generated: {tmp_path / 'other.py'} -->\\nplaceholder\\n<!-- end generated -->\\n'\n"
        "doc.write_text(new + text)\n"
        "print('figure 7')\n"
    )
    (tmp_path / "other.py").write_text("print('other')\n")
    doc.write_text(f"<!-- generated: {slow} -->\nstale\n<!-- end generated -->\n")
    assert tool.main([str(doc)]) == 0
    text = doc.read_text()
    assert "placeholder" in text  # the block added meanwhile is untouched
    assert "```\nfigure 7\n```" in text and "stale" not in text


def test_a_saved_log_fills_the_block_of_its_command_only(tmp_path):
    tool = _regenerate_docs()
    long_run = tmp_path / "long_run.py"
    long_run.write_text("raise SystemExit('must not run')\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        f"<!-- generated: {long_run} --n 1 -->\nold one\n<!-- end generated -->\n"
        f"<!-- generated: {long_run} --n 2 -->\nold two\n<!-- end generated -->\n"
    )
    log = tmp_path / "run.log"
    log.write_text("uptime: load average 0.5\nfigure 99\n")
    assert tool.main([str(doc), "--command", f"{long_run} --n 2", "--from-log", str(log)]) == 0
    text = doc.read_text()
    assert "old one" in text and "old two" not in text
    assert "figure 99" in text and "saved in a log" in text
    # without --command, or naming no block, it refuses and writes nothing
    before = doc.read_text()
    with pytest.raises(SystemExit):
        tool.main([str(doc), "--from-log", str(log)])
    with pytest.raises(SystemExit):
        tool.main([str(doc), "--command", f"{long_run} --n 3", "--from-log", str(log)])
    assert doc.read_text() == before
