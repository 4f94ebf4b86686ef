"""The masking interface every microdata method follows, and the registry by name.

A masking method is a function ``method(data, **params) -> MaskResult``:

* ``data`` is a DataFrame and is never modified;
* ``result.data`` has the same index, row order, column order and dtypes;
* ``result.diagnostics`` is a DataFrame with one row per record (same index);
* ``result.params`` records every parameter actually used (defaults included),
  so a run can be repeated;
* ``result.column_changes`` is one row per masked column: the share of its
  cells that changed, the share a masking of that strength would be expected
  to change, and (numeric columns) the masked/original mean and variance
  ratios — computed here, once, for every registered method;
* ``result.summary()`` is text for a person, ending with that table and a
  warning line for every column masked much less than expected or whose mean
  or variance moved by more than 10%.

Registering a method (``@register_masker("name")``) lets the command line,
:func:`sdckit.assess.sweep` and anything else run it by name through
:func:`mask`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import pandas as pd

from sdckit._results import MicrodataResult, microdata_doc
from sdckit.errors import ParameterError, SDCDeprecationWarning
from sdckit.schema import Kind, Schema

__all__ = [
    "MaskResult",
    "Masker",
    "available_maskers",
    "changed_share",
    "column_changes",
    "deprecated_spellings",
    "get_masker",
    "mask",
    "masker_ranges",
    "register_masker",
]


@microdata_doc
@dataclass(frozen=True)
class MaskResult(MicrodataResult):
    """Output of a masking method.

    Attributes
    ----------
    {{microdata_attributes}}
    column_changes : DataFrame or None
        One row per masked column (see :func:`column_changes`); filled in for
        every method registered with :func:`register_masker`.
    """

    column_changes: pd.DataFrame | None = None

    def expected_selection_share(self) -> float | None:
        """Share of each masked column's cells the method replaces or perturbs.

        The expected changed share of a column is this times the chance that a
        replacement differs from the original value (see :func:`column_changes`).
        1 for methods that perturb every selected cell (noise,
        microaggregation, rank swapping); methods that select cells at random
        override it; None where no such figure exists (then no expected share
        is shown and no under-masking warning is given).
        """
        return 1.0

    @property
    def masked_columns(self) -> list[str]:
        """The columns the method was asked to mask (from its parameters)."""
        value = self.params.get("columns")
        if value:
            return list(value)
        return list(self.data.columns)

    @property
    def warnings(self) -> list[str]:
        """Warning lines about the masked columns (empty when all is as expected)."""
        if self.column_changes is None:
            return []
        return _column_warnings(self.column_changes)

    def summary(self) -> str:
        """A short report of the run for a person."""
        lines = [
            f"{self.method or 'masking'}: {len(self.data)} records x {self.data.shape[1]} columns"
        ]
        if self.params:
            shown = ", ".join(f"{k}={_short(v)}" for k, v in self.params.items() if k != "schema")
            lines.append(f"  parameters: {shown}")
        for key, value in self.stats.items():
            label = _STAT_LABELS.get(key, key.replace("_", " "))
            if isinstance(value, float):
                lines.append(f"  {label}: {value:.4g}")
            else:
                lines.append(f"  {label}: {value}")
        if self.column_changes is not None and len(self.column_changes):
            lines.append(_format_column_changes(self.column_changes))
            lines.extend(f"  WARNING: {w}" for w in self.warnings)
        return "\n".join(lines)


# Summary labels for stats keys whose name, with its underscores read as spaces, is not
# English ("cells masked columns: 57294" read as a count of masked cells; issue 29).
_STAT_LABELS = {"cells_masked_columns": "cells in the masked columns"}


def _short(value: Any, limit: int = 4) -> str:
    """A parameter value for a summary line: long lists and mappings abbreviated."""
    if isinstance(value, (list, tuple)) and len(value) > limit:
        head = ", ".join(repr(v) for v in value[:limit])
        return f"[{head}, ... ({len(value)} in all)]"
    if isinstance(value, Mapping) and len(value) > limit:
        distinct = set(value.values())
        if len(distinct) == 1:
            return f"{{all {len(value)}: {next(iter(distinct))!r}}}"
        return f"{{{len(value)} entries}}"
    return repr(value)


class Masker(Protocol):
    """The calling convention every masking method follows.

    ``method(data, *, columns=None, schema=None, random_state=None,
    progress=None, **method_specific) -> MaskResult``:

    * ``data`` (a DataFrame, never modified) is the only positional argument;
    * ``columns``: the columns to mask (default: the method's choice from the
      schema's roles and kinds);
    * ``schema``: a :class:`~sdckit.schema.Schema` (inferred when omitted);
    * ``random_state``: None, an int or a numpy Generator; the same seed
      gives the same output;
    * ``progress``: ``progress(done, total)``, called as the work advances;
    * every other parameter is keyword-only and named for what it is
      (``group_size``, ``variance_factor``, ``window_percent``; ``k`` only for
      a number of neighbours).

    The keyword-only shape is checked for every registered method by the
    contract test (``tests/microdata/test_contract.py``); the type below
    accepts any callable of ``data`` returning a :class:`MaskResult`.

    Parameters
    ----------
    *args, **kwargs
        None: a protocol is a type and is never instantiated; the call is
        described by ``__call__``.
    """

    def __call__(self, data: pd.DataFrame, /, *args: Any, **params: Any) -> MaskResult:
        """Mask ``data``.

        Parameters
        ----------
        data : DataFrame
            The microdata; never modified.
        *args, **params
            The method's parameters, keyword-only (see the class docstring).

        Returns
        -------
        MaskResult
            The masked data, diagnostics, parameters and figures.
        """
        ...


_F = TypeVar("_F", bound=Callable[..., Any])


def deprecated_spellings(*positional: str, **renamed: str) -> Callable[[_F], _F]:
    """Accept a masking method's old spellings for one release, with a DeprecationWarning.

    The one helper for every method whose parameters were renamed or made
    keyword-only (issue 14): an old call keeps working and warns with
    :class:`~sdckit.errors.SDCDeprecationWarning` (a ``DeprecationWarning``)
    naming the new spelling.

    Parameters
    ----------
    *positional : str
        New names of the parameters the old signature took positionally after
        ``data``, in order (``"columns", "group_size"`` for
        ``microaggregate(data, columns, k)``).
    **renamed : str
        ``old_name="new_name"`` for every renamed keyword.

    Returns
    -------
    callable
        A decorator; the decorated method keeps its own signature
        (``inspect.signature`` shows the new one) and gets an attribute
        ``renamed_parameters``, the ``{old: new}`` mapping.
    """

    def decorator(func: _F) -> _F:
        name = func.__name__

        @functools.wraps(func)
        def accepting_old_spellings(data: pd.DataFrame, *args: Any, **kwargs: Any) -> Any:
            for old, new in renamed.items():
                if old in kwargs:
                    if new in kwargs:
                        raise ParameterError(
                            f"{name}: give {new}= or its deprecated spelling {old}=, not both"
                        )
                    _warn_deprecated(
                        f"{name}(..., {old}=...) is deprecated and will be removed in the next "
                        f"release; use {new}=..."
                    )
                    kwargs[new] = kwargs.pop(old)
            if args:
                if len(args) > len(positional):
                    raise TypeError(
                        f"{name}() takes data positionally and every other parameter by "
                        f"keyword; got {len(args) + 1} positional arguments"
                    )
                names = positional[: len(args)]
                twice = [n for n in names if n in kwargs]
                if twice:
                    raise TypeError(f"{name}() got multiple values for argument {twice[0]!r}")
                _warn_deprecated(
                    f"passing {', '.join(names)} to {name}() positionally is deprecated and will "
                    "be removed in the next release; use " + ", ".join(f"{n}=..." for n in names)
                )
                kwargs.update(zip(names, args, strict=True))
            return func(data, **kwargs)

        # Read by callers that translate old spellings themselves (the command line's sweep).
        accepting_old_spellings.renamed_parameters = dict(renamed)  # type: ignore[attr-defined]  # a function attribute
        return cast(_F, accepting_old_spellings)

    return decorator


def _warn_deprecated(message: str) -> None:
    # stacklevel 4: this helper, the renaming wrapper, register_masker's wrapper, the caller.
    warnings.warn(message, SDCDeprecationWarning, stacklevel=4)


#: A masked column's mean or variance ratio outside this band gets a warning line.
RATIO_BAND = (0.9, 1.1)
#: A column changed in under this fraction of its expected share gets a warning line.
UNDER_MASKED_FRACTION = 0.1


def _mean_and_variance(x: np.ndarray) -> tuple[float, float]:
    """Mean and sample variance of the finite values of ``x`` (NaN when too few, no warning)."""
    finite = np.isfinite(x).sum()
    mean = float(np.nanmean(x)) if finite > 0 else np.nan
    variance = float(np.nanvar(x, ddof=1)) if finite > 1 else np.nan
    return mean, variance


def column_changes(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    columns: list,
    *,
    selection_share: float | None = 1.0,
    categorical: Iterable = (),
) -> pd.DataFrame:
    """What masking did to each column: changed share, expected share, mean and variance ratios.

    Parameters
    ----------
    original, masked : DataFrame
        The input and the masked output (same index and columns).
    columns : list
        The masked columns.
    selection_share : float or None
        Share of each column's cells the method replaces (e.g. RWN's q). The
        *expected* changed share is ``selection_share * (1 - sum_v p_v^2)``,
        with p_v the shares of the column's values in the original data: the
        chance that a replacement value drawn at random from the column differs
        from the value it replaces. It is the share a masking that ignored the
        column's relations would change; a method that keeps relations changes
        less, but a column changed in under a tenth of it is practically
        unmasked (e.g. a categorical column whose neighbours always share its
        value). None: no expected share.
    categorical : iterable, optional
        Columns to treat as categories whatever their dtype (codes stored as
        numbers, declared categorical or ordinal in a schema): no mean or
        variance ratio is computed for them.

    Returns
    -------
    DataFrame
        Indexed by column: ``kind`` (numeric or categorical), ``changed_share``,
        ``expected_share``, and for numeric columns ``mean_ratio`` and
        ``variance_ratio`` (masked / original, unweighted, missing values left
        out; NaN where the original is 0) and ``mean_shift_sd`` (the change of
        the mean in original standard deviations).
    """
    rows = []
    declared = set(categorical)
    for col in columns:
        before = original[col]
        after = masked[col]
        n = len(before)
        changed = changed_share(before, after) if n else 0.0
        if selection_share is None:
            expected = np.nan
        else:
            codes_before = pd.factorize(before, use_na_sentinel=True)[0]
            counts = np.bincount(codes_before + 1)  # missing values form one value of their own
            shares = counts / max(n, 1)
            expected = float(selection_share) * float(1.0 - np.sum(shares**2))
        numeric = (
            pd.api.types.is_numeric_dtype(before)
            and not pd.api.types.is_bool_dtype(before)
            and col not in declared
        )
        mean_ratio = variance_ratio = shift = np.nan
        if numeric:
            x = pd.to_numeric(before, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            with np.errstate(all="ignore"):
                mx, vx = _mean_and_variance(x)
                if masked is original:  # a file against itself: one pass, not two
                    my, vy = mx, vx
                else:
                    y = pd.to_numeric(after, errors="coerce").to_numpy(
                        dtype=np.float64, na_value=np.nan
                    )
                    my, vy = _mean_and_variance(y)
                mean_ratio = my / mx if mx != 0 else np.nan
                variance_ratio = vy / vx if vx and vx > 0 else np.nan
                shift = (my - mx) / np.sqrt(vx) if vx and vx > 0 else np.nan
        rows.append(
            {
                "column": col,
                "kind": "numeric" if numeric else "categorical",
                "changed_share": changed,
                "expected_share": expected,
                "mean_ratio": float(mean_ratio),
                "variance_ratio": float(variance_ratio),
                "mean_shift_sd": float(shift),
            }
        )
    table = pd.DataFrame(
        rows,
        columns=[
            "column",
            "kind",
            "changed_share",
            "expected_share",
            "mean_ratio",
            "variance_ratio",
            "mean_shift_sd",
        ],
    )
    return table.set_index("column")


def changed_share(before: pd.Series, after: pd.Series) -> float:
    """Share of cells whose value differs (two missing values are equal).

    Values are compared, not dtypes: 3 and 3.0 are the same value.

    Parameters
    ----------
    before, after : Series
        The same column before and after masking, of equal length.

    Returns
    -------
    float
        Share of rows whose value differs, from 0 to 1.
    """
    dtype = before.dtype
    if isinstance(dtype, np.dtype) and dtype == after.dtype and dtype.kind in "biuf":
        # One vectorised comparison, as the joint coding below decides it (NaN equals NaN).
        b, a = before.to_numpy(), after.to_numpy()
        same = b == a
        if dtype.kind == "f":
            same |= np.isnan(b) & np.isnan(a)
        return float(np.mean(~same))
    if isinstance(dtype, pd.CategoricalDtype) and dtype == after.dtype:
        # Same categories: the codes decide (-1, missing, equals -1).
        return float(np.mean(before.cat.codes.to_numpy() != after.cat.codes.to_numpy()))
    if isinstance(dtype, pd.StringDtype) and dtype == after.dtype:
        # Text of one dtype: compared in place (pyarrow's kernel for arrow strings), not
        # coded jointly; a missing value differs from a text and equals a missing value.
        compared = before.array != after.array  # NaN-backed text: NaN != anything is True
        differ = pd.array(compared).to_numpy(dtype=bool, na_value=True)
        both_missing = before.isna().to_numpy() & after.isna().to_numpy()
        return float(np.mean(differ & ~both_missing))
    joint = pd.concat([before, after], ignore_index=True)
    codes = pd.factorize(joint, use_na_sentinel=True)[0]
    return float(np.mean(codes[: len(before)] != codes[len(before) :]))


def _column_warnings(table: pd.DataFrame) -> list[str]:
    out = []
    low, high = RATIO_BAND
    for col, row in table.iterrows():
        expected = row["expected_share"]
        if np.isfinite(expected) and expected > 0:
            if row["changed_share"] < UNDER_MASKED_FRACTION * expected:
                out.append(
                    f"column {col!r} changed in {_pct(row['changed_share'])} of its cells, under a "
                    f"tenth of the {_pct(expected)} expected: it is practically unmasked"
                )
        ratio = row["mean_ratio"]
        # A ratio of a mean close to zero says nothing; the shift in standard deviations does.
        near_zero = np.isfinite(row["mean_shift_sd"]) and np.isnan(ratio)
        if np.isfinite(ratio) and not (low <= ratio <= high) and abs(row["mean_shift_sd"]) >= 0.01:
            out.append(f"column {col!r}: its mean is {ratio:.3g} times the original")
        elif near_zero and abs(row["mean_shift_sd"]) > 0.1:
            out.append(
                f"column {col!r}: its mean moved by {row['mean_shift_sd']:.2g} standard deviations"
            )
        vr = row["variance_ratio"]
        if np.isfinite(vr) and not (low <= vr <= high):
            out.append(f"column {col!r}: its variance is {vr:.3g} times the original")
    return out


def _pct(share: float) -> str:
    return f"{100 * share:.3g}%"


def _format_column_changes(table: pd.DataFrame) -> str:
    """The per-column table as aligned text."""
    width = max(6, *(len(str(c)) for c in table.index))
    lines = [
        "  per column: "
        + f"{'column':<{width}}  {'changed':>8}  {'expected':>8}  {'mean ratio':>10}  {'var ratio':>9}"
    ]
    pad = " " * len("  per column: ")

    def fmt(value: float, spec: str, blank: int) -> str:
        return format(value, spec) if np.isfinite(value) else " " * (blank - 1) + "-"

    for col, row in table.iterrows():
        lines.append(
            f"{pad}{col!s:<{width}}  {_pct(row['changed_share']):>8}  "
            f"{(_pct(row['expected_share']) if np.isfinite(row['expected_share']) else '-'):>8}  "
            f"{fmt(row['mean_ratio'], '>10.4g', 10)}  {fmt(row['variance_ratio'], '>9.4g', 9)}"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class _Entry:
    name: str
    func: Masker
    description: str
    ranges: Mapping[str, tuple[float | None, float | None]]


_REGISTRY: dict[str, _Entry] = {}


def register_masker(
    name: str,
    description: str = "",
    *,
    ranges: Mapping[str, tuple[float | None, float | None]] | None = None,
) -> Callable[[_F], _F]:
    """Decorator registering a masking method under ``name``.

    The registered function also gets its ``column_changes`` table filled in
    (see :func:`column_changes`).

    Parameters
    ----------
    name : str
        The name the command line, :func:`mask` and
        :func:`sdckit.assess.sweep` know the method by.
    description : str, optional
        One line for listings (default: the first line of the docstring).
    ranges : mapping, optional
        ``{parameter: (lowest, highest)}``, either end None for no bound: the
        values a numeric parameter may take, declared once for every front
        (the studio's generated forms read them through
        :func:`masker_ranges`). The method still checks its parameters itself.

    Returns
    -------
    callable
        The decorator; it returns the wrapped method.
    """

    def decorator(func: _F) -> _F:
        if name in _REGISTRY and getattr(_REGISTRY[name].func, "__wrapped__", None) is not func:
            raise ParameterError(f"a masking method named {name!r} is already registered")

        @functools.wraps(func)
        def with_column_changes(data: pd.DataFrame, *args: Any, **kwargs: Any) -> MaskResult:
            result = func(data, *args, **kwargs)
            if not isinstance(result, MaskResult) or result.column_changes is not None:
                return result
            schema = kwargs.get("schema")
            declared = []
            if isinstance(schema, Schema):
                declared = [c for c in schema.names if schema[c].kind is not Kind.NUMERIC]
            table = column_changes(
                data,
                result.data,
                [c for c in result.masked_columns if c in data.columns],
                selection_share=result.expected_selection_share(),
                categorical=declared,
            )
            return replace(result, column_changes=table)

        doc_lines = (func.__doc__ or "").strip().splitlines()
        _REGISTRY[name] = _Entry(
            name,
            with_column_changes,
            description or (doc_lines[0] if doc_lines else ""),
            dict(ranges or {}),
        )
        return cast(_F, with_column_changes)

    return decorator


def available_maskers() -> dict[str, str]:
    """``{name: one-line description}`` of every registered masking method.

    Returns
    -------
    dict
        Sorted by name; the built-in methods are always registered.
    """
    _load_builtin()
    return {name: entry.description for name, entry in sorted(_REGISTRY.items())}


def get_masker(name: str) -> Masker:
    """The masking function registered as ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`available_maskers`; an unknown one raises
        :class:`~sdckit.errors.ParameterError` listing them.

    Returns
    -------
    Masker
        The registered function (it fills in ``column_changes``).
    """
    _load_builtin()
    try:
        return _REGISTRY[name].func
    except KeyError:
        raise ParameterError(
            f"unknown masking method {name!r}; available: {sorted(_REGISTRY)}"
        ) from None


def masker_ranges(name: str) -> dict[str, tuple[float | None, float | None]]:
    """The parameter ranges declared when ``name`` was registered.

    Parameters
    ----------
    name : str
        A name from :func:`available_maskers`.

    Returns
    -------
    dict
        ``{parameter: (lowest, highest)}`` (None: unbounded); empty when none
        were declared.
    """
    get_masker(name)  # an unknown name raises, listing the known ones
    return dict(_REGISTRY[name].ranges)


def mask(method: str | Masker, data: pd.DataFrame, /, **params: Any) -> MaskResult:
    """Run a masking method, given by registered name or as a function.

    Parameters
    ----------
    method : str or callable
        A registered name (see :func:`available_maskers`) or a masking
        function. Positional-only, so a method's own ``method=`` parameter
        (microaggregation's) can be passed through ``params``.
    data : DataFrame
        The microdata; never modified.
    **params
        The method's parameters (``result.params`` of an earlier run
        reproduces it).

    Returns
    -------
    MaskResult
        What the method returned.
    """
    func = get_masker(method) if isinstance(method, str) else method
    result = func(data, **params)
    if not isinstance(result, MaskResult):
        raise ParameterError(
            f"masking method {method!r} returned {type(result).__name__}, not a MaskResult"
        )
    return result


def _load_builtin() -> None:
    # Importing the package registers the built-in methods.
    import sdckit.microdata  # noqa: F401
