from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import Bounds, LinearConstraint, minimize

from sdckit.errors import DataError, InfeasibleError, ParameterError
from sdckit.tables import PTable, design_ptable


def _check_rows(P: PTable, V: float) -> None:
    m = P.matrix
    dev = np.arange(m.shape[1])[None, :] - np.arange(m.shape[0])[:, None]
    assert np.allclose(m.sum(axis=1), 1.0, atol=1e-9)
    assert (m >= 0).all()
    assert np.allclose((m * dev).sum(axis=1), 0.0, atol=1e-9)
    var = (m * dev**2).sum(axis=1)
    assert np.allclose(var, P.variances, atol=1e-9)
    for i in range(1, m.shape[0]):
        if i in P.adjusted_rows:
            low, high = P.adjusted_rows[i]
            assert var[i] == pytest.approx(low if V < low else high, abs=1e-8)
        else:
            assert var[i] == pytest.approx(V, abs=1e-8)
    assert np.all(m[:, 1 : P.js + 1] == 0)
    assert np.all(m[np.abs(dev) > P.D] == 0)
    assert m[0, 0] == 1.0


@pytest.mark.parametrize("D", [3, 4, 5])
@pytest.mark.parametrize("objective", ["maxent", "lp"])
def test_design_rows_hold_the_constraints(D, objective):
    P = design_ptable(D, 2.01, objective=objective)
    _check_rows(P, 2.01)
    assert not P.adjusted_rows
    last = P.matrix[-1]
    i = P.n_rows - 1
    for k in range(1, D + 1):
        assert last[i - k] == pytest.approx(last[i + k], abs=1e-9)


def test_unattainable_variance_is_reported_with_closest():
    P = design_ptable(3, 1.0)
    _check_rows(P, 1.0)
    assert set(P.adjusted_rows) == {1, 2}
    assert P.variances[1] == pytest.approx(2.0)
    assert "not attainable" in P.summary()


def test_pstay_and_monotone():
    P = design_ptable(5, 2.01, pstay=0.7, monotone=True)
    _check_rows(P, 2.01)
    for i in range(3, P.n_rows):
        assert P.matrix[i, i] == pytest.approx(0.7)
        right = P.matrix[i, i + 1 : i + P.D + 1]
        assert np.all(np.diff(right) <= 1e-9)


@pytest.mark.parametrize(("D", "V", "js"), [(2, 3.0, 1), (3, 3.0, 1), (3, 2.01, 2)])
def test_monotone_across_the_forbidden_counts(D, V, js):
    # i -> 0 jumps over the forbidden 1..js: it is the nearest move down and may
    # not be likelier than staying (count 2 with js=1 went to 0 w.p. 1/3 > p_22)
    P = design_ptable(D, V, js=js, monotone=True)
    for i in range(1, P.n_rows):
        j = np.arange(max(0, i - D), i + D + 1)
        j = j[(j == 0) | (j > js)]
        for side in (j[j >= i], j[j <= i][::-1]):
            probs = P.matrix[i, side]
            assert np.all(np.diff(probs) <= 1e-9), (i, side, probs)


def test_js_zero_allows_small_counts():
    P = design_ptable(2, 1.0, js=0)
    _check_rows(P, 1.0)
    assert P.matrix[1, 1] > 0


def test_frame_roundtrip():
    P = design_ptable(4, 2.01)
    frame = P.to_frame()
    assert set(frame.columns) >= {"i", "j", "p", "v", "p_int_lb", "p_int_ub"}
    assert np.allclose(frame.groupby("i")["p"].sum(), 1.0)
    back = PTable.from_frame(frame)
    assert back.D == 4 and back.js == 2
    assert np.allclose(back.matrix, P.matrix, atol=1e-12)


def test_frame_errors():
    with pytest.raises(Exception, match="sums to"):
        PTable.from_frame(pd.DataFrame({"i": [0, 1], "j": [0, 0], "p": [1.0, 0.5]}))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"D": 0, "V": 2},
        {"D": 2, "V": 2, "js": 2},
        {"D": 3, "V": -1},
        {"D": 3, "V": 2, "objective": "x"},
    ],
)
def test_parameter_errors(kwargs):
    with pytest.raises(ParameterError):
        design_ptable(**kwargs)


def test_from_frame_rejects_broken_tables():
    frame = design_ptable(3, 2.01).to_frame()
    text = frame.astype({"i": object})
    text.loc[4, "i"] = "x"
    with pytest.raises(DataError, match="'i'.*row 4"):
        PTable.from_frame(text)
    with pytest.raises(DataError, match="'j'"):
        PTable.from_frame(frame.assign(j=frame["j"] + 0.5))
    with pytest.raises(DataError, match="no rows"):
        PTable.from_frame(frame.iloc[0:0])
    moved_zero = pd.concat([frame, pd.DataFrame({"i": [0], "j": [3], "p": [1.0]})])
    moved_zero["p"] = moved_zero["p"].where(moved_zero["i"] != 0, 0.5)
    with pytest.raises(DataError, match="p_00"):
        PTable.from_frame(moved_zero)
    plain = design_ptable(3, 1.0, js=0).to_frame()  # moves counts to 1 and 2
    assert PTable.from_frame(plain).js == 0
    with pytest.raises(DataError, match="js=2"):
        PTable.from_frame(plain, js=2)
    assert PTable.from_frame(frame, js=2).js == 2


