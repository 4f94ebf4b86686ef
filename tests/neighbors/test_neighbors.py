"""The neighbour-search layer: one n_jobs rule, one executor, one self-exclusion, backends that agree."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import sdckit.microdata as microdata
import sdckit.microdata.neighbors as old_home
from sdckit.errors import ParameterError
from sdckit.neighbors import (
    BruteBackend,
    TreeBackend,
    count_within,
    make_backend,
    nearest_other_record,
    nearest_records,
    resolve_n_jobs,
)
from sdckit.neighbors.backends import resolve_backend
from sdckit.neighbors.executor import map_chunks
from sdckit.neighbors.search import exclude_self


@pytest.mark.parametrize("value", [None, -1])
def test_none_and_minus_one_mean_one_thread_per_core(value):
    assert resolve_n_jobs(value) == (os.cpu_count() or 1)


@pytest.mark.parametrize("value, expected", [(1, 1), (3, 3), (np.int64(2), 2)])
def test_a_positive_int_is_the_number_of_threads(value, expected):
    assert resolve_n_jobs(value) == expected


@pytest.mark.parametrize("value", [True, False, 0, -2, 1.5, "2"])
def test_flags_and_other_values_are_refused_naming_n_jobs(value):
    with pytest.raises(ParameterError, match="n_jobs must be None, -1 or a positive int"):
        resolve_n_jobs(value)


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_map_chunks_yields_every_block_in_order(n_jobs):
    blocks = list(map_chunks(lambda a, b: (a, b), 10, chunk_size=3, n_jobs=n_jobs))
    assert blocks == [(0, 3), (3, 6), (6, 9), (9, 10)]
    assert list(map_chunks(lambda a, b: (a, b), 0, chunk_size=3, n_jobs=n_jobs)) == []


def test_map_chunks_refuses_a_bad_chunk_size():
    with pytest.raises(ParameterError, match="chunk_size"):
        map_chunks(lambda a, b: a, 10, chunk_size=0)


def test_rwn_refuses_n_jobs_true_like_assess():
    # Before the shared resolver RWN read True as 1 thread and assess refused it.
    data = pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20.0) ** 0.5})
    with pytest.raises(ParameterError, match="n_jobs"):
        microdata.rwn(data, k=3, random_state=1, n_jobs=True)
    with pytest.raises(ParameterError, match="n_jobs"):
        from sdckit.assess import distance_to_closest

        distance_to_closest(data, data, n_jobs=True)


def test_exclude_self_wherever_the_record_appears():
    rows = np.array([0, 1, 2])
    idx = np.array([[0, 5, 6], [4, 1, 6], [7, 8, 9]])  # first, second, absent (duplicates)
    dist = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    d, i = exclude_self(rows, dist, idx)
    assert i.tolist() == [[5, 6], [4, 6], [7, 8]]
    assert d.tolist() == [[1.0, 2.0], [0.0, 3.0], [0.0, 0.0]]


def test_duplicates_are_at_distance_zero_from_each_other():
    matrix = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [3.0, 4.0]])
    assert nearest_other_record(matrix, chunk_size=2, n_jobs=2).tolist() == [0.0, 0.0, 0.0, 5.0]


@pytest.mark.parametrize(
    "backend", [TreeBackend("kd_tree"), TreeBackend("ball_tree"), BruteBackend()]
)
def test_backends_agree_on_point_queries(backend):
    rng = np.random.default_rng(3)
    reference, queries = rng.normal(size=(200, 3)), rng.normal(size=(50, 3))
    exact_d = np.sqrt(((queries[:, None, :] - reference[None, :, :]) ** 2).sum(axis=2))
    dist, idx = nearest_records(reference, queries, k=2, backend=backend, chunk_size=16, n_jobs=2)
    assert np.allclose(dist, np.sort(exact_d, axis=1)[:, :2])
    assert (idx[:, 0] == exact_d.argmin(axis=1)).all()
    radius = np.full(len(queries), 0.8)
    counts = count_within(backend, queries, radius, chunk_size=7, n_jobs=2)
    assert counts.tolist() == (exact_d <= 0.8).sum(axis=1).tolist()


def test_resolve_backend_by_name_object_or_refusal():
    assert resolve_backend(None).name == "kd_tree"
    assert resolve_backend("brute").name == "brute"
    mine = BruteBackend()
    assert resolve_backend(mine) is mine
    with pytest.raises(ParameterError, match="backend must be a neighbour-search backend"):
        resolve_backend("faiss")
    with pytest.raises(ParameterError, match="lacks fit, query, count_within"):
        resolve_backend(object())


def test_the_old_import_paths_still_work():
    assert old_home.TreeBackend is TreeBackend
    # the backends left sdckit.microdata's namespace: still importable, with a warning
    with pytest.warns(DeprecationWarning, match="import it from sdckit.neighbors.backends"):
        assert microdata.BruteBackend is BruteBackend
    with pytest.warns(DeprecationWarning):
        assert type(microdata.make_backend("ball_tree")) is type(make_backend("ball_tree"))
    assert set(old_home.__all__) <= set(dir(old_home))


def test_the_layer_imports_nothing_of_sdckit_above_it():
    import ast
    from pathlib import Path

    import sdckit.neighbors

    allowed = {"sdckit.errors", "sdckit.neighbors", "sdckit._moved"}
    for path in Path(sdckit.neighbors.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("sdckit"):
                    assert any(name == a or name.startswith(a + ".") for a in allowed), (path, name)
