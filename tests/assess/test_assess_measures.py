"""The measure protocol: every measure provides headline() and note(), the assessment walks one
registry, and a neighbour backend given to assess serves its distance-based measures."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sdckit.assess import Risk, Utility, assess, distance_to_closest, record_linkage
from sdckit.assess.measures import MEASURES, Measure
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


def test_the_registry_names_every_field_of_utility_and_risk():
    for side, holder in (("utility", Utility), ("risk", Risk)):
        registered = [spec.name for spec in MEASURES if spec.side == side]
        assert sorted(registered) == sorted(f.name for f in dataclasses.fields(holder))
    assert len({spec.note_rank for spec in MEASURES}) == len(MEASURES)
    assert len({spec.figure_rank for spec in MEASURES}) == len(MEASURES)


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
