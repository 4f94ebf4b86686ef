"""PRAM: invariance, exact zeros, strata that hold, the diagonal honoured, unbiased estimates.

One test per fault reported against sdcMicro's ``pram`` (issues #358, #234:
values leaking across strata; #303: a transition of probability zero made;
#264: diagonal entries below the ``pd`` asked for), and hypothesis property
tests of the guarantees on random files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError, ParameterError
from sdckit.microdata import pram, pram_frequencies
from sdckit.microdata.pram import invariant_transition

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def _values_by_stratum(frame: pd.DataFrame, column: str, strata: list[str]) -> dict:
    return {
        key: set(group[column].dropna().astype(str))
        for key, group in frame.groupby(strata, dropna=False, observed=True)
    }


def _assert_within_strata(
    before: pd.DataFrame, after: pd.DataFrame, column: str, strata: list[str]
):
    original = _values_by_stratum(before, column, strata)
    for key, values in _values_by_stratum(after, column, strata).items():
        assert values <= original[key], (key, values - original[key])


def _assert_no_zero_transition(before: pd.Series, after: pd.Series, matrix: pd.DataFrame) -> None:
    pairs = pd.DataFrame({"a": before.astype(str), "b": after.astype(str)}).dropna()
    for a, b in pairs.drop_duplicates().itertuples(index=False):
        assert matrix.loc[a, b] > 0, f"{a} -> {b} has probability 0"


# --- sdcMicro #358: PRAM within age groups made students of the over-60s --------------------


def _students_and_retired(n: int = 600, seed: int = 123) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 71, n)
    group = pd.cut(age, [17, 24, 59, 70], labels=["18-24", "25-59", "60-70"])
    working = rng.choice(["employed", "unemployed", "self-employed"], n)
    occupation = np.where(age < 25, "student", np.where(age >= 60, "retired", working))
    return pd.DataFrame({"age_group": group, "occupation": occupation, "age": age})


@pytest.mark.parametrize("how", ["invariant", "given"])
def test_sdcmicro_358_no_student_leaves_the_young(how: str) -> None:
    data = _students_and_retired()
    values = ["employed", "unemployed", "self-employed", "student", "retired"]
    probabilities = np.full((5, 5), 0.05)
    np.fill_diagonal(probabilities, 0.8)
    matrix = pd.DataFrame(probabilities, index=values, columns=values)
    setting = {"transition": matrix} if how == "given" else {"min_diagonal": 0.3}
    result = pram(data, columns=["occupation"], strata="age_group", random_state=5, **setting)
    out = result.data
    assert set(out.loc[out.age_group == "18-24", "occupation"]) == {"student"}
    assert set(out.loc[out.age_group == "60-70", "occupation"]) == {"retired"}
    middle = out.loc[out.age_group == "25-59", "occupation"]
    assert not set(middle) & {"student", "retired"}
    # The middle group was randomised (the check would pass vacuously otherwise).
    assert (middle != data.loc[data.age_group == "25-59", "occupation"]).any()
    assert result.stats["records_in_unperturbable_strata"]["occupation"] == int(
        data.age_group.isin(["18-24", "60-70"]).sum()
    )


# --- sdcMicro #234: subcategories of A became subcategories of B ---------------------------


def test_sdcmicro_234_subcategories_stay_in_their_category() -> None:
    data = pd.DataFrame(
        {
            "category": pd.Categorical(["A"] * 90 + ["B"] * 90),
            "subcategory": pd.Categorical(list(range(1, 4)) * 30 + list(range(4, 7)) * 30),
        }
    )
    result = pram(data, columns=["subcategory"], strata=["category"], random_state=1)
    out = result.data
    assert set(out.loc[out.category == "A", "subcategory"]) <= {1, 2, 3}
    assert set(out.loc[out.category == "B", "subcategory"]) <= {4, 5, 6}
    assert (out.subcategory != data.subcategory).any()
    assert out.subcategory.dtype == data.subcategory.dtype


# --- sdcMicro #303: zero probabilities of a given matrix were violated ---------------------


def test_sdcmicro_303_zero_probabilities_are_never_used() -> None:
    base = pd.DataFrame({"var1": pd.Categorical(np.tile(np.arange(1, 6), 200))})
    labels = [1, 2, 3, 4, 5]
    matrix = pd.DataFrame(
        [
            [0.9, 0.1, 0, 0, 0],
            [0.1, 0.8, 0.1, 0, 0],
            [0, 0.1, 0.8, 0.1, 0],
            [0, 0, 0.1, 0.8, 0.1],
            [0, 0, 0, 0.1, 0.9],
        ],
        index=labels,
        columns=labels,
    )
    for seed in range(20):
        out = pram(base, columns=["var1"], transition=matrix, random_state=seed).data
        moves = pd.crosstab(base.var1, out.var1).reindex(index=labels, columns=labels, fill_value=0)
        assert (moves.to_numpy()[matrix.to_numpy() == 0] == 0).all(), seed
        assert (moves.to_numpy()[matrix.to_numpy() > 0.05] > 0).all()


# --- sdcMicro #264: diagonal entries below pd for rare levels ------------------------------


def _rare_levels(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    roof = rng.choice([2, 4, 5, 6, 9], n, p=[0.3, 0.66, 0.02, 0.01, 0.01])
    walls = rng.choice([2, 3, 9], n, p=[0.9, 0.095, 0.005])
    return pd.DataFrame({"roof": roof, "walls": walls})


@pytest.mark.parametrize("min_diagonal", [0.95, 0.8, 0.5])
def test_sdcmicro_264_diagonal_never_below_min_diagonal(min_diagonal: float) -> None:
    data = _rare_levels()
    result = pram(data, columns=["roof", "walls"], min_diagonal=min_diagonal, random_state=1)
    for column in ("roof", "walls"):
        matrix = result.transitions[column][None]
        diagonal = np.diag(matrix.to_numpy())
        assert diagonal.min() >= min_diagonal - 1e-12
        # Attained for the rarest value: the bound is tight, not merely respected.
        rarest = data[column].astype(str).value_counts().idxmin()
        assert matrix.loc[rarest, rarest] == pytest.approx(min_diagonal)


def test_sdcmicro_264_on_testdata() -> None:
    path = DATA / "testdata.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    data = pd.read_csv(path)
    result = pram(data, columns=["roof", "walls", "water"], min_diagonal=0.8, random_state=2)
    for column in ("roof", "walls", "water"):
        matrix = result.transitions[column][None].to_numpy()
        assert np.diag(matrix).min() >= 0.8 - 1e-12
        assert (matrix > 0).all()


# --- properties on random files ------------------------------------------------------------


@st.composite
def _files(draw):
    n = draw(st.integers(1, 40))
    value = st.one_of(st.none(), st.sampled_from(["a", "b", "c", "d", "e"]))
    frame = pd.DataFrame(
        {
            "x": draw(st.lists(value, min_size=n, max_size=n)),
            "s": draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n)),
            "t": draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n)),
        }
    )
    keep = draw(st.floats(0.01, 0.99))
    strata = draw(st.sampled_from([None, ["s"], ["s", "t"]]))
    return frame, keep, strata, draw(st.integers(0, 2**16))


@settings(max_examples=60, deadline=None)
@given(_files())
def test_invariant_pram_properties(case) -> None:
    frame, keep, strata, seed = case
    before = frame.copy()
    result = pram(frame, columns=["x"], min_diagonal=keep, strata=strata, random_state=seed)
    pd.testing.assert_frame_equal(frame, before)
    out = result.data
    # Missing values stay missing, and no value becomes missing.
    assert (out.x.isna() == frame.x.isna()).all()
    groups = strata or ["_all"]
    framed = frame.assign(_all=0)
    outed = out.assign(_all=0)
    _assert_within_strata(framed, outed, "x", groups)
    for key, group in framed.groupby(groups):
        label = None if strata is None else (key[0] if len(groups) == 1 else key)
        counts = group.x.dropna().value_counts()
        if counts.empty:
            continue
        matrix = result.transitions["x"][label]
        p = matrix.to_numpy()
        # Rows are distributions; every entry positive; the diagonal honoured.
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        assert (p > 0).all() and np.diag(p).min() >= keep - 1e-12
        # Invariance: the expected released frequencies equal the original ones.
        t = counts.reindex(matrix.index).to_numpy(dtype=float)
        np.testing.assert_allclose(t @ p, t, rtol=1e-10, atol=1e-10)
        _assert_no_zero_transition(group.x, out.loc[group.index, "x"], matrix)


@st.composite
def _matrices(draw):
    labels = ["a", "b", "c", "d"]
    rows = []
    for i in range(4):
        weights = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.0, 5.0]), min_size=4, max_size=4))
        weights[i] = max(weights[i], draw(st.sampled_from([0.0, 1.0])))
        if sum(weights) == 0:
            weights[i] = 1.0
        rows.append(np.array(weights) / sum(weights))
    n = draw(st.integers(1, 60))
    x = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["p", "q"]), min_size=n, max_size=n))
    return pd.DataFrame(rows, index=labels, columns=labels), pd.DataFrame({"x": x, "s": s})


@settings(max_examples=60, deadline=None)
@given(_matrices(), st.booleans(), st.integers(0, 2**16))
def test_given_matrix_zeros_and_strata_hold(case, stratified: bool, seed: int) -> None:
    matrix, frame = case
    strata = ["s"] if stratified else None
    try:
        result = pram(frame, columns=["x"], transition=matrix, strata=strata, random_state=seed)
    except DataError as error:
        # Only when a value can move only to values its stratum lacks.
        assert "does not take there" in str(error)
        return
    out = result.data
    _assert_no_zero_transition(frame.x, out.x, matrix)
    if stratified:
        _assert_within_strata(frame, out, "x", ["s"])
        for label, used in result.transitions["x"].items():
            zero = matrix.loc[used.index, used.columns].to_numpy() == 0
            assert (used.to_numpy()[zero] == 0).all(), label


def test_invariant_frequencies_are_kept_in_practice() -> None:
    rng = np.random.default_rng(8)
    n = 20000
    data = pd.DataFrame({"x": rng.choice(list("abcdef"), n, p=[0.5, 0.2, 0.15, 0.1, 0.04, 0.01])})
    result = pram(data, columns=["x"], min_diagonal=0.5, random_state=9)
    before = data.x.value_counts()
    after = result.data.x.value_counts().reindex(before.index)
    # T* - T is a sum of independent changes; its variance is sum_k T_k p_kl (1 - p_kl) at most
    # twice over (outflow and inflow); six standard deviations.
    matrix = result.transitions["x"][None].loc[before.index, before.index].to_numpy()
    var = 2 * (before.to_numpy()[:, None] * matrix * (1 - matrix)).sum(axis=0)
    assert (np.abs(after - before) <= 6 * np.sqrt(var) + 1).all()
    assert result.data.x.ne(data.x).mean() == pytest.approx(
        result.stats["expected_changed"]["x"], abs=0.01
    )


def test_estimates_invert_a_given_matrix() -> None:
    rng = np.random.default_rng(4)
    n = 5000
    data = pd.DataFrame({"x": rng.choice(["a", "b", "c"], n, p=[0.7, 0.2, 0.1])})
    matrix = pd.DataFrame(
        [[0.8, 0.2, 0.0], [0.1, 0.7, 0.2], [0.0, 0.3, 0.7]],
        index=["a", "b", "c"],
        columns=["a", "b", "c"],
    )
    truth = data.x.value_counts().reindex(["a", "b", "c"]).to_numpy(dtype=float)
    estimates = []
    for seed in range(100, 140):  # not 4: the seed that drew the data would redraw it
        result = pram(data, columns=["x"], transition=matrix, random_state=seed)
        table = result.frequency_estimates("x").set_index("value")
        estimates.append(table.loc[["a", "b", "c"], "estimated"].to_numpy())
        # The released frequencies are biased towards the matrix's stationary mix.
        assert table.loc["a", "released"] < truth[0], (seed, table)
    mean = np.mean(estimates, axis=0)
    sd = np.std(estimates, axis=0, ddof=1) / np.sqrt(len(estimates))
    assert (np.abs(mean - truth) <= 5 * sd).all()


def test_estimates_per_stratum_through_the_function() -> None:
    data = _students_and_retired(n=3000, seed=2)
    result = pram(data, columns=["occupation"], strata=["age_group"], random_state=3)
    table = pram_frequencies(
        result.data,
        column="occupation",
        transitions=result.transitions["occupation"],
        strata=["age_group"],
    )
    young = table[table.age_group == "18-24"]
    assert list(young.value) == ["student"] and young.estimated.iloc[0] == young.released.iloc[0]
    assert set(table.age_group) == {"18-24", "25-59", "60-70"}


def test_invariant_matrix_by_hand() -> None:
    # T = (6, 3, 1), theta = 0.5: flows 0.25 min(T_k, T_l) = 0.75 (6-3), 0.25 (6-1), 0.25 (3-1);
    # the rarest keeps 0.5, moving 0.25 to each other value.
    p = invariant_transition(np.array([6.0, 3.0, 1.0]), 0.5)
    np.testing.assert_allclose(
        p,
        [[1 - 0.125 - 1 / 24, 0.125, 1 / 24], [0.25, 1 - 0.25 - 1 / 12, 1 / 12], [0.25, 0.25, 0.5]],
    )
    np.testing.assert_allclose(np.array([6.0, 3.0, 1.0]) @ p, [6.0, 3.0, 1.0])


# --- bad input: one clear line each ---------------------------------------------------------


def _matrix(rows: list[list[float]], labels: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, index=labels, columns=labels)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"columns": ["nope"]}, Exception, "unknown column"),
        ({"columns": ["x"], "min_diagonal": 1.0}, ParameterError, "min_diagonal must be in"),
        ({"columns": ["x"], "min_diagonal": 0.0}, ParameterError, "min_diagonal must be in"),
        (
            {"columns": ["x"], "transition": _matrix([[0.9, 0.2], [0.5, 0.5]], ["a", "b"])},
            ParameterError,
            "the row of 'a' sums to 1.1, not 1",
        ),
        (
            {"columns": ["x"], "transition": _matrix([[1.2, -0.2], [0.5, 0.5]], ["a", "b"])},
            ParameterError,
            "from 'a' to 'a' is 1.2",
        ),
        (
            {"columns": ["x"], "transition": _matrix([[0.5, 0.5], [0.5, 0.5]], ["a", "z"])},
            DataError,
            r"the value 'b' \(row 2\) has no row",
        ),
        (
            {
                "columns": ["x"],
                "transition": _matrix([[1, 0], [0, 1]], ["a", "b"]),
                "min_diagonal": 0.5,
            },
            ParameterError,
            "not both",
        ),
        ({"columns": ["x"], "strata": ["x"]}, ParameterError, "strata and columns share"),
    ],
)
def test_bad_input_one_line(kwargs: dict, error: type, message: str) -> None:
    data = pd.DataFrame({"x": ["a", "b", "a", "b"]})
    before = data.copy()
    with pytest.raises(error, match=message) as info:
        pram(data, **kwargs)
    assert "\n" not in str(info.value)
    pd.testing.assert_frame_equal(data, before)


def test_singular_matrix_refused_when_estimates_are_asked() -> None:
    data = pd.DataFrame({"x": ["a", "b", "a", "b"]})
    singular = _matrix([[0.5, 0.5], [0.5, 0.5]], ["a", "b"])
    result = pram(data, columns=["x"], transition=singular, random_state=1)
    with pytest.raises(ParameterError, match="not invertible") as info:
        result.frequency_estimates("x")
    assert "\n" not in str(info.value)


def test_summary_shows_changes_per_column() -> None:
    data = _rare_levels()
    result = pram(data, columns=["roof", "walls"], min_diagonal=0.5, random_state=1)
    text = result.summary()
    assert "per column" in text and "roof" in text and "walls" in text
    changes = result.column_changes
    assert changes is not None
    for column in ("roof", "walls"):
        assert changes.loc[column, "changed_share"] == pytest.approx(
            result.data[column].ne(data[column]).mean()
        )


# --- the command line -------------------------------------------------------------------------


def test_cli_pram_within_strata_and_transitions(tmp_path, capsys) -> None:
    from cli_words import sdckit

    data = _students_and_retired()
    src, out, matrices = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "m.csv"
    data.to_csv(src, index=False)
    code = sdckit(
        "pram {} -o {} --columns occupation --strata age_group --min-diagonal 0.5 --seed 3 "
        "--transitions {}",
        src,
        out,
        matrices,
    )
    assert code == 0
    released = pd.read_csv(out)
    assert list(released.columns) == list(data.columns)
    assert set(released.loc[released.age_group == "60-70", "occupation"]) == {"retired"}
    assert (released.occupation != data.occupation).any()
    table = pd.read_csv(matrices)
    assert set(table.columns) == {"column", "age_group", "before", "after", "probability"}
    assert "per column" in capsys.readouterr().err


def test_cli_pram_given_matrix_refused_in_one_line(tmp_path, capsys) -> None:
    from cli_words import sdckit

    src, out, matrix = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "sex.csv"
    pd.DataFrame({"sex": [1, 2, 1, 2]}).to_csv(src, index=False)
    matrix.write_text(",1,2\n1,0.9,0.1\n2,0.2,0.7\n")
    given = f"sex={matrix}"
    assert sdckit("pram {} -o {} --columns sex --matrix {}", src, out, given) == 2
    err = capsys.readouterr().err.strip()
    assert "the row of '2' sums to 0.9, not 1" in err and len(err.splitlines()) == 1
    assert not out.exists()
    matrix.write_text(",1,2\n1,0.9,0.1\n2,0.2,0.8\n")
    assert sdckit("pram {} -o {} --columns sex --matrix {} --seed 1", src, out, given) == 0
