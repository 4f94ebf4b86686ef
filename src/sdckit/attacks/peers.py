"""The output checkers trusted research environments use today, as rules over exact outputs.

Two comparators for sdckit's analysis server, each **our emulation** of a
peer's published rule set, written from its documentation (no code of
either project is used or imported):

* :class:`ACRORules` — ACRO, the output checker of the SACRO project
  (Smith et al. 2023; the ``acro`` package's documented default
  configuration): a table cell must hold at least ``threshold`` = 10 units;
  a zero cell is disclosive (``zeros_are_disclosive``, class disclosure); a
  cell of a table of means must also pass the (n, k) dominance rule (its
  ``nk_n`` = 2 largest contributions below ``nk_k`` = 90% of its total) and
  the p-ratio rule (the rest of the cell, its total minus its two largest
  contributions, at least ``pratio_p`` = 10% of the largest); a regression
  needs ``dof_threshold`` = 10 residual degrees of freedom. ACRO marks an
  output that fails for a human checker's review; here a failure counts as
  a refusal (the most protective reading).
* :class:`DataSHIELDRules` — DataSHIELD's default disclosure filters
  (``ds.listDisclosureSettings``): ``nfilter.tab`` = 3, a table (of counts,
  or of a mean by a factor) is returned only when every non-empty cell
  holds 3 units or more; ``nfilter.subset`` = 3, a non-empty subset holds 3
  units or more; ``nfilter.glm`` = 0.33, a model has at most 0.33 N
  parameters; and the checks the DataSHIELD documentation describes for its
  glm: a binary response or a binary column of the design whose rarer
  value occurs in fewer than ``nfilter.tab`` units is refused.

Neither peer has sdckit's universe language, cutpoints or perturbation; the
analyst of a trusted research environment (ACRO) works on the data itself,
and DataSHIELD's server-side functions build subsets and new variables
(arithmetic on columns, indicator variables) that its glm then accepts. So a
:class:`PeerServer` answers every query *exactly* — the universe as a subset,
any regressor the intruder defines (an artificial outlier, a strategic
dummy) — and then applies the peer's rules to what it would release. What
the emulation cannot reproduce: ACRO's human review, DataSHIELD's
non-disclosive assign functions beyond subsets and arithmetic, and the
peers' exact treatment of missing values (complete cases here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit._validation import check_dataframe
from sdckit.attacks.targets import (
    Answer,
    ArtificialOutlier,
    Factor,
    NaiveServer,
    PublicMetadata,
    Refused,
    RegressionQuery,
    StrategicDummy,
    Variable,
)
from sdckit.errors import FormulaError, ParameterError, UniverseError

__all__ = ["ACRORules", "DataSHIELDRules", "PeerServer"]


def _refusal(reasons: Sequence[tuple[str, str]]) -> dict[str, Any]:
    return {"status": "refused", "refusals": [{"rule": r, "reason": t} for r, t in reasons]}


def _binary_counts(column: np.ndarray) -> tuple[int, int] | None:
    """(count of the rarer value, of the other) when the column takes exactly two values."""
    values, counts = np.unique(column[np.isfinite(column)], return_counts=True)
    if values.size != 2:
        return None
    return int(counts.min()), int(counts.max())


@dataclass(frozen=True)
class ACRORules:
    """ACRO's default output checks (our emulation; see the module docstring).

    Parameters
    ----------
    threshold : int, default 10
        Fewest units in a table cell (``safe_threshold``).
    dof_threshold : int, default 10
        Fewest residual degrees of freedom of a regression (``safe_dof_threshold``).
    nk_n : int, default 2
    nk_k : float, default 0.9
        (n, k) dominance of a cell of means (``safe_nk_n``, ``safe_nk_k``).
    pratio_p : float, default 0.1
        p-ratio of a cell of means (``safe_pratio_p``).
    zeros_are_disclosive : bool, default True
        A zero cell fails (``zeros_are_disclosive``).
    """

    threshold: int = 10
    dof_threshold: int = 10
    nk_n: int = 2
    nk_k: float = 0.9
    pratio_p: float = 0.1
    zeros_are_disclosive: bool = True

    name = "ACRO rules (our emulation)"

    def check_table(
        self, counts: np.ndarray, cells: Sequence[np.ndarray] | None, subset: int
    ) -> list[tuple[str, str]]:
        out = []
        flat = counts.ravel()
        if ((flat > 0) & (flat < self.threshold)).any():
            out.append(("threshold", f"a cell holds fewer than {self.threshold} units"))
        if self.zeros_are_disclosive and (flat == 0).any():
            out.append(("zeros", "a cell is zero (class disclosure)"))
        for values in cells or ():
            v = np.sort(np.abs(values[np.isfinite(values)]))[::-1]
            total = v.sum()
            if v.size == 0 or total == 0:
                continue
            if v[: self.nk_n].sum() > self.nk_k * total:
                out.append(("nk-rule", f"the {self.nk_n} largest contributions dominate a cell"))
                break
            if total - v[:2].sum() < self.pratio_p * v[0]:
                out.append(("p-ratio", "the rest of a cell is too small beside its largest unit"))
                break
        return out

    def check_regression(
        self, n: int, p: int, binary: Sequence[tuple[int, int]], subset: int
    ) -> list[tuple[str, str]]:
        if n - p < self.dof_threshold:
            return [("dof", f"fewer than {self.dof_threshold} residual degrees of freedom")]
        return []


@dataclass(frozen=True)
class DataSHIELDRules:
    """DataSHIELD's default disclosure filters (our emulation; see the module docstring).

    Parameters
    ----------
    tab : int, default 3
        ``nfilter.tab``: fewest units in a non-empty table cell or binary category.
    subset : int, default 3
        ``nfilter.subset``: fewest units in a non-empty subset.
    glm : float, default 0.33
        ``nfilter.glm``: most parameters of a model, as a share of its units.
    """

    tab: int = 3
    subset: int = 3
    glm: float = 0.33

    name = "DataSHIELD filters (our emulation)"

    def _subset(self, subset: int) -> list[tuple[str, str]]:
        if 0 < subset < self.subset:
            return [("nfilter.subset", f"a subset holds fewer than {self.subset} units")]
        return []

    def check_table(
        self, counts: np.ndarray, cells: Sequence[np.ndarray] | None, subset: int
    ) -> list[tuple[str, str]]:
        out = self._subset(subset)
        flat = counts.ravel()
        if ((flat > 0) & (flat < self.tab)).any():
            out.append(("nfilter.tab", f"a non-empty cell holds fewer than {self.tab} units"))
        return out

    def check_regression(
        self, n: int, p: int, binary: Sequence[tuple[int, int]], subset: int
    ) -> list[tuple[str, str]]:
        out = self._subset(subset)
        if p > self.glm * n:
            out.append(("nfilter.glm", f"more than {self.glm:g} parameters per unit"))
        if any(rare < self.tab for rare, _ in binary):
            out.append(
                ("nfilter.tab", f"a binary variable has a category of fewer than {self.tab} units")
            )
        return out


Rules = ACRORules | DataSHIELDRules

_TABLE_DOC = """Failures of a table (of counts, or of means by the row and column variables).

