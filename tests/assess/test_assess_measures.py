"""The measure protocol: every measure provides headline() and note(), the assessment walks one
registry, and a neighbour backend given to assess serves its distance-based measures."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from sdckit._results import FrozenResult
from sdckit.assess import assess, distance_to_closest, measures, record_linkage, report
from sdckit.assess.measures import (
    MEASURES,
    Measure,
    MeasureFigure,
    MeasureInputs,
    MeasureSpec,
)
from sdckit.neighbors import TreeBackend


class CountingBackend:
    """An exact KD-tree that counts what it is asked."""

    name = "counting"

    def __init__(self):
        self.inner = TreeBackend("kd_tree")
        self.calls = {"fit": 0, "query": 0, "count_within": 0}

    def fit(self, matrix):
        self.calls["fit"] += 1
        self.inner.fit(matrix)

    def query(self, points, k):
        self.calls["query"] += 1
        return self.inner.query(points, k)

    def count_within(self, points, radius):
        self.calls["count_within"] += 1
        return self.inner.count_within(points, radius)

    def kneighbors(self, rows, k):
        return self.inner.kneighbors(rows, k)

    def radius_counts(self, rows, radius):
        return self.inner.radius_counts(rows, radius)

    def radius_neighbors(self, rows, radius):
        return self.inner.radius_neighbors(rows, radius)


def test_a_backend_passed_to_assess_serves_distance_and_linkage(numeric_pair):
    original, masked = numeric_pair
    backend = CountingBackend()
    mine = assess(original, masked, backend=backend, chunk_size=50, n_jobs=2)
    # One linkage search (fit on the masked file, queries, tie counts) and two within-file searches.
    assert backend.calls["fit"] == 3
    assert backend.calls["query"] == 3 * 6  # 300 records in blocks of 50, three searches
    assert backend.calls["count_within"] >= 1
    default = assess(original, masked)
    assert mine.headline() == default.headline()


def test_a_backend_passed_to_the_measures_themselves_is_used(numeric_pair):
    original, masked = numeric_pair
    backend = CountingBackend()
    linkage = record_linkage(original, masked, backend=backend)
    assert backend.calls["fit"] == 1 and backend.calls["query"] >= 1
    assert linkage.rate == record_linkage(original, masked).rate
    dcr = distance_to_closest(original, masked, backend="brute")
    reference = distance_to_closest(original, masked)
    assert np.allclose(dcr.within_original, reference.within_original)
    assert np.allclose(dcr.original_to_masked, reference.original_to_masked)


def test_a_backend_that_is_not_one_is_refused_by_name(numeric_pair):
    original, masked = numeric_pair
    with pytest.raises(Exception, match="backend"):
        assess(original, masked, backend="annoy")


def test_the_registry_names_every_measure_of_utility_and_risk(numeric_pair):
    original, masked = numeric_pair
    a = assess(original, masked, response="a", keys=["group"])
    for side, holder in (("utility", a.utility), ("risk", a.risk)):
        registered = [spec.name for spec in MEASURES if spec.side == side]
        # every registered measure is an attribute (None where it does not apply) ...
        assert all(getattr(holder, name) is holder.measures.get(name) for name in registered)
        # ... and the holder holds nothing else
        assert set(holder.measures) <= set(registered)
        with pytest.raises(AttributeError, match="no measure named 'nothing'"):
            holder.nothing  # noqa: B018
    assert a.utility.prediction is None and a.risk.keys is not None
    assert len({spec.note_rank for spec in MEASURES}) == len(MEASURES)
    assert len({spec.figure_rank for spec in MEASURES}) == len(MEASURES)


@dataclasses.dataclass(frozen=True)
class SpreadRatio(FrozenResult):
    """A toy measure: the masked file's spread over the original's, per numeric variable."""

    ratios: pd.Series
    LABELS: ClassVar[dict[str, str]] = {"spread_ratio_max": "largest spread ratio"}

    def summary(self) -> str:
        return f"spread ratio: at most {self.ratios.max():.3f}"

    def headline(self) -> dict[str, float]:
        return {"spread_ratio_max": float(self.ratios.max())}

    def note(self) -> str | None:
        return "The toy spread ratio was computed."


def spread_ratio(inputs: MeasureInputs) -> SpreadRatio | None:
    """Computed from the shared inputs alone: no other edit of the assessment."""
    if not inputs.numeric:
        return None
    cols = inputs.numeric
    return SpreadRatio(inputs.masked[cols].std() / inputs.original[cols].std())


def spread_figure(result: SpreadRatio) -> MeasureFigure:
    fig = Figure(figsize=(3, 2))
    fig.subplots().bar(list(result.ratios.index), result.ratios.to_numpy())
    return MeasureFigure("Toy spread ratios", "The masked spread over the original's.", fig)


def test_a_measure_registered_in_one_line_reaches_assessment_summary_and_report(
    numeric_pair, monkeypatch, tmp_path
):
    original, masked = numeric_pair
    toy = MeasureSpec("spread", "utility", SpreadRatio, spread_ratio, 5, 5, figure=spread_figure)
    monkeypatch.setattr(measures, "MEASURES", (*MEASURES, toy))
    a = assess(original, masked)
    expected = (masked[["a", "b", "c"]].std() / original[["a", "b", "c"]].std()).max()
    assert a.utility.spread.headline() == {"spread_ratio_max": pytest.approx(expected)}
    assert "spread" in dict(a.measures())
    assert a.headline()["spread_ratio_max"] == pytest.approx(expected)
    assert a.notes()[0] == "The toy spread ratio was computed."  # note rank 5: first
    assert "spread ratio: at most" in a.summary()
    page = report(a, path=tmp_path / "r.html")
    assert page.figures[0] == "spread"  # figure rank 5: first
    html = (tmp_path / "r.html").read_text()
    assert "Toy spread ratios" in html and "largest spread ratio" in html
    # The registry is read when called: without the toy, nothing of it remains.
    monkeypatch.setattr(measures, "MEASURES", MEASURES)
    plain = assess(original, masked)
    assert plain.utility.measures.get("spread") is None
    with pytest.raises(AttributeError):
        plain.utility.spread  # noqa: B018
    assert "spread_ratio_max" not in plain.headline()


def test_every_measure_of_an_assessment_provides_the_protocol(numeric_pair):
    original, masked = numeric_pair
    a = assess(
        original,
        masked,
        response="a",
        keys=["group"],
        prediction=True,
        prediction_replications=1,
        random_state=1,
    )
    measures = a.measures()
    assert {name for name, _ in measures} >= {"correlation", "linkage", "keys", "prediction"}
    keys: list[str] = []
    for name, m in measures:
        assert isinstance(m, Measure), name
        head = m.headline()
        assert head and all(isinstance(v, float) for v in head.values()), name
        keys += list(head)
        note = m.note()
        assert note is None or (isinstance(note, str) and note.endswith(".")), name
    assert len(keys) == len(set(keys))  # headline names unique across measures
    assert list(a.headline()) == keys
