"""Every Python example in README.md and docs/*.md runs, so the docs cannot drift.

Each Markdown file's ```` ```python ```` blocks run in order in one namespace
(later blocks use names from earlier ones, as a reader does), in a scratch
directory laid out like a clone (``../shared`` beside it), with sdckit's own
DeprecationWarnings as errors. The sample data an example takes for granted
(``data``, ``people``...) is built by a hidden HTML comment in the same file::

    <!-- docs-test setup
    data = pd.read_csv("../shared/data/bodyfat.csv")
    -->

placed before the example that needs it (comments and examples run in the
order they stand), so a reader sees the example as written and the test sees
where its data come from. A file whose examples read ``../shared/data`` is skipped with a
printed reason when that folder is absent.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_PIECE = re.compile(
    r"^```python\n(?P<example>.*?)^```|<!-- docs-test setup\n(?P<setup>.*?)-->", re.S | re.M
)


def _pieces(path: Path) -> list[tuple[str, int, str]]:
    """(kind, line, code) for every example and setup comment, in document order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for m in _PIECE.finditer(text):
        kind = "example" if m.group("example") is not None else "setup"
        found.append((kind, text.count("\n", 0, m.start()) + 1, m.group(kind)))
    return found


def _with_examples() -> list[Path]:
    return [p for p in DOCS if any(kind == "example" for kind, _, _ in _pieces(p))]


# The assessment guide's sweep (4 settings x 10 replications, then a report) is the slow one.
_SLOW = {"assess.md"}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in _SLOW else p for p in _with_examples()],
    ids=lambda p: p.name,
)
def test_doc_examples_run(path: Path, tmp_path: Path) -> None:
    pieces = _pieces(path)
    if "../shared" in "".join(code for _, _, code in pieces) and not SHARED.exists():
        pytest.skip(f"{path.name} reads ../shared/data, which is not present at {SHARED}")
    work = tmp_path / "clone"
    work.mkdir()
    if SHARED.exists():
        (tmp_path / "shared").symlink_to(SHARED)
    namespace: dict[str, object] = {"__name__": f"docs_{path.stem}"}
    here = Path.cwd()
    os.chdir(work)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", category=DeprecationWarning, module="sdckit")
            warnings.filterwarnings("error", category=DeprecationWarning, message=".*sdckit.*")
            exec("import numpy as np\nimport pandas as pd\n", namespace)
            for kind, line, code in pieces:
                try:
                    exec(compile(code, f"{path.name}:{line}", "exec"), namespace)
                except Exception as exc:
                    raise AssertionError(
                        f"{path.relative_to(ROOT)}, {kind} at line {line} failed: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
    finally:
        os.chdir(here)


def test_every_doc_with_examples_is_tested() -> None:
    names = {p.name for p in _with_examples()}
    assert {"README.md", "tables.md", "swaprate.md"} <= names