Parameters
----------
counts : ndarray
    Units per cell.
cells : sequence of ndarray, optional
    For a table of means, the contributions of each cell (flattened order).
subset : int
    Units in the universe (checked by DataSHIELD's ``nfilter.subset`` only).

Returns
-------
list of (rule, reason)
    Empty when the table passes.
"""

_REGRESSION_DOC = """Failures of a regression.

Parameters
----------
n : int
    Units used.
p : int
    Parameters, the intercept included.
binary : sequence of (int, int)
    Counts of the rarer and the other value of each binary column (the
    response and the design; checked by DataSHIELD only).
subset : int
    Units in the universe, 0 for everyone (checked by DataSHIELD only).

Returns
-------
list of (rule, reason)
    Empty when the regression passes.
"""

for _rules in (ACRORules, DataSHIELDRules):
    _rules.check_table.__doc__ = _TABLE_DOC
    _rules.check_regression.__doc__ = _REGRESSION_DOC


class PeerServer:
    """Exact answers to any query, released only when a peer's rules pass them.

    Answers the same requests as :class:`~sdckit.attacks.targets.LibraryServer`
    — ``ask(analysis, body)`` in sdckit's universe and formula languages, and
    ``fit(query)`` for the regression attacks — so the same batteries run
    against it. Universes are evaluated on the server's cutpoint bins, so a
    universe means the same units for sdckit's server and for the peer.

    Parameters
    ----------
    data : DataFrame
        The confidential file (not modified).
    metadata : sdckit.server.Metadata
        The variables, levels and cutpoints (those of the sdckit server compared).
    rules : ACRORules or DataSHIELDRules
    name : str, optional
        Default the rules' name.
    """

    def __init__(
        self, data: pd.DataFrame, metadata: Any, rules: Rules, *, name: str | None = None
    ) -> None:
        if not isinstance(rules, ACRORules | DataSHIELDRules):
            raise ParameterError(
                f"rules must be ACRORules or DataSHIELDRules, got {type(rules).__name__}"
            )
        self.data = check_dataframe(data, "data")
        self._metadata = metadata
        self.metadata = PublicMetadata(metadata.to_dict(public=True))
        self._codes = metadata.encode(data[list(metadata.names)])
        self._naive = NaiveServer(data)
        self.rules = rules
        self.name = name or rules.name

    # ------------------------------------------------------------------ helpers

    def _members(self, text: str | None) -> np.ndarray:
        from sdckit.server.universe import evaluate_universe, parse_universe

        if text is None or str(text).strip().upper() in ("", "ALL"):
            return np.ones(len(self.data), dtype=bool)
        universe = parse_universe(str(text), self._metadata)
        return evaluate_universe(universe, self._metadata, self._codes).members

    def _factor_columns(
        self, name: str, transform: str | None, rows: np.ndarray
    ) -> list[tuple[str, np.ndarray]]:
        var = self._metadata.variable(name)
        if var.is_categorical:
            codes = self._codes[name][rows]
            present = [c for c in np.unique(codes) if c >= 0]
            if not present:
                return []
            reference = max(present, key=lambda c: (int((codes == c).sum()), -c))
            return [
                (f"{name}[{var.levels[c]}]", (codes == c).astype(float))
                for c in present
                if c != reference
            ]
        x = pd.to_numeric(self.data[name]).to_numpy(dtype=float)[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            if transform == "log":
                x = np.log(x)
            elif transform == "sqrt":
                x = np.sqrt(x)
            elif transform == "square":
                x = x * x
        label = f"{transform}({name})" if transform else name
        return [(label, x)]

    # ------------------------------------------------------------------ analyses

    def _crosstab(self, body: Mapping[str, Any]) -> dict[str, Any]:
        members = self._members(body.get("universe"))
        axes = [body["rows"], *([body["cols"]] if body.get("cols") else [])]
        mean_of = body.get("mean_of")
        keep = members.copy()
        for a in axes:
            keep &= self._codes[a] >= 0
        values = None
        if mean_of:
            values = pd.to_numeric(self.data[mean_of]).to_numpy(dtype=float)
            keep &= np.isfinite(values)
        shape = [self._metadata.variable(a).n_codes for a in axes]
        if len(shape) == 1:
            shape.append(1)
        r = self._codes[axes[0]][keep]
        c = self._codes[axes[1]][keep] if len(axes) > 1 else np.zeros(r.size, dtype=np.int64)
        counts = np.zeros(shape, dtype=np.int64)
        np.add.at(counts, (r, c), 1)
        cells = None
        if values is not None:
            v = values[keep]
            cells = [v[(r == i) & (c == j)] for i in range(shape[0]) for j in range(shape[1])]
        reasons = self.rules.check_table(counts, cells, int(members.sum()))
        if reasons:
            return _refusal(reasons)
        labels = self._metadata.variable(axes[0]).code_labels()
        cols = self._metadata.variable(axes[1]).code_labels() if len(axes) > 1 else ("count",)
        out: dict[str, Any] = {
            "status": "ok",
            "analysis": "crosstab",
            "row_labels": list(labels),
            "col_labels": list(cols),
            "counts": counts.tolist(),
            "row_totals": counts.sum(axis=1).tolist(),
            "col_totals": counts.sum(axis=0).tolist(),
            "total": int(counts.sum()),
        }
        if values is not None:
            v = values[keep]

            def mean(mask: np.ndarray) -> float | None:
                return float(v[mask].mean()) if mask.any() else None

            out["means"] = [
                [mean((r == i) & (c == j)) for j in range(shape[1])] for i in range(shape[0])
            ]
            out["row_means"] = [mean(r == i) for i in range(shape[0])]
            out["col_means"] = [mean(c == j) for j in range(shape[1])]
            out["total_mean"] = mean(np.ones(r.size, dtype=bool))
        return out

    def _regression(self, body: Mapping[str, Any]) -> dict[str, Any]:
        from sdckit.server.formula import parse_formula

        formula = parse_formula(str(body["formula"]))
        members = self._members(body.get("universe"))
        rows = np.flatnonzero(members)
        y = self._factor_columns(formula.response.variable, formula.response.transform, rows)
        columns: list[tuple[str, np.ndarray]] = [("Intercept", np.ones(rows.size))]
        for term in formula.terms:
            parts: list[tuple[str, np.ndarray]] = [("", np.ones(rows.size))]
            for factor in term.factors:
                own = self._factor_columns(factor.variable, factor.transform, rows)
                parts = [(f"{a}:{b}" if a else b, x * z) for a, x in parts for b, z in own]
            columns += parts
        design = np.column_stack([x for _, x in columns])
        response = y[0][1] if y else np.full(rows.size, np.nan)
        complete = np.isfinite(design).all(axis=1) & np.isfinite(response)
        design, response = design[complete], response[complete]
        n, p = design.shape
        binary = [b for b in map(_binary_counts, [response, *design.T[1:]]) if b is not None]
        reasons = self.rules.check_regression(n, p, binary, int(members.sum()))
        if reasons or n == 0:
            return _refusal(reasons or [("empty", "no units")])
        beta = np.linalg.lstsq(design, response, rcond=None)[0]
        return {
            "status": "ok",
            "analysis": "regression",
            "coefficients": [
                {"term": t, "estimate": float(b)} for (t, _), b in zip(columns, beta, strict=True)
            ],
            "n_obs": int(n),
        }

    def ask(self, analysis: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a request as sdckit's service would be asked it, under the peer's rules.

        Parameters
        ----------
        analysis : {"crosstab", "regression"}
            The analysis, named as the service's route.
        body : mapping
            ``universe``, ``rows``, ``cols``, ``mean_of`` (crosstab) or ``formula`` (regression).

        Returns
        -------
        dict
            ``status`` "ok" with the exact numbers, or "refused" with ``refusals``.
        """
        try:
            if analysis == "crosstab":
                return self._crosstab(body)
            if analysis == "regression":
                return self._regression(body)
        except (UniverseError, FormulaError) as exc:
            return _refusal([("definition", str(exc))])
        raise ParameterError(f"analysis must be crosstab or regression, got {analysis!r}")

    def fit(self, query: RegressionQuery) -> Answer | Refused:
        """OLS of any regressors the intruder defines, released when the rules pass it.

        Parameters
        ----------
        query : RegressionQuery
            What the intruder asks (artificial outliers and strategic dummies included).

        Returns
        -------
        Answer or Refused
        """
        answer = self._naive.fit(query)
        if not isinstance(answer, Answer):
            return answer
        n = answer.n_obs
        binary = []
        for i, regressor in enumerate(query.regressors):
            if isinstance(regressor, StrategicDummy | Factor):
                names = (
                    [f"s{i}"]
                    if isinstance(regressor, StrategicDummy)
                    else [t for t in answer.terms if t.startswith(f"{regressor.name}[")]
                )
                for t in names:
                    ones = round(answer.means.get(t, 0.0) * n)
                    if 0 < ones < n:
                        binary.append((min(ones, n - ones), max(ones, n - ones)))
            elif isinstance(regressor, Variable):
                column = pd.to_numeric(self.data[regressor.name]).to_numpy(dtype=float)
                counts = _binary_counts(column[self._query_rows(query)])
                if counts is not None:
                    binary.append(counts)
            elif not isinstance(regressor, ArtificialOutlier):  # pragma: no cover - exhaustive
                raise ParameterError(f"unknown regressor {regressor!r}")
        subset = n if query.universe else 0
        reasons = self.rules.check_regression(n, len(answer.terms), binary, subset)
        if reasons:
            return Refused(tuple(f"{rule}: {text}" for rule, text in reasons))
        return answer

    def _query_rows(self, query: RegressionQuery) -> np.ndarray:
        from sdckit.attacks.targets import universe_mask

        return universe_mask(self.data, query.universe)
