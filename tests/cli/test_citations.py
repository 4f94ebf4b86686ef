"""Papers are cited by authors and year, never by the label of the project's text copy."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LABEL = re.compile(r"seed ?0?0[0-4]\b|seed collection", re.IGNORECASE)


def _files() -> list[Path]:
    found = [ROOT / "README.md"]
    for folder, pattern in [
        ("src", "*.py"),
        ("docs", "*.md"),
        ("examples", "*.py"),
        ("benchmarks", "*.py"),
        ("tests", "*.py"),
    ]:
        found += sorted((ROOT / folder).rglob(pattern))
    return [f for f in found if f.resolve() != Path(__file__).resolve()]


def test_no_file_labels_in_citations() -> None:
    hits = [
        f"{f.relative_to(ROOT)}:{n}: {line.strip()}"
        for f in _files()
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), start=1)
        if LABEL.search(line)
    ]
    assert hits == []


def test_references_page_lists_every_implemented_paper() -> None:
    text = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for authors in [
        "Matloff, N. & Tendick, P. (2015)",
        "Perry, N., Matloff, N. & Tendick, P. (2022)",
        "Kifer, D. (2015)",
        "Bleninger, P., Drechsler, J. & Ronning, G. (2011)",
        "Domingo-Ferrer, J. (2011)",
        "Erola, A., Castellà-Roca, J., Navarro-Arribas, G. & Torra, V. (2011)",
        "Giessing, S. & Höhne, J. (2011)",
        "Lucero, J., Freiman, M., Singh, L., You, J., DePersio, M. & Zayatz, L.\n  (2011)",
        "Oganian, A. (2011)",
    ]:
        assert authors in text, authors
    assert "(docs/references.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
