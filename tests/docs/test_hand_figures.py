"""Figures in the docs are written by a command: no pasted output outside a generated block.

Issue 29: every performance figure of README.md and docs/benchmarks.md, and every
validation figure of docs/validation.md and docs/swaprate.md, is written by
``scripts/regenerate_docs.py`` into a generated block, or removed. This test finds
what looks like a pasted output outside a generated block: a fenced block without a
language (an output, not an example to run) and a Markdown table with a measured
figure in it (a decimal number or a percentage). ``ALLOWED`` lists the sections that
still quote such output, with how many each; a new one fails the test, and so does a
section that no longer has what the list says (so the list only shrinks). It cannot
see figures written in prose.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/benchmarks.md", "docs/validation.md", "docs/swaprate.md")
# A table cell that is a measured figure: a decimal number or a percentage, perhaps with
# a unit or in bold ("0.36", "**12.8%**", "61.1 s", "748 MB").
FIGURE = re.compile(r"^\**[-+−]?\d[\d,]*(\.\d+ ?|(\.\d+)? ?%)( ?(s|ms|µs|x|×|MB|GB|MiB))?\**$")
# The first line of a fence without a language that is a command to run, not its output.
COMMAND = re.compile(r"^(\$ |sdckit |\.venv/|make |python |pip |nice |[A-Z_]+=\S+ )")

# (document, heading of the section) -> number of pasted outputs it still holds.
ALLOWED: dict[tuple[str, str], int] = {}


def _commands(rest: list[str]) -> bool:
    """Whether the fence starting at ``rest`` holds commands only (no output)."""
    continued = False
    for line in rest:
        if line.startswith("```"):
            return True
        if line.strip() and not (continued or COMMAND.match(line) or line.startswith("#")):
            return False
        continued = line.rstrip().endswith("\\")
    return True


def hand_outputs(text: str) -> list[str]:
    """The heading of the section of every pasted output outside a generated block."""
    found: list[str] = []
    heading = ""
    generated = fence = False
    table: list[str] = []

    def end_table() -> None:
        cells = (cell.strip() for row in table[2:] for cell in row.strip().strip("|").split("|"))
        if any(FIGURE.match(cell) for cell in cells):
            found.append(heading)
        table.clear()

    lines = text.splitlines()
    for index, line in enumerate(lines):
        if fence:
            fence = not line.startswith("```")
            continue
        if line.startswith("|") and not generated:
            table.append(line)
            continue
        end_table()
        if line.startswith("<!-- generated"):
            generated = True
        elif line.startswith("<!-- end generated"):
            generated = False
        elif line.startswith("```"):
            fence = True
            if line.strip() == "```" and not generated and not _commands(lines[index + 1 :]):
                found.append(heading)
        elif line.startswith("#") and not generated:
            heading = line.lstrip("#").strip()
    end_table()
    return found


def test_hand_outputs_finds_fences_and_tables_outside_generated_blocks() -> None:
    text = (
        "# A\n```\nout 1.5\n```\n```python\nx = 1.5\n```\n"
        "| a | b |\n|---|---|\n| x | 2.5 |\n\n| a | b |\n|---|---|\n| x | y |\n"
        "## B\n<!-- generated: s.py -->\n```\n1.5\n```\n| a |\n|---|\n| 1.5 |\n"
        "<!-- end generated -->\n| a |\n|---|\n| 40% |\n"
        "```\nsdckit rwn in.csv \\\n  --eps 0.5\n```\n```\nsdckit rwn in.csv\nrwn: 1.5 s\n```\n| a | b |\n|---|---|\n| Lemma 4.4 | 95% interval |\n"
    )
    assert hand_outputs(text) == ["A", "A", "B", "B"]


def test_no_pasted_output_outside_the_allowed_sections() -> None:
    found = Counter(
        (doc, heading)
        for doc in DOCS
        for heading in hand_outputs((ROOT / doc).read_text(encoding="utf-8"))
    )
    new = {key: n for key, n in found.items() if n > ALLOWED.get(key, 0)}
    assert not new, f"pasted output outside a generated block (make it a block or remove it): {new}"
    gone = {key: n for key, n in ALLOWED.items() if found.get(key, 0) < n}
    assert not gone, f"ALLOWED lists more than these sections hold (shrink it): {gone}"


GENERATED = re.compile(
    r"^<!-- generated(?: markdown)?: (?P<command>.*?) -->\n(?P<body>.*?)^<!-- end generated -->",
    re.S | re.M,
)


def test_every_generated_block_was_written_by_the_rewriter() -> None:
    # A block's body starts with the line scripts/regenerate_docs.py writes (its command,
    # date, machine, load and versions), or says it has not been run yet: an output
    # pasted into a block by hand has no such line.
    pasted = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for m in GENERATED.finditer(text):
            first = (m.group("body").splitlines() or [""])[0]
            stamp = f"`.venv/bin/python {m.group('command').strip()}` on "
            # a long run saved once and written by `regenerate_docs.py --from-log`
            saved = f"`.venv/bin/python {m.group('command').strip()}`, output of a run saved"
            if not (first.startswith((stamp, saved)) or first.lower().startswith("not run yet")):
                line = text[: m.start()].count("\n") + 1
                pasted.append(f"{doc.name}:{line} {m.group('command')}")
    assert not pasted, f"generated blocks not written by scripts/regenerate_docs.py: {pasted}"
