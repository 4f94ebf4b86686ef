from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
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
