"""Predicting a record's sensitive value from its quasi-identifiers in a masked release.

The intruder knows the original quasi-identifiers (``keys``) of her targets
and holds the masked file whole: its keys and its sensitive variable. She
predicts each target's sensitive value from her knowledge of its keys, with
two predictors:

* *nearest record*: the sensitive value of the masked record nearest the
  target's keys (Euclidean distance on the standardised design of both files,
  categoricals as dummies; ties broken arbitrarily) — what the record-linkage
  intruder reads off the record she links to;
* *random forest*: a forest trained on the release (keys -> sensitive value),
  evaluated at the target's keys (Breiman 2001; scikit-learn).

A good prediction is not by itself a disclosure: a model of the population
predicts incomes from occupation and hours whether or not the target is in
the file (inferential disclosure, which no release of useful data prevents).
What the release gives away *about the target* is what the prediction gains
over the same predictor built without her record. The baseline is therefore
the same two predictors on the *original* file with the target left out —
the nearest *other* original record, and a forest cross-fitted so that the
target's fold is never in its training data: what a perfect release of
everyone else would let the intruder predict. The excess of the release over
that baseline is the attribute disclosure the masking failed to prevent
(the baseline plays the part of the intruder's prior in Duncan & Lambert
1986).

A numeric prediction counts as a disclosure when within ``tolerance`` of the
true value, relatively (1% by default, as the regression attacks count it);
records whose true value is 0 are left out of that share (the relative error
is undefined). A categorical one when it names the true category.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold

from sdckit._pairs import check_pair, joint_design, resolve_schema
from sdckit._results import FrozenResult
from sdckit._validation import RandomState, check_int, check_random_state
from sdckit.attacks.regression import RECOVERY_TOLERANCE, relative_errors
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.neighbors import nearest_records
from sdckit.neighbors.search import exclude_self
from sdckit.schema import Kind

__all__ = ["PredictionAttackResult", "prediction_attack"]

PREDICTORS = ("nearest record", "random forest")


@dataclass(frozen=True)
class PredictionAttackResult(FrozenResult):
    """How well the release lets an intruder predict the sensitive value, against a baseline.

    Attributes
    ----------
    sensitive : str
        The variable predicted.
    keys : list of str
        The quasi-identifiers the intruder knows.
    task : {"numeric", "categorical"}
    tolerance : float
        Relative tolerance of a numeric disclosure.
    table : DataFrame
        One row per predictor: ``release`` (share of records predicted within
        the tolerance, or correctly, from the release), ``baseline`` (the same
        predictor on the original file without the target's record),
        ``excess`` (release minus baseline: what the release gives away about
        the targets themselves), and for a numeric variable the median
        relative errors ``release_median_error`` and ``baseline_median_error``.
    records : int
        Records scored.
    """

    sensitive: str
    keys: list[str]
    task: str
    tolerance: float
    table: pd.DataFrame
    records: int

    @property
    def excess(self) -> float:
        """The largest gain of a predictor over its baseline (0 when none gains)."""
        return float(max(0.0, self.table["excess"].max()))

    def summary(self) -> str:
        """The verdict first, then the table.

        Returns
        -------
        str
        """
        hit = f"within {self.tolerance:.0%}" if self.task == "numeric" else "exactly"
        best = self.table.loc[self.table["excess"].idxmax()]
        if self.excess > 0:
            first = (
                f"The release lets an intruder who knows {', '.join(self.keys)} predict "
                f"{self.sensitive} {hit} for {best['release']:.1%} of {self.records} records "
                f"({best['predictor']}), {best['excess']:.1%} more than the same predictor "
                f"without the target's record ({best['baseline']:.1%})."
            )
        else:
            first = (
                f"The release gives an intruder who knows {', '.join(self.keys)} no prediction "
                f"of {self.sensitive} {hit} beyond what the other records give "
                f"(best: {best['release']:.1%} of {self.records} records, baseline "
                f"{best['baseline']:.1%})."
            )
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            return f"{first}\n\n{self.table.to_string(index=False)}"


def _hits(task: str, predicted: np.ndarray, truth: np.ndarray, tolerance: float) -> np.ndarray:
    """Per record: 1.0 for a disclosure, 0.0 for none, NaN when undefined (true value 0)."""
    if task == "categorical":
        return (predicted == truth).astype(float)
    errors = relative_errors(predicted.astype(float), truth.astype(float))
    return np.where(np.isfinite(errors), (errors <= tolerance).astype(float), np.nan)


def _forest(task: str, n_estimators: int, seed: int) -> Any:
    cls = RandomForestClassifier if task == "categorical" else RandomForestRegressor
    return cls(n_estimators=n_estimators, random_state=seed, n_jobs=1)


def prediction_attack(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    *,
    sensitive: str,
    keys: Iterable[str],
    tolerance: float = RECOVERY_TOLERANCE,
    n_estimators: int = 50,
    n_folds: int = 5,
    random_state: RandomState = None,
) -> PredictionAttackResult:
    """Predict each record's sensitive value from its keys, from the release and from a baseline.

    See the module docstring for the intruder, the two predictors and the
    baseline.

    Parameters
    ----------
    original : DataFrame
        The original file: the intruder's knowledge of the keys, and the truth.
    masked : DataFrame
        The release, the same records in the same order (the order is not
        used by the predictors, only to score them).
    sensitive : str
        The variable predicted: numeric (a value within ``tolerance``) or
        categorical (the category).
    keys : iterable of str
        The quasi-identifiers the intruder knows.
    tolerance : float, default 0.01
        Relative error under which a numeric prediction is a disclosure.
    n_estimators : int, default 50
        Trees per forest.
    n_folds : int, default 5
        Folds of the baseline forest's cross-fitting.
    random_state : None, int or numpy.random.Generator
        Seeds the forests and the folds.

    Returns
    -------
    PredictionAttackResult
    """
    original, masked = check_pair(original, masked)
    key_list = [keys] if isinstance(keys, str) else list(keys)
    if not key_list:
        raise ParameterError("keys: give at least one quasi-identifier")
    for c in [sensitive, *key_list]:
        option = "sensitive" if c == sensitive else "keys"
        for frame, name in ((original, "original"), (masked, "masked")):
            if c not in frame.columns:
                raise SchemaError(f"{option}: column {c!r} is not in the {name} file")
    if sensitive in key_list:
        raise ParameterError(f"keys: the sensitive variable {sensitive!r} is also a key")
    if not 0 < float(tolerance) < 1:
        raise ParameterError(f"tolerance must be in (0, 1), got {tolerance!r}")
    n_estimators = check_int(n_estimators, "n_estimators", minimum=1)
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    columns = [*key_list, sensitive]
    for frame, name in ((original, "original"), (masked, "masked")):
        missing = frame[columns].isna().any()
        if missing.any():
            raise DataError(
                f"{name} file: column {missing[missing].index[0]!r} has missing values; "
                "drop those records first"
            )
    schema = resolve_schema(original, None)
    task = "numeric" if schema[sensitive].kind is not Kind.CATEGORICAL else "categorical"
    rng = check_random_state(random_state)
    x0, x1 = joint_design(original, masked, key_list, schema, scale="standard")
    if task == "numeric":
        y0 = pd.to_numeric(original[sensitive]).to_numpy(dtype=float)
        y1 = pd.to_numeric(masked[sensitive]).to_numpy(dtype=float)
    else:
        y0 = original[sensitive].astype(str).to_numpy()
        y1 = masked[sensitive].astype(str).to_numpy()
    n = len(original)
    # Nearest record: in the release, and among the other original records.
    _, near = nearest_records(x1, x0, k=1)
    release_near = y1[near[:, 0]]
    dist, idx = nearest_records(x0, x0, k=2)
    other = exclude_self(np.arange(n), dist, idx)[1][:, 0]
    baseline_near = y0[other]
    # Random forest: trained on the release; the baseline cross-fitted on the original.
    seed = int(rng.integers(0, 2**31 - 1))
    release_forest = _forest(task, n_estimators, seed).fit(x1, y1).predict(x0)
    baseline_forest = np.empty_like(release_forest)
    folds = KFold(n_splits=min(n_folds, n), shuffle=True, random_state=seed)
    for train, test in folds.split(x0):
        model = _forest(task, n_estimators, seed).fit(x0[train], y0[train])
        baseline_forest[test] = model.predict(x0[test])
    rows = []
    for name, release, baseline in (
        ("nearest record", release_near, baseline_near),
        ("random forest", release_forest, baseline_forest),
    ):
        hit_release = _hits(task, release, y0, tolerance)
        hit_baseline = _hits(task, baseline, y0, tolerance)
        row: dict[str, Any] = {
            "predictor": name,
            "release": float(np.nanmean(hit_release)),
            "baseline": float(np.nanmean(hit_baseline)),
        }
        row["excess"] = row["release"] - row["baseline"]
        if task == "numeric":
            row["release_median_error"] = float(np.nanmedian(relative_errors(release, y0)))
            row["baseline_median_error"] = float(np.nanmedian(relative_errors(baseline, y0)))
        rows.append(row)
    return PredictionAttackResult(
        sensitive=sensitive,
        keys=key_list,
        task=task,
        tolerance=float(tolerance),
        table=pd.DataFrame(rows),
        records=n,
    )
