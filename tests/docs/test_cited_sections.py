"""Every citation of the papers sdckit implements names a section that paper has.

Issue 29: "Every citation of these papers in src/ and docs/ names the right
section." This test reads every ``§``/``Section`` citation of the nine papers
in src/, docs/ and README.md and checks that the section exists in the paper's
table of contents, written out below from the papers themselves (section
numbers only, with their titles as a reader's check). It cannot tell a right
section from a wrong existing one; it does catch a section number that the
paper does not have, the commonest slip (a section of one paper cited under
another, or a section of the arXiv version that the journal version renumbered).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: (author pattern, year) -> {section number: title}
CONTENTS: dict[tuple[str, str], dict[str, str]] = {
    ("Perry, Matloff & Tendick", "2022"): {
        "1": "Introduction",
        "2": "SDC Methods",
        "3": "Statistical Views and Goals",
        "4": "Desirable Statistical 'Day Pass' Characteristics",
        "4.1": "Handling Mixed Continuous and Categorical Data",
        "4.2": "Preservation of Multivariate Relations",
        "5": "RWN: Randomization within Neighborhoods",
        "5.1": "Comparison to Rank Swapping",
        "6": "Rationale and Theoretical Basis",
        "7": "Neighborhoods and Tuning Parameters",
        "8": "Empirical Investigations",
        "8.1": "Statistical Utility",
        "8.2": "Privacy",
        "8.3": "Experiments",
        "8.4": "Prediction-Oriented Assessment",
        "9": "Large Data Sets and Computational Complexity",
        "10": "Computational Complexity of the Basic Method",
        "11": "Alternative Methods",
        "11.1": "Method 1: Draw Neighbors from a Sample of Points",
        "11.2": "Method 2: Sample Randomly from the Distance Matrix",
        "11.3": "Method 3: Partitioning",
    },
    ("Matloff & Tendick", "2015"): {
        "1": "Introduction",
        "2": "Overview of the Method",
        "3": "Theoretical Justification",
        "4": "Code and Tuning Parameters",
        "5": "Selection of Tuning Parameters",
        "6": "Example",
        "7": "Discussion",
        "8": "Work to Be Done",
    },
    ("Kifer", "2015"): {
        "1": "Introduction",
        "2": "Notation and the swapping model",
        "3": "Related work",
        "4": "Estimation",
        "4.1": "Parametric Methods",
        "4.1.1": "the relaxed likelihood",
        "4.1.2": "Algorithm 1",
        "4.1.3": "Multi-valued swap attributes",
        "4.1.4": "the model diagnostic (imbalance)",
        "4.2": "The Consensus Algorithm",
        "4.3": "Analysis of the Consensus Algorithm",
        "4.3.1": "Lemma 4.4's setting",
        "4.3.2": "the correlation diagnostic",
        "5": "Experiments",
        "5.1": "Estimation and Parametric Distributions",
        "5.2": "Diagnosing Inappropriate Model Choices",
        "5.3": "Estimation on Real data",
        "5.4": "Diagnosing correlations in models used by Consensus",
        "6": "Conclusions",
    },
    ("Bleninger", "2011"): {
        "1": "Introduction",
        "2": "The formal approach",
        "2.1": "Artificial outliers",
        "2.2": "Strategic dummies",
        "3": "The IAB Establishment Panel",
        "4": "Empirical evidence",
        "4.1": "Empirical evidence for artificial outliers",
        "4.2": "Empirical evidence for strategic dummies",
        "5": "Conclusion",
    },
    ("Domingo-Ferrer", "2011"): {
        "1": "Introduction",
        "1.1": "Contribution and plan of this paper",
        "2": "Basics of game theory",
        "3": "Coprivacy and its generalizations",
        "4": "Coprivacy in P2P anonymous keyword search",
        "5": "Correlated coprivacy in social networks",
        "6": "General coprivacy in vehicular networks",
        "7": "Controlled content distribution and digital oblivion",
        "8": "Conclusions and research directions",
    },
    ("Erola et al.", "2011"): {
        "1": "Introduction",
        "1.1": "Privacy Problems",
        "2": "Towards a semantic microaggregation for query logs",
        "2.1": "Microaggregation",
        "2.2": "Motivations of our proposal",
        "2.3": "An ODP similarity measure",
        "3": "ODP-based microaggregation of query logs",
        "3.1": "Data preparation",
        "3.2": "Partition",
        "3.3": "Aggregation",
        "4": "Evaluation",
        "4.1": "Usefulness evaluation method",
        "4.2": "Results",
        "4.2.1": "ODP levels",
        "4.2.2": "SRP vs. ODP-categories",
        "4.2.3": "Computational cost vs. ODP-categories",
        "4.2.4": "Considerations",
        "5": "Related work",
        "6": "Conclusions",
    },
    ("Giessing & Höhne", "2011"): {
        "1": "Introduction",
        "2": "Methodological background of SAFE",
        "2.1": "The SAFE mathematical model",
        "3": "Generating random noise for frequency tables",
        "3.1": "How to create zero-mean/fixed variance cell perturbations?",
        "3.2": "Combination of invariance and a 'no-small-cells' requirement?",
        "4": "Selection of random noise",
        "5": "How to restore table-additivity?",
        "6": "Some test results",
        "7": "Data utility - a cell level measure of information loss",
        "8": "Summary and final remarks",
    },
    ("Lucero et al.", "2011"): {
        "1": "Introduction",
        "2": "Background on the MAS",
        "3": "Overview of the MAS Confidentiality Rules",
        "3.1": "Confidentiality Rules for Universe Formation",
        "3.1.1": "Confidentiality by Minimum Universe Size Requirements",
        "3.1.2": "Confidentiality by Random Record Removal",
        "3.1.3": "Cutpoint Methods",
        "3.2": "Confidentiality Rules for Regression Models",
        "3.2.1": "Synthetic Residual Plots",
        "4": "Evaluation: Effectiveness of the Drop q Rule",
        "5": "Other Approaches",
        "6": "Future Work",
    },
    ("Oganian", "2011"): {
        "1": "Introduction",
        "2": "Multiplicative noise protocols",
        "3": "Preservation of higher moments",
        "4": "Inequality constraints preservation",
        "5": "Numerical experiments",
        "6": "Conclusions",
    },
}

AUTHORS = {
    "Perry, Matloff & Tendick": r"Perry,? Matloff,? (?:&|and) Tendick",
    "Matloff & Tendick": r"(?<!Perry, )(?<!Perry )Matloff (?:&|and) Tendick",
    "Kifer": r"Kifer",
    "Bleninger": r"Bleninger(?:, Drechsler,? (?:&|and) Ronning| et al\.)?",
    "Domingo-Ferrer": r"Domingo-Ferrer(?! &| and)",
    "Erola et al.": r"Erola et al\.",
    "Giessing & Höhne": r"Giessing (?:&|and) H(?:ö|oe)hne",
    "Lucero et al.": r"Lucero et al\.",
    "Oganian": r"Oganian",
}
NUMBER = r"\d+(?:\.\d+)*"
SECTION = rf"(?:§§?\s?|Sections?\s)({NUMBER})(?:\s?(?:–|-|and|,)\s?(?:§\s?)?({NUMBER}))?"
YEAR = r"\s?\(?(\d{4})[a-z]?\)?,?\s?\(?"


def _citations() -> list[tuple[str, int, str, str, str]]:
    """(file, line, paper key, year, section) of every section citation of the papers."""
    files = [*ROOT.glob("src/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md"]
    found = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        for key, author in AUTHORS.items():
            for m in re.finditer(author + YEAR + SECTION, text):
                year = m.group(1)
                paper = key
                if key == "Matloff & Tendick" and year == "2022":
                    paper = "Perry, Matloff & Tendick"  # cited by its last two authors
                line = text.count("\n", 0, m.start()) + 1
                for number in (m.group(2), m.group(3)):
                    if number:
                        found.append((str(path.relative_to(ROOT)), line, paper, year, number))
    return found


CITATIONS = _citations()


def test_the_citations_are_found():
    # the pattern must keep finding the citations (a regression of the regex would pass silently)
    assert len(CITATIONS) > 200
    assert {paper for _, _, paper, _, _ in CITATIONS} == set(AUTHORS)


@pytest.mark.parametrize("paper", sorted(AUTHORS))
def test_every_cited_section_exists_in_the_paper(paper):
    bad = []
    for file, line, cited, year, number in CITATIONS:
        if cited != paper:
            continue
        contents = CONTENTS.get((paper, year))
        if contents is None:
            continue  # another paper by the same author (e.g. Lucero 2009), not checked here
        if number not in contents:
            bad.append(f"{file}:{line}: {paper} ({year}), section {number}")
    assert not bad, "sections the paper does not have:\n" + "\n".join(bad)


#: Claims whose section is known: (paper's authors as a pattern, year, words of the claim,
#: the sections that hold it). A citation of that paper in the same paragraph (or table row)
#: as the words must name one of those sections. Each was once cited under a wrong section
#: that exists (which the test above cannot see).
TOPICS = [
    # "the latter would come to dominate the distance metric ... the wts argument": the
    # advice to shrink the weights of discrete variables is in "Code and Tuning Parameters".
    (r"Matloff\s+(?:&|and)\s+Tendick", "2015", r"dominat|shrink", {"4"}),
    # "eliminate 11 observations that contain values that appear to be erroneous or
    # biologically implausible": the cleaning of bodyfat is in "Experiments", not §8.1.
    (r"Matloff\s+(?:&|and)\s+Tendick", "2022", r"implausible", {"8.3"}),
]


def _paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs; every table row is a paragraph of its own."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        rows = [line for line in block.splitlines() if line.lstrip().startswith("|")]
        out += rows if rows else [block]
    return out


def _cited_near(pattern: str, year: str, words: str, text: str) -> list[str]:
    """The sections of ``pattern (year)`` cited in the paragraphs of ``text`` holding ``words``."""
    cite = re.compile(pattern + rf"(?:'s)?[^§\n]{{0,20}}?\(?{year}\)?,?\s*{SECTION}")
    found = []
    for paragraph in _paragraphs(text):
        if re.search(words, paragraph):
            for m in cite.finditer(paragraph):
                found += [n for n in m.groups() if n]
    return found


def test_known_claims_cite_the_section_that_holds_them():
    files = [*ROOT.glob("src/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md"]
    bad, seen = [], 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern, year, words, allowed in TOPICS:
            sections = _cited_near(pattern, year, words, text)
            seen += len(sections)
            bad += [
                f"{path.relative_to(ROOT)}: ({year}) §{s} for {words!r}"
                for s in sections
                if s not in allowed
            ]
    assert seen >= 3  # the claims are still cited (a pattern that finds nothing checks nothing)
    assert not bad, "claims cited under the wrong section:\n" + "\n".join(bad)


def test_a_claim_cited_under_another_section_is_caught():
    text = (
        "cleaned as in Perry, Matloff & Tendick (2022) Section 8.1: the 11 implausible records\n"
        "\nMatloff & Tendick's (2015, §3) advice to shrink the weights\n"
    )
    assert _cited_near(TOPICS[1][0], "2022", TOPICS[1][2], text) == ["8.1"]
    assert _cited_near(TOPICS[0][0], "2015", TOPICS[0][2], text) == ["3"]
