"""RWN at scale (issue 17): approximate and sampled neighbourhoods keep RWN's properties.

Perry, Matloff & Tendick (2022), Sections 10-11: faiss's HNSW and IVF
indexes, Method 1 (a random sample of m records, fixed or fresh per record)
and Method 2 (a random sample of n·m/2 pairs, numbered by a bijection the
paper prints garbled).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from sdckit import rwn
from sdckit.cli.main import main
from sdckit.errors import ParameterError
from sdckit.neighbors import (
    HNSWBackend,
    IVFBackend,
    PairSampleBackend,
    SampleBackend,
    estimate_recall,
    iter_neighborhoods,
    make_backend,
    make_strategy,
    nearest_other_record,
)
from sdckit.neighbors.backends import BACKEND_NAMES, resolve_backend
from sdckit.neighbors.pairs import MAX_RECORDS, n_pairs, pair_from_index, pair_index
from sdckit.neighbors.search import exclude_self


def _backends():
    return {
        "hnsw": lambda: HNSWBackend(),
        "ivf": lambda: IVFBackend(),
        "sample": lambda: SampleBackend(200, random_state=4),
        "sample-fresh": lambda: SampleBackend(60, fresh=True, random_state=4),
        "pairs": lambda: PairSampleBackend(40, random_state=4),
    }


STRATEGY_NAMES = list(_backends())


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    z = rng.standard_normal((1500, 2))
    return pd.DataFrame(
        {
            "x": z[:, 0],
            "y": 0.8 * z[:, 0] + 0.6 * z[:, 1],
            "count": rng.poisson(3, 1500),
            "group": pd.Categorical(rng.choice(["a", "b", "c"], 1500)),
        }
    )


# --- the pair bijection (Section 11.2, step 3 corrected) ------------------------


@pytest.mark.parametrize("n", [2, 3, 4, 5, 17, 64, 101])
def test_pair_numbers_are_a_bijection_onto_the_pairs_exhaustively(n):
    r = np.arange(n_pairs(n))
    i, j = pair_from_index(r)
    expected = [(a, b) for b in range(n) for a in range(b)]  # column by column
    assert list(zip(i.tolist(), j.tolist(), strict=True)) == expected
    assert (pair_index(i, j) == r).all()


def test_pair_numbers_round_trip_at_a_billion_records():
    n = 10**9
    total = n_pairs(n)
    rng = np.random.default_rng(0)
    j_edges = np.array([1, 2, 3, 10**6, n - 2, n - 1], dtype=np.int64)
    first = j_edges * (j_edges - 1) // 2  # the first pair number of each column
    r = np.concatenate(
        [rng.integers(0, total, 200_000), first, first - 1, first + j_edges - 1, [0, total - 1]]
    )
    r = r[(r >= 0) & (r < total)]
    i, j = pair_from_index(r)
    assert ((i >= 0) & (i < j) & (j < n)).all()
    assert (pair_index(i, j) == r).all()
    assert pair_from_index(np.array([total - 1]))[1][0] == n - 1


def test_pair_numbers_out_of_range_are_refused():
    with pytest.raises(ParameterError, match="pair numbers must lie in"):
        pair_from_index(np.array([-1]))
    with pytest.raises(ParameterError, match="n must be between"):
        n_pairs(MAX_RECORDS + 1)


# --- every strategy keeps RWN's properties -------------------------------------------


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_values_only_copied_q_respected_seed_reproducible(frame, name):
    result = rwn(frame, k=5, q=0.6, neighbors=_backends()[name](), random_state=11)
    for col in frame.columns:
        assert set(result.data[col].dropna()) <= set(frame[col])
    assert result.data.dtypes.equals(frame.dtypes)
    share = result.diagnostics["cells_modified"].sum() / frame.size
    assert 0.55 < share < 0.65  # q = 0.6 of the cells (a neighbour may hold the same value)
    again = rwn(frame, k=5, q=0.6, neighbors=_backends()[name](), random_state=11)
    pd.testing.assert_frame_equal(result.data, again.data)
    other = rwn(frame, k=5, q=0.6, neighbors=_backends()[name](), random_state=12)
    assert not result.data.equals(other.data)
    assert "recall_at_k" in result.stats and "neighborhood_truncated" in result.diagnostics


@pytest.mark.parametrize("name", STRATEGY_NAMES)
@pytest.mark.parametrize("eps", [None, 0.15])
def test_a_record_is_never_its_own_neighbour(frame, name, eps):
    matrix = frame[["x", "y"]].to_numpy()
    radius = None if eps is None else np.full(len(matrix), eps * 4)
    sizes = []
    for _, chunk in iter_neighborhoods(
        matrix, k=4, eps=radius, backend=_backends()[name](), chunk_size=256
    ):
        owner = np.repeat(chunk.rows, chunk.sizes)
        assert (chunk.indices != owner).all()
        sizes.append(chunk.sizes)
    assert np.concatenate(sizes).min() >= 4


def test_the_fixed_sample_gives_neighbours_from_the_sample_only(frame):
    matrix = frame[["x", "y"]].to_numpy()
    backend = SampleBackend(50, random_state=1)
    backend.fit(matrix)
    rows = np.arange(len(matrix))
    _, idx = exclude_self(rows, *backend.kneighbors(rows, 6))
    assert np.isin(idx, backend._sample).all()


def test_a_fresh_sample_is_a_function_of_the_record_not_of_the_block(frame):
    matrix = frame[["x", "y"]].to_numpy()
    backend = SampleBackend(80, fresh=True, random_state=3)
    backend.fit(matrix)
    whole = backend.kneighbors(np.arange(100), 6)
    alone = backend.kneighbors(np.array([57]), 6)
    assert (whole[1][57] == alone[1][0]).all()
    # different records draw different samples: their neighbours differ although close
    assert len({tuple(r) for r in whole[1][:, 1:]}) > 90


def test_sampled_pairs_serve_both_records_and_number_n_m_over_2(frame):
    matrix = frame[["x", "y"]].to_numpy()
    backend = PairSampleBackend(30, random_state=5)
    backend.fit(matrix)
    counts = backend.partner_counts()
    assert counts.sum() == 2 * round(len(matrix) * 30 / 2)
    indptr, partners, distances = backend._fitted()
    pairs = {(a, int(b)) for a in range(len(matrix)) for b in partners[indptr[a] : indptr[a + 1]]}
    assert all((b, a) in pairs for a, b in pairs)
    a = 17
    seg = slice(indptr[a], indptr[a + 1])
    true = np.linalg.norm(matrix[partners[seg]] - matrix[a], axis=1)
    assert np.allclose(distances[seg], true)


def test_sampled_neighbourhoods_are_farther_than_exact_ones(frame):
    matrix = frame[["x", "y"]].to_numpy()
    for backend in (SampleBackend(100, random_state=0), PairSampleBackend(20, random_state=0)):
        backend.fit(matrix)
        estimate = estimate_recall(backend, matrix, k=5, sample_size=500, random_state=0)
        assert estimate.recall < 0.5 and estimate.distance_ratio > 1.5


# --- approximate search: high effort is exact; recall is measured correctly ----------


@pytest.mark.parametrize(
    "backend",
    [
        HNSWBackend(ef_search=400),
        IVFBackend(nlist=8, nprobe=8),
        IVFBackend(nlist=8, nprobe=8, quantizer="hnsw"),
    ],
    ids=["hnsw", "ivf", "ivf-hnsw-quantizer"],
)
def test_high_effort_approximate_search_equals_exact_search(frame, backend):
    exact = rwn(frame, k=5, eps=0.05, random_state=3)
    approx = rwn(frame, k=5, eps=0.05, neighbors=backend, random_state=3)
    pd.testing.assert_frame_equal(exact.data, approx.data)
    assert approx.stats["recall_at_k"] == 1.0
    assert not approx.diagnostics["neighborhood_truncated"].any()


def test_the_recall_estimate_agrees_with_the_true_recall():
    rng = np.random.default_rng(2)
    matrix = rng.standard_normal((8_000, 6))
    backend = IVFBackend(nlist=100, nprobe=1)
    backend.fit(matrix)
    rows = np.arange(len(matrix))
    exact = make_backend("kd_tree")
    exact.fit(matrix)
    true_d = exclude_self(rows, *exact.kneighbors(rows, 11))[0]
    found_d = exclude_self(rows, *backend.kneighbors(rows, 11))[0]
    true_recall = np.mean((found_d <= true_d[:, -1:] + 1e-12).sum(axis=1) / 10)
    estimate = estimate_recall(backend, matrix, k=10, sample_size=2000, random_state=1)
    assert 0.2 < true_recall < 0.95  # a low-effort search: the check has something to find
    assert abs(estimate.recall - true_recall) < 0.03
    assert 0 < estimate.standard_error < 0.02
    assert abs(estimate.recall - true_recall) < 4 * estimate.standard_error
    everyone = estimate_recall(backend, matrix, k=10, sample_size=len(matrix))
    assert everyone.standard_error == 0.0 and abs(everyone.recall - true_recall) < 1e-12


def test_ivf_cells_keep_a_bounded_size_above_a_million_records():
    """nlist = 4·sqrt(n) up to 10^6 records, then n / 250 with an HNSW quantizer."""
    backend = IVFBackend()
    assert backend.cells(100_000) == (1_265, "flat")
    assert backend.cells(10_000) == (256, "flat")  # at least 39 training records per cell
    assert backend.cells(1_000_000) == (4_000, "flat")
    assert backend.cells(10_000_000) == (40_000, "hnsw")
    assert IVFBackend(quantizer="hnsw").cells(100_000) == (1_265, "hnsw")
    assert IVFBackend(nlist=5_000, quantizer="flat").cells(10_000_000) == (5_000, "flat")


def test_the_hnsw_quantizer_finds_the_cells_the_flat_one_finds():
    rng = np.random.default_rng(4)
    matrix = rng.standard_normal((20_000, 6))
    recalls = {}
    for kind in ("flat", "hnsw"):
        backend = IVFBackend(nlist=200, nprobe=8, quantizer=kind)
        backend.fit(matrix)
        recalls[kind] = estimate_recall(backend, matrix, k=10, sample_size=1000, random_state=0)
    assert recalls["flat"].recall > 0.9
    assert abs(recalls["hnsw"].recall - recalls["flat"].recall) < 0.02


def test_a_cut_eps_ball_is_reported_per_record(frame):
    matrix_frame = frame[["x", "y"]]
    exact = rwn(matrix_frame, k=3, eps=0.08, random_state=0)
    capped = rwn(
        matrix_frame,
        k=3,
        eps=0.08,
        neighbors=HNSWBackend(ef_search=400, max_neighbors=20),
        random_state=0,
    )
    should_cut = exact.diagnostics["neighborhood_size"] > 20
    assert should_cut.sum() > 50
    assert (capped.diagnostics["neighborhood_truncated"] == should_cut).all()
    assert capped.diagnostics["neighborhood_size"].max() == 20
    assert capped.stats["neighborhoods_truncated"] == int(should_cut.sum())
    assert "were cut to the nearest" in capped.summary()


def test_assessment_searches_run_on_the_new_backends(frame):
    matrix = frame[["x", "y"]].to_numpy()
    exact = nearest_other_record(matrix)
    assert np.allclose(nearest_other_record(matrix, backend=HNSWBackend(ef_search=200)), exact)
    sampled = nearest_other_record(matrix, backend=SampleBackend(300, random_state=0))
    assert (sampled >= exact - 1e-12).all()  # a sample can only be farther: an upper bound


# --- bad input: one clear line each --------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: HNSWBackend(M=1), "M must be an int >= 2"),
        (lambda: HNSWBackend(ef_search=0), "ef_search must be an int >= 1"),
        (lambda: IVFBackend(nprobe=0), "nprobe must be an int >= 1"),
        (lambda: IVFBackend(quantizer="pq"), "quantizer must be 'auto', 'flat' or 'hnsw'"),
        (lambda: SampleBackend(1), "sample_size must be an int >= 2"),
        (lambda: PairSampleBackend(True), "sample_size must be an int >= 2"),
        (
            lambda: IVFBackend(metric="manhattan"),
            "ivf neighbour search supports metric 'euclidean'",
        ),
        (lambda: PairSampleBackend(metric="cosine"), "pairs neighbour search supports metric"),
        (lambda: make_strategy("annoy"), "neighbors must be one of 'exact', 'hnsw'"),
        (lambda: make_strategy("hnsw", sample_size=10), "sample_size applies to"),
    ],
)
def test_bad_strategy_parameters_name_themselves(make, message):
    with pytest.raises(ParameterError, match=message):
        make()


def test_rwn_refuses_a_sample_no_larger_than_k(frame):
    with pytest.raises(ParameterError, match=r"sample_size must be larger than k \(5\), got 5"):
        rwn(frame, k=5, neighbors="sample", sample_size=5)
    with pytest.raises(ParameterError, match="give neighbors or backend, not both"):
        rwn(frame, neighbors="hnsw", backend=make_backend("brute"))


def test_pair_samples_answer_no_questions_about_other_records(frame):
    backend = PairSampleBackend(10, random_state=0)
    backend.fit(frame[["x", "y"]].to_numpy())
    with pytest.raises(ParameterError, match="file's own records only"):
        backend.query(np.zeros((1, 2)), 1)


def test_faiss_missing_is_one_line(monkeypatch, frame):
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss now raises ImportError
    with pytest.raises(ParameterError, match=r"need the faiss-cpu package.*pip install"):
        rwn(frame, neighbors="hnsw")


# --- the command line -------------------------------------------------------------------


def test_cli_prints_the_recall_and_writes_parquet(tmp_path, frame, capsys):
    src = tmp_path / "in.parquet"
    frame[["x", "y"]].to_parquet(src)
    out = tmp_path / "out.parquet"
    for strategy in ("hnsw", "pairs"):
        code = main(["rwn", str(src), "-o", str(out), "--neighbors", strategy, "--seed", "1"])
        assert code == 0
        assert f"neighbour search {strategy}: recall@5" in capsys.readouterr().err
        assert pd.read_parquet(out).shape == (len(frame), 2)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--neighbors", "kdtree"], "--neighbors must be one of 'auto', 'kd_tree'"),
        (["--neighbors", "hnsw", "--sample-size", "30"], "--sample-size applies to"),
        (["--neighbors", "pairs", "--sample-size", "3"], "sample_size must be larger than k"),
        (["--neighbors", "ivf", "--metric", "manhattan"], "supports metric 'euclidean' only"),
        (["--fresh-sample"], "--fresh-sample applies to --neighbors sample only"),
        (["--neighbors", "hnsw", "--recall-sample", "-1"], "recall_sample must be >= 0"),
    ],
)
def test_cli_bad_strategy_options_are_one_line(tmp_path, frame, capsys, extra, message):
    src = tmp_path / "in.parquet"
    frame[["x", "y"]].to_parquet(src)
    code = main(["rwn", str(src), "-o", str(tmp_path / "o.parquet"), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert message in err and len(err.splitlines()) == 1


# --- every place that takes a backend name takes the new ones ------------------------

_CLASSES = {
    "auto": "TreeBackend",
    "kd_tree": "TreeBackend",
    "ball_tree": "TreeBackend",
    "brute": "BruteBackend",
    "exact": "TreeBackend",
    "hnsw": "HNSWBackend",
    "ivf": "IVFBackend",
    "sample": "SampleBackend",
    "pairs": "PairSampleBackend",
}


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_make_backend_and_resolve_backend_know_every_name(name):
    assert type(make_backend(name)).__name__ == _CLASSES[name]
    assert type(resolve_backend(name)).__name__ == _CLASSES[name]


def test_an_unknown_backend_name_lists_the_known_ones():
    listed = "'auto', 'kd_tree', 'ball_tree', 'brute', 'exact', 'hnsw', 'ivf', 'sample', 'pairs'"
    with pytest.raises(ParameterError, match=f"algorithm must be one of {listed}, got 'annoy'"):
        make_backend("annoy")
    with pytest.raises(
        ParameterError, match=f"backend must be a neighbour-search backend or one of {listed}"
    ):
        resolve_backend("annoy")
    with pytest.raises(
        ParameterError, match="backend must be a neighbour-search backend or one of"
    ):
        rwn(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), k=1, backend="annoy")


def test_named_sampled_backends_are_seeded():
    matrix = np.random.default_rng(0).standard_normal((500, 3))
    first, again = (make_backend("sample", random_state=5) for _ in range(2))
    for backend in (first, again):
        backend.fit(matrix)
    assert (
        first.kneighbors(np.arange(20), 4)[1].tolist()
        == again.kneighbors(np.arange(20), 4)[1].tolist()
    )


@pytest.mark.parametrize("name", ["hnsw", "sample", "pairs", "brute"])
def test_rwn_takes_a_strategy_name_as_backend_or_algorithm(frame, name):
    wanted = rwn(frame, k=5, neighbors="exact" if name == "brute" else name, random_state=2)
    by_backend = rwn(frame, k=5, backend=name, random_state=2)
    by_algorithm = rwn(frame, k=5, algorithm=name, random_state=2)
    pd.testing.assert_frame_equal(by_backend.data, wanted.data)
    pd.testing.assert_frame_equal(by_algorithm.data, wanted.data)
    assert by_backend.params["neighbors"] == wanted.params["neighbors"]


def test_rwn_refuses_two_different_searches(frame):
    with pytest.raises(ParameterError, match="algorithm='hnsw' and neighbors='ivf' name two"):
        rwn(frame, algorithm="hnsw", neighbors="ivf")
    with pytest.raises(ParameterError, match="algorithm names the exact search"):
        make_strategy("exact", algorithm="hnsw")


def test_assess_takes_the_new_names(frame):
    from sdckit.assess import assess, distance_to_closest

    cols = ["x", "y", "count"]
    masked = rwn(frame[cols], k=5, random_state=0).data
    exact = distance_to_closest(frame[cols], masked)
    hnsw = distance_to_closest(frame[cols], masked, backend="hnsw")
    for measure in ("within_original", "within_masked", "original_to_masked"):
        # small data: HNSW finds every nearest record; a sample only farther ones (upper bounds)
        assert np.allclose(getattr(hnsw, measure), getattr(exact, measure))
    sampled = distance_to_closest(frame[cols], masked, backend=SampleBackend(300, random_state=0))
    assert (sampled.original_to_masked >= exact.original_to_masked - 1e-12).all()
    assert (sampled.original_to_masked > exact.original_to_masked + 1e-12).any()
    one = assess(frame[cols], masked, backend="sample", random_state=3)
    two = assess(frame[cols], masked, backend="sample", random_state=3)
    assert one.summary() == two.summary()
    with pytest.raises(ParameterError, match="file's own records only"):
        distance_to_closest(frame[cols], masked, backend="pairs")


def test_cli_assess_takes_neighbors(tmp_path, frame, capsys):
    cols = ["x", "y", "count"]
    src, rel = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame[cols].to_parquet(src)
    rwn(frame[cols], k=5, random_state=0).data.to_parquet(rel)
    report = tmp_path / "r.html"
    assert (
        main(["assess", str(src), str(rel), "-o", str(report), "--neighbors", "ivf", "--quiet"])
        == 0
    )
    assert report.exists()
    capsys.readouterr()
    code = main(["assess", str(src), str(rel), "-o", str(report), "--neighbors", "annoy"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--neighbors must be one of 'auto'" in err