def _independent_maxent(D: int, V: float, js: int, i: int, last: bool) -> np.ndarray:
    """Maximum entropy of one row by a general constrained solver on the primal
    (trust-constr), with the symmetric last row parameterised by its half."""
    j = np.arange(max(0, i - D), i + D + 1)
    j = j[(j == 0) | (j > js)]
    v = (j - i).astype(float)
    if last:  # p_-k = p_k: variables p_0 .. p_D
        k = np.arange(D + 1)

        def full(y):
            return np.concatenate([y[:0:-1], y])

        cons = [
            LinearConstraint(np.r_[1.0, 2 * np.ones(D)][None, :], 1, 1),
            LinearConstraint((2.0 * k**2)[None, :], V, V),
        ]
        start = np.full(D + 1, 1.0 / (2 * D + 1))
    else:

        def full(y):
            return y

        cons = [LinearConstraint(np.vstack([np.ones(len(v)), v, v**2]), [1, 0, V], [1, 0, V])]
        start = np.full(len(v), 1.0 / len(v))

    def negentropy(y):
        p = np.clip(full(y), 1e-300, None)
        return float(np.sum(p * np.log(p)))

    res = minimize(
        negentropy,
        start,
        method="trust-constr",
        constraints=cons,
        bounds=Bounds(np.zeros(len(start)), np.ones(len(start))),
        options={"xtol": 1e-12, "gtol": 1e-12, "maxiter": 5000},
    )
    return full(res.x)


@pytest.mark.filterwarnings("ignore:delta_grad")
@pytest.mark.parametrize(("D", "V", "js"), [(3, 2.01, 2), (4, 2.5, 2), (5, 3.0, 2), (3, 1.0, 0)])
def test_maxent_rows_equal_an_independent_maximum_entropy_computation(D, V, js):
    """Issue 24: the 'maxent' design fell back to an average of LP solutions (last row of
    D=3, V=2.01 had p_stay 0.475; the maximum-entropy row has 0.268, entropy 1.753)."""
    P = design_ptable(D, V, js=js)
    dev = P.deviation_probabilities()
    for i in (js + 2, P.n_rows - 1):
        row = dev[i][dev[i] > 0] if i < P.n_rows - 1 else dev[i]
        expected = _independent_maxent(D, V, js, i, last=i == P.n_rows - 1)
        assert len(row) == len(expected)
        np.testing.assert_allclose(row, expected, atol=2e-4)


def test_maxent_last_row_d3_matches_r_ptable_figures():
    row = design_ptable(3, 2.01).deviation_probabilities()[-1]
    assert row[3] == pytest.approx(0.268, abs=5e-4)
    assert -(row * np.log(row)).sum() == pytest.approx(1.753, abs=5e-4)


def test_maxent_does_not_fall_back_silently(monkeypatch):
    from sdckit.tables import ptable as module

    monkeypatch.setattr(module, "_newton_dual", lambda dual, features: np.zeros(len(features)))
    with pytest.raises(InfeasibleError, match="did not converge"):
        design_ptable(3, 2.01)


# Giessing & Höhne (2011), appendix Table 1, "Random Noise, D = 3": rows 1-8 over the
# perturbed counts 0, 3, 4, ..., 11
PAPER_D3 = [
    [0.667, 0.332, 0.001, 0, 0, 0, 0, 0, 0, 0],
    [0.334, 0.666, 0, 0, 0, 0, 0, 0, 0, 0],
    [0.125, 0.687, 0.063, 0.063, 0.063, 0, 0, 0, 0, 0],
    [0, 0.601, 0.099, 0.100, 0.100, 0.100, 0, 0, 0, 0],
    [0, 0.167, 0.167, 0.416, 0.083, 0.083, 0.083, 0, 0, 0],
    [0, 0.072, 0.072, 0.072, 0.571, 0.072, 0.072, 0.072, 0, 0],
    [0, 0, 0.072, 0.072, 0.072, 0.571, 0.072, 0.072, 0.072, 0],
    [0, 0, 0, 0.072, 0.072, 0.072, 0.571, 0.072, 0.072, 0.072],
]


def test_paper_procedure_reproduces_appendix_table_1_for_d3():
    """The paper's own design (§3.1: centre fixed at 70% or the most (9) allows, normal
    tails, LP) gives their Table 1 rows; their V = 2 + epsilon reads as epsilon ~ 0.004."""
    P = design_ptable(3, 2.004, objective="paper")
    columns = [0, *range(3, 12)]
    ours = np.array([[P.transition(i).get(j, 0.0) for j in columns] for i in range(1, 9)])
    np.testing.assert_allclose(ours, np.array(PAPER_D3), atol=2.5e-3)
    # rows 6-8: 0.571 at the centre and 0.072 on each of the six neighbours
    assert P.transition(7)[7] == pytest.approx(0.571, abs=1e-3)
    assert P.transition(7)[4] == pytest.approx(0.072, abs=1e-3)


def test_paper_procedure_holds_the_constraints_and_the_centre():
    P = design_ptable(5, 2.01, objective="paper")
    dev = P.deviation_probabilities()
    v = np.arange(-5, 6)
    np.testing.assert_allclose(dev.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(dev[1:] @ v, 0.0, atol=1e-9)
    np.testing.assert_allclose(dev[1:] @ v**2, 2.01, atol=1e-9)
    assert dev[-1][5] == pytest.approx(0.7)  # the paper's 70% where (9) allows it
    right = dev[-1][6:]
    assert (np.diff(right) <= 1e-12).all()  # monotone tails


def test_pstay_one_is_refused():
    with pytest.raises(ParameterError, match="pstay"):
        design_ptable(3, 2.01, pstay=1.0)


def test_impossible_size_refused_with_memory_estimate():
    with pytest.raises(ParameterError, match="TiB"):
        design_ptable(1_000_000, 2.01)
