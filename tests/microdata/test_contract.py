"""The masker contract, checked for every registered masking method (issue 14, item 1).

In the spirit of scikit-learn's ``check_estimator``: one set of checks run on
every name :func:`available_maskers` lists, so a new method is held to the
same promises by registering it and giving it a small setting below:

* the calling convention ``method(data, *, columns=None, schema=None,
  random_state=None, progress=None, **method_specific)``;
* the input is never modified;
* index (a non-default string index), row order, column order and dtypes are
  kept, including category, Int64, bool, datetime and string columns that
  ride along unmasked;
* diagnostics are indexed like the data;
* same seed, same output; rerunning with ``result.params`` reproduces it;
* a bad value of the method's own parameter gives a ParameterError naming it;
* ``column_changes`` is filled in; the result pickles and stays frozen.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import ParameterError, SDCDeprecationWarning
from sdckit.microdata import MaskResult, available_maskers, get_masker, mask

#: For every registered method: a small setting that masks two numeric columns,
#: and one bad value of a method-specific parameter (name, value).
SETTINGS: dict[str, tuple[dict, tuple[str, object]]] = {
    "rwn": ({"columns": ["income", "age"], "k": 3, "eps": 0.2}, ("k", -1)),
    "swap": ({"columns": ["income", "age"], "rate": 0.2}, ("rate", 0.7)),
    "rank_swap": ({"columns": ["income", "age"], "window_percent": 10}, ("window_percent", 0)),
    "additive_noise": ({"columns": ["income", "age"]}, ("variance_factor", -0.5)),
    "multiplicative_noise": ({"columns": ["income", "age"]}, ("variance_factor", 0.0)),
    "microaggregation": ({"columns": ["income", "age"], "group_size": 3}, ("group_size", 1)),
    "recode": (
        {
            "columns": ["income", "age"],
            "top": {"income": 30000.0, "age": 80},
            "bottom": {"age": 20},
        },
        ("bottom", {"age": 20.5}),
    ),
    "kanon": (
        {"columns": ["region", "visits"], "k_anonymity": 4, "max_suppression": 0.5},
        ("max_suppression", 1.5),
    ),
    "pram": (
        {"columns": ["region", "visits"], "min_diagonal": 0.5, "strata": ["member"]},
        ("min_diagonal", 1.5),
    ),
    "record_swap": (
        {"columns": ["region", "visits"], "swap_rate": 0.1, "keys": ["member"]},
        ("swap_rate", 1.5),
    ),
    "local_suppression": (
        {"columns": ["region", "visits"], "k_anonymity": 5},
        ("k_anonymity", 0),
    ),
}

METHODS = sorted(available_maskers())


def _data(n: int = 60) -> pd.DataFrame:
    """Two masked columns (float, int) and five of other dtypes riding along, string index."""
    rng = np.random.default_rng(7)
    index = pd.Index([f"r{i:03d}" for i in range(n)][::-1], name="record")
    return pd.DataFrame(
        {
            "region": pd.Categorical(rng.choice(["north", "south", "east"], n)),
            "income": rng.lognormal(10, 0.5, n),
            "visits": pd.array(rng.integers(0, 5, n), dtype="Int64"),
            "age": rng.integers(18, 90, n).astype(np.int64),
            "member": rng.random(n) < 0.4,
            "since": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), "D"),
            "name": pd.array([f"person {i}" for i in range(n)], dtype="string"),
        },
        index=index,
    )


def _setting(method: str) -> dict:
    if method not in SETTINGS:
        pytest.fail(f"add a setting for the new masking method {method!r} to SETTINGS")
    return dict(SETTINGS[method][0])


@pytest.mark.parametrize("method", METHODS)
def test_calling_convention(method: str) -> None:
    sig = inspect.signature(get_masker(method))
    params = list(sig.parameters.values())
    assert params[0].name == "data"
    assert params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)
    positional = [p.name for p in params[1:] if p.kind is not p.KEYWORD_ONLY]
    assert positional == [], f"{method}: {positional} must be keyword-only"
    for name in ("columns", "schema", "random_state", "progress"):
        assert name in sig.parameters, f"{method} has no {name}="
        assert sig.parameters[name].default is None, f"{method}: {name} must default to None"


@pytest.mark.parametrize("method", METHODS)
def test_contract(method: str) -> None:
    data = _data()
    before = data.copy(deep=True)
    setting = _setting(method)
    func = get_masker(method)
    calls: list[tuple[int, int]] = []
    result = func(data, **setting, random_state=11, progress=lambda d, t: calls.append((d, t)))

    # The input is never modified.
    pd.testing.assert_frame_equal(data, before)
    assert isinstance(result, MaskResult)
    out = result.data
    # Index, row order, column order and dtypes kept; the other columns untouched.
    assert out.index.equals(data.index) and out.index.name == "record"
    assert list(out.columns) == list(data.columns)
    pd.testing.assert_series_equal(out.dtypes, data.dtypes)
    riding = [c for c in data.columns if c not in setting["columns"]]
    pd.testing.assert_frame_equal(out[riding], data[riding])
    # Something was masked (the check would pass vacuously otherwise).
    assert not out[setting["columns"]].equals(data[setting["columns"]])
    # Diagnostics indexed like the data; progress reported.
    assert result.diagnostics.index.equals(data.index)
    assert calls and calls[-1][0] == calls[-1][1]
    # Per-column changes for every masked column.
    assert result.column_changes is not None
    assert list(result.column_changes.index) == setting["columns"]

    # Same seed, same output.
    again = func(data, **setting, random_state=11)
    pd.testing.assert_frame_equal(again.data, out)
    pd.testing.assert_frame_equal(again.diagnostics, result.diagnostics)
    # The recorded parameters (new names) reproduce the result.
    params = dict(result.params)
    params.setdefault("random_state", 11)
    rerun = mask(method, data, **params)
    pd.testing.assert_frame_equal(rerun.data, out)
    assert dict(rerun.params) == dict(result.params)

    # Frozen, and picklable (results cross process boundaries).
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.method = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.params["columns"] = []  # type: ignore[index]
    restored = pickle.loads(pickle.dumps(result))
    pd.testing.assert_frame_equal(restored.data, out)
    assert dict(restored.params) == dict(result.params)
    pd.testing.assert_frame_equal(data, before)


@pytest.mark.parametrize("method", METHODS)
def test_bad_parameter_is_named(method: str) -> None:
    setting = _setting(method)
    name, value = SETTINGS[method][1]
    setting[name] = value
    with pytest.raises(ParameterError, match=name):
        get_masker(method)(_data(), **setting, random_state=1)


@pytest.mark.parametrize(
    ("method", "old", "new", "value"),
    [
        ("microaggregation", "k", "group_size", 3),
        ("additive_noise", "k", "variance_factor", 0.15),
        ("multiplicative_noise", "k", "variance_factor", 0.15),
        ("rank_swap", "p", "window_percent", 10),
        ("swap", "swap_attributes", "columns", ["income"]),
    ],
)
def test_old_keyword_still_works_and_warns(method: str, old: str, new: str, value: object) -> None:
    setting = {"columns": ["income", "age"], **({"rate": 0.2} if method == "swap" else {})}
    setting.pop(new, None)
    with pytest.warns(SDCDeprecationWarning, match=f"use {new}="):
        old_result = mask(method, _data(), **setting, **{old: value}, random_state=3)
    new_result = mask(method, _data(), **setting, **{new: value}, random_state=3)
    pd.testing.assert_frame_equal(old_result.data, new_result.data)
    assert old not in old_result.params and new in old_result.params
    with pytest.raises(ParameterError, match=f"{new}= or its deprecated spelling {old}="):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SDCDeprecationWarning)
            mask(method, _data(), **setting, **{old: value, new: value})


@pytest.mark.parametrize(
    ("method", "args", "kwargs"),
    [
        ("microaggregation", (["income", "age"], 3), {}),
        ("additive_noise", (["income", "age"], 0.15), {}),
        ("multiplicative_noise", (["income", "age"],), {"variance_factor": 0.15}),
        ("rank_swap", (["income", "age"], 10), {}),
        ("swap", ("income", 0.2), {}),
    ],
)
def test_old_positional_call_still_works_and_warns(method: str, args: tuple, kwargs: dict) -> None:
    func = get_masker(method)
    with pytest.warns(SDCDeprecationWarning, match="positionally is deprecated"):
        old = func(_data(), *args, **kwargs, random_state=5)
    spelled = dict(zip(_positional_names(method), args, strict=False))
    new = func(_data(), **spelled, **kwargs, random_state=5)
    pd.testing.assert_frame_equal(old.data, new.data)
    with pytest.raises(TypeError, match="positional"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SDCDeprecationWarning)
            func(_data(), *args, 1, 2, 3)


def _positional_names(method: str) -> list[str]:
    second = {
        "microaggregation": "group_size",
        "additive_noise": "variance_factor",
        "multiplicative_noise": "variance_factor",
        "rank_swap": "window_percent",
        "swap": "rate",
    }[method]
    return ["columns", second]


def test_safe_result_is_a_release_assess_takes() -> None:
    from sdckit._results import MicrodataResult
    from sdckit.assess import assess
    from sdckit.tables import safe_perturb

    rng = np.random.default_rng(2)
    n = 300
    data = pd.DataFrame(
        {
            "region": pd.Categorical(rng.choice(list("abcde"), n)),
            "age": pd.Categorical(rng.choice(["young", "middle", "old"], n)),
            "sex": pd.Categorical(rng.choice(["f", "m"], n)),
            "income": rng.lognormal(10, 0.5, n),
        }
    )
    result = safe_perturb(data, [["region", "age"], ["age", "sex"]], random_state=1)
    assert isinstance(result, MicrodataResult) and result.method == "safe_perturb"
    assessment = assess(data, result, columns=["region", "age", "sex"], random_state=1)
    assert assessment.method == "safe_perturb"
    assert assessment.diagnostics is not None
    assert assessment.diagnostics.index.equals(data.index)
