"""``assess(original, masked)``: every utility and risk measure of a release, in one result.

Matloff & Tendick (2015), "Selection of Tuning Parameters": for a
given set of tuning parameters the data steward wishes to assess (a) whether
analyses of the released data are reasonably close to those of the original
and (b) whether records at risk in the original are masked well enough.
:class:`Assessment` holds both halves: :class:`Utility` and :class:`Risk`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from sdckit._docs import shared_doc
from sdckit._pairs import categorical_columns, check_pair_schema
from sdckit._results import FrozenResult, MicrodataResult
from sdckit._validation import RandomState, as_sequence, check_columns, check_int
from sdckit.assess._inputs import MeasureInputs
from sdckit.assess.measures import measures_of, registered
from sdckit.errors import ParameterError, SchemaError
from sdckit.neighbors import NeighborBackend
from sdckit.neighbors.backends import resolve_backend
from sdckit.schema import Kind, Schema

__all__ = ["Assessment", "Risk", "Utility", "assess"]


@dataclass(frozen=True)
class _Side(FrozenResult):
    """The measures of one side of an assessment, by name; reading one gives it, or None.

    A registered measure that does not apply to the data reads as None; a
    name no measure of the side is registered under is an AttributeError.
    """

    measures: Mapping[str, Any] = field(default_factory=dict)

    side: ClassVar[str] = ""

    def __getattr__(self, name: str) -> Any:
        # Called only when ordinary lookup fails: the measures' names.
        if name.startswith("__"):
            raise AttributeError(name)
        measures = self.__dict__.get("measures", {})
        if name in measures:
            return measures[name]
        if any(spec.name == name for spec in registered(self.side)):
            return None
        raise AttributeError(f"{type(self).__name__} has no measure named {name!r}")

    def summary(self) -> str:
        """The summary of every measure that applies.

        Returns
        -------
        str
        """
        parts = [m.summary() for _, m in measures_of(self, self.side)]
        return "\n".join(parts) if parts else f"no {self.side} measure applies to these columns"


_SIDE_DOC = shared_doc(
    {
        "measures": """
        Parameters
        ----------
        measures : mapping
            ``{name: result}`` of the registered measures that apply, in
            registration order; each is also an attribute, and a registered
            measure that does not apply reads as None.
        """
    }
)


@_SIDE_DOC
@dataclass(frozen=True)
class Utility(_Side):
    """What the release keeps: the utility measures (``utility.correlation``, ...).

    {{measures}}
    """

    side: ClassVar[str] = "utility"


@_SIDE_DOC
@dataclass(frozen=True)
class Risk(_Side):
    """What the release still gives away: the risk measures (``risk.linkage``, ...).

    {{measures}}
    """

    side: ClassVar[str] = "risk"


@dataclass(frozen=True)
class Assessment(FrozenResult):
    """Utility and risk of a masked release compared with its original.

    Attributes
    ----------
    utility : Utility
    risk : Risk
    n_records : int
    columns : list of str
        The variables assessed.
    method : str
        Masking method, when known (from a MaskResult).
    params : mapping
        Masking parameters, when known.
    diagnostics : DataFrame or None
        Per-record diagnostics of the masking (e.g. RWN neighbourhood sizes).
    """

    utility: Utility
    risk: Risk
    n_records: int
    columns: list[str]
    method: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    diagnostics: pd.DataFrame | None = None

    def measures(self) -> list[tuple[str, Any]]:
        """Every measure that applies, as ``(name, result)``: utility first, in registration order.

        Returns
        -------
        list of (str, Measure)
        """
        return [
            (spec.name, m)
            for side, holder in (("utility", self.utility), ("risk", self.risk))
            for spec, m in measures_of(holder, side)
        ]

    def headline(self) -> dict[str, float]:
        """The key figures as a flat ``{name: number}`` dict (one row of a sweep table).

        Returns
        -------
        dict
            Every applying measure's ``headline()``, utility first.
        """
        out: dict[str, float] = {}
        for _, m in self.measures():
            out.update(m.headline())
        return out

    def notes(self) -> list[str]:
        """Plain-language findings for a person, most important first.

        Returns
        -------
        list of str
            The applying measures' ``note()``, in the order of their note ranks.
        """
        rank = {spec.name: spec.note_rank for spec in registered()}
        ordered = sorted(self.measures(), key=lambda item: rank[item[0]])
        return [text for _, m in ordered if (text := m.note()) is not None]

    def summary(self) -> str:
        """Utility, risk and the notes, for a person.

        Returns
        -------
        str
        """
        head = f"assessment of {self.n_records} records, {len(self.columns)} variables"
        if self.method:
            shown = ", ".join(
                f"{k}={v!r}" for k, v in self.params.items() if k in ("k", "eps", "q", "modprop")
            )
            head += f" ({self.method}{': ' + shown if shown else ''})"
        return "\n".join(
            [head, "UTILITY", self.utility.summary(), "RISK", self.risk.summary(), "NOTES"]
            + [f"- {n}" for n in self.notes()]
        )


def assess(
    original: pd.DataFrame,
    masked: pd.DataFrame | MicrodataResult,
    *,
    columns: Iterable[str] | None = None,
    response: str | None = None,
    predictors: Iterable[str] | None = None,
    keys: Iterable[str] | None = None,
    sensitive: str | None = None,
    linkage_columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    scale: str | None = "minmax",
    weights: Mapping[str, float] | None = None,
    interval_k: float = 0.01,
    prediction: bool = False,
    prediction_replications: int = 5,
    holdout: int | float | None = None,
    top: int = 5,
    backend: NeighborBackend | str | None = None,
    chunk_size: int = 8192,
    n_jobs: int | None = None,
    random_state: RandomState = None,
    progress: Callable[[int, int], None] | None = None,
) -> Assessment:
    """Assess a masked release against its original: utility and risk.

    Parameters
    ----------
    original : DataFrame
    masked : DataFrame, MaskResult or SafeResult
        The release, with the same rows in the same order. A
        :class:`~sdckit.microdata.base.MaskResult` also brings the method,
        its parameters and per-record diagnostics into the assessment.
    columns : iterable of str, optional
        Variables to assess; default every column whose role is not id,
        weight or ignore.
    response, predictors : optional
        A linear regression to compare (coefficients, standard errors,
        confidence-interval overlap, R^2; Cook's distances on the risk
        side), and the response of the prediction check. Predictors default
        to every other assessed variable. A categorical response has no
        linear regression: it is used by the prediction check only
        (classification), which ``prediction=True`` must then ask for.
    keys : iterable of str, optional
        Categorical key variables (quasi-identifiers) for frequency counts,
        sample uniques and k-anonymity.
    sensitive : str, optional
        A sensitive variable whose l-diversity within the key combinations
        is measured (needs ``keys``).
    linkage_columns : iterable of str, optional
        The variables the record-linkage intruder knows (default: all
        assessed variables).
    schema : Schema, optional
        Column kinds and roles; inferred from ``original`` when omitted.
    scale, weights
        Distances for the distance-to-closest-record and linkage measures
        (see :func:`sdckit.schema.build_design`).
    interval_k : float, default 0.01
        Interval half-width in standard deviations for interval disclosure.
    prediction : bool, default False
        Also run the random-forest prediction check (needs ``response``).
    prediction_replications : int, default 5
    holdout : int or float, optional
        Holdout size for the prediction check.
    top : int, default 5
        How many extreme records to list per measure.
    backend : NeighborBackend or str, optional
        The neighbour search of the distance-to-closest-record and linkage
        measures: a :class:`~sdckit.neighbors.NeighborBackend` or a name for
        :func:`~sdckit.neighbors.make_backend` (default an exact KD-tree;
        ``"hnsw"``, ``"ivf"`` and ``"sample"`` search approximately, and
        their distances are upper bounds of the true ones; ``"pairs"``
        answers questions about one file only and is refused).
    chunk_size : int, default 8192
        Records per nearest-record search block.
    n_jobs : None, -1 or positive int
        Threads of the nearest-record searches
        (:func:`sdckit.neighbors.resolve_n_jobs`: None or -1 is one per
        core); also passed to the prediction check's random forests, where
        scikit-learn reads None as one job.
    random_state : None, int or Generator
        For the prediction check's splits and forests, and the sample of a
        ``"sample"`` backend.
    progress : callable, optional
        Called as ``progress(done, total)`` after each registered measure.

    Returns
    -------
    Assessment
    """
    method, params, diagnostics = "", {}, None
    if isinstance(masked, MicrodataResult):  # a masking result or SAFE's (tables.SafeResult)
        method, params, diagnostics = masked.method, dict(masked.params), masked.diagnostics
        masked = masked.data
    original, masked, schema = check_pair_schema(original, masked, schema)
    top = check_int(top, "top", minimum=1)
    chunk_size = check_int(chunk_size, "chunk_size", minimum=1)
    search = resolve_backend(backend, random_state=random_state)
    prediction_replications = check_int(
        prediction_replications, "prediction_replications", minimum=1
    )
    cols = check_columns(original, columns, "columns") if columns is not None else schema.maskable()
    if not cols:
        raise SchemaError("no columns to assess: every column is id, weight or ignore")
    numeric = [c for c in cols if schema[c].kind in (Kind.NUMERIC, Kind.ORDINAL)]
    keys = as_sequence(list(keys) if keys is not None and not isinstance(keys, str) else keys)
    check_columns(original, keys, "keys")
    categorical = [c for c in categorical_columns(schema, cols)]
    preds: list[str] = []
    if response is not None:
        check_columns(original, [response], "response")
        preds = (
            [c for c in cols if c != response and c not in keys]
            if predictors is None
            else check_columns(original, predictors, "predictors")
        )
    elif predictors is not None:
        raise ParameterError("predictors were given without a response")
    if prediction and response is None:
        raise ParameterError("prediction=True needs a response")
    # A categorical response has no linear regression; the prediction check classifies it.
    linear = response is not None and schema[response].kind is not Kind.CATEGORICAL
    if response is not None and not linear and not prediction:
        raise SchemaError(
            f"response {response!r} is categorical: the linear regression needs a numeric "
            "response, and a categorical one is used only by the prediction check "
            "(prediction=True, --prediction on the command line)"
        )
    if sensitive is not None and not keys:
        raise ParameterError("sensitive needs key variables (keys) to define the groups")
    inputs = MeasureInputs(
        original=original,
        masked=masked,
        schema=schema,
        columns=list(cols),
        numeric=numeric,
        categorical=categorical,
        response=response,
        predictors=list(preds),
        linear=linear,
        keys=list(keys),
        sensitive=sensitive,
        linkage_columns=(
            check_columns(original, linkage_columns, "linkage_columns")
            if linkage_columns is not None
            else list(cols)
        ),
        scale=scale,
        weights=weights,
        interval_k=interval_k,
        prediction=prediction,
        prediction_replications=prediction_replications,
        holdout=holdout,
        top=top,
        backend=search,
        chunk_size=chunk_size,
        n_jobs=n_jobs,
        random_state=random_state,
    )
    specs = registered()
    found: dict[str, dict[str, Any]] = {"utility": {}, "risk": {}}
    for done, spec in enumerate(specs, start=1):
        value = spec.compute(inputs)
        if value is not None:
            found[spec.side][spec.name] = value
        if progress is not None:
            progress(done, len(specs))
    return Assessment(
        utility=Utility(found["utility"]),
        risk=Risk(found["risk"]),
        n_records=len(original),
        columns=list(cols),
        method=method,
        params=params,
        diagnostics=diagnostics,
    )
