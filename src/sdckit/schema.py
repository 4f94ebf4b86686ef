"""Column kinds and roles, validation, and the numeric design used for distances.

Every neighbourhood-based method in sdckit measures distances on a numeric
"design" built from the data: numeric and ordinal columns scaled, categorical
columns expanded to one-hot dummies, each variable multiplied by its weight.
This follows Matloff & Tendick (2015, Section "Code and Tuning
Parameters": categoricals as dummies, scaled data, per-variable weights
``wts``) and Perry, Matloff & Tendick (2022, Section 8.3: data scaled
to [0, 1] for the RWN experiments).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from sdckit._validation import check_columns, check_dataframe, value_at
from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = [
    "ColumnSpec",
    "Design",
    "Kind",
    "Role",
    "Schema",
    "build_design",
]


class Kind(StrEnum):
    """What kind of values a column holds.

    Parameters
    ----------
    value : str
        The member's value: ``Kind("numeric")`` is ``Kind.NUMERIC``.
    names, module, qualname, type, start, boundary : optional
        The functional API of :class:`enum.Enum` (creating a new enum); not
        used with sdckit.
    """

    NUMERIC = "numeric"
    CATEGORICAL = "categorical"
    ORDINAL = "ordinal"


class Role(StrEnum):
    """What part a column plays in disclosure control.

    Parameters
    ----------
    value : str
        The member's value: ``Role("key")`` is ``Role.KEY``.
    names, module, qualname, type, start, boundary : optional
        The functional API of :class:`enum.Enum` (creating a new enum); not
        used with sdckit.
    """

    KEY = "key"  # quasi-identifier an intruder may know
    SENSITIVE = "sensitive"
    WEIGHT = "weight"  # survey weight, never masked, never used for distances
    ID = "id"  # direct identifier or record id: passes through
    IGNORE = "ignore"  # passes through untouched
    OTHER = "other"  # an ordinary analysis variable (the default)


#: Roles whose columns are neither masked nor used for distances by default.
PASSTHROUGH_ROLES = frozenset({Role.WEIGHT, Role.ID, Role.IGNORE})

_SCALES = ("minmax", "standard", None)


@dataclass(frozen=True)
class ColumnSpec:
    """Description of one column.

    Attributes
    ----------
    name : str
        Column label, as in the DataFrame. Typed ``str`` as every column
        argument of sdckit is; another hashable label works the same at run time.
    kind : Kind
        numeric, categorical or ordinal.
    role : Role
        key, sensitive, weight, id, ignore or other.
    categories : tuple or None
        For categorical and ordinal columns, the levels in order.
    """

    name: str
    kind: Kind
    role: Role = Role.OTHER
    categories: tuple | None = None


E = TypeVar("E", bound=StrEnum)


def _coerce_enum(enum: type[E], value: Any, what: str, column: str) -> E:
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(repr(v.value) for v in enum)
        raise SchemaError(
            f"column {column!r}: unknown {what} {value!r}; use one of {allowed}"
        ) from None


def _is_temporal(series: pd.Series) -> bool:
    return pd.api.types.is_datetime64_any_dtype(series.dtype) or pd.api.types.is_timedelta64_dtype(
        series.dtype
    )


def _infer_kind(series: pd.Series) -> Kind:
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return Kind.ORDINAL if dtype.ordered else Kind.CATEGORICAL
    if pd.api.types.is_bool_dtype(dtype):
        return Kind.CATEGORICAL
    if pd.api.types.is_numeric_dtype(dtype):
        return Kind.NUMERIC
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        raise SchemaError(
            f"column {series.name!r} holds dates/times ({dtype}); convert it to a number "
            "(e.g. days since an origin) or give it the role 'ignore'"
        )
    return Kind.CATEGORICAL


def _levels(series: pd.Series) -> tuple:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return tuple(series.cat.categories)
    values = series.dropna().unique()
    try:
        return tuple(sorted(values))
    except TypeError:  # mixed types: keep first-seen order
        return tuple(values)


@dataclass(frozen=True)
class Schema:
    """Kinds and roles of a DataFrame's columns.

    Build one with :meth:`Schema.infer`, which reads kinds from dtypes
    (numbers -> numeric; ordered categoricals -> ordinal; strings, booleans and
    unordered categoricals -> categorical) and lets the caller override any
    kind or role.
    """

    columns: tuple[ColumnSpec, ...]
    _by_name: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {c.name: c for c in self.columns})

    @classmethod
    def infer(
        cls,
        data: pd.DataFrame,
        *,
        kinds: Mapping[str, str | Kind] | None = None,
        roles: Mapping[str, str | Role] | None = None,
    ) -> Schema:
        """Infer a schema from ``data``'s dtypes, with optional overrides.

        Parameters
        ----------
        data : DataFrame
        kinds : mapping, optional
            ``{column: "numeric" | "categorical" | "ordinal"}`` overrides.
        roles : mapping, optional
            ``{column: "key" | "sensitive" | "weight" | "id" | "ignore" | "other"}``.

        Raises
        ------
        SchemaError
            An override names an unknown column or kind, or a column declared
            numeric holds values that are not numbers (the message names the
            column, the first offending value and its row).
        """
        check_dataframe(data)
        kinds = dict(kinds or {})
        roles = dict(roles or {})
        for what, mapping in (("kinds", kinds), ("roles", roles)):
            check_columns(data, list(mapping), what)
        specs = []
        for name in data.columns:
            series = data[name]
            role = _coerce_enum(Role, roles.get(name, Role.OTHER), "role", name)
            if name not in roles and name not in kinds and _is_temporal(series):
                # Dates and durations pass through untouched unless the user
                # says otherwise; build_design refuses them if asked to use one.
                role = Role.IGNORE
            if name in kinds:
                kind = _coerce_enum(Kind, kinds[name], "kind", name)
            elif role in PASSTHROUGH_ROLES and not (
                pd.api.types.is_numeric_dtype(series.dtype)
                or isinstance(series.dtype, pd.CategoricalDtype)
            ):
                kind = Kind.CATEGORICAL  # ids may be anything; never used numerically
            else:
                kind = _infer_kind(series)
            if kind is Kind.NUMERIC:
                _check_numeric(series)
                categories = None
            else:
                categories = _levels(series)
            # The label itself, not str(label): a frame with integer column names
            # must find its columns again (data[spec.name]).
            specs.append(ColumnSpec(name, kind, role, categories))
        return cls(tuple(specs))

    def __getitem__(self, name: str) -> ColumnSpec:
        try:
            return self._by_name[name]
        except KeyError:
            raise SchemaError(
                f"column {name!r} is not in the schema; it has {list(self._by_name)}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [c.name for c in self.columns]

    def with_roles(self, roles: Mapping[str, str | Role]) -> Schema:
        """Return a copy with some roles changed."""
        for name in roles:
            self[name]  # raises for unknown columns
        return Schema(
            tuple(
                replace(c, role=_coerce_enum(Role, roles[c.name], "role", c.name))
                if c.name in roles
                else c
                for c in self.columns
            )
        )

    def by_role(self, *roles: str | Role) -> list[str]:
        """Names of the columns having any of ``roles``."""
        wanted = {Role(r) for r in roles}
        return [c.name for c in self.columns if c.role in wanted]

    def maskable(self) -> list[str]:
        """Columns a masking method changes by default (all but weight, id, ignore)."""
        return [c.name for c in self.columns if c.role not in PASSTHROUGH_ROLES]

    def check_matches(self, data: pd.DataFrame) -> None:
        """Raise :class:`SchemaError` if ``data`` lacks a column the schema describes."""
        missing = [n for n in self.names if n not in data.columns]
        if missing:
            raise SchemaError(f"the data lack column(s) {missing} described by the schema")

    def summary(self) -> str:
        """A table of the columns for a person."""
        lines = [f"{'column':<24} {'kind':<12} {'role':<10} levels"]
        for c in self.columns:
            levels = "" if c.categories is None else str(len(c.categories))
            lines.append(f"{c.name!s:<24} {c.kind.value:<12} {c.role.value:<10} {levels}")
        return "\n".join(lines)


def _check_numeric(series: pd.Series) -> None:
    if pd.api.types.is_bool_dtype(series.dtype):
        raise SchemaError(f"column {series.name!r} is boolean; declare it categorical, not numeric")
    if pd.api.types.is_numeric_dtype(series.dtype):
        return
    converted = pd.to_numeric(series, errors="coerce")
    bad = converted.isna() & series.notna()
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise SchemaError(
            f"column {series.name!r} is declared numeric but holds non-numeric values, "
            f"e.g. {value_at(series, pos)} ({int(bad.sum())} such value(s))"
        )


@dataclass(frozen=True)
class Design:
    """The numeric matrix used for distances, and how it was built.

    Attributes
    ----------
    matrix : ndarray of shape (n, m)
        Scaled, weighted design (float64). Missing inputs stay NaN.
    feature_names : list of str
        One name per design column (``col`` or ``col=level`` for dummies).
    feature_sources : list of str
        The data column each design column came from.
    variables : list of str
        The data columns used, in order.
    scale : str or None
        ``"minmax"``, ``"standard"`` or ``None``.
    weights : dict
        Weight applied to each variable (1.0 unless given).
    constant_columns : list of str
        Variables with a single value; kept (scaled to 0), never divided by zero.
    """

    matrix: np.ndarray
    feature_names: list[str]
    feature_sources: list[str]
    variables: list[str]
    scale: str | None
    weights: dict[str, float]
    constant_columns: list[str]

    @property
    def missing_rows(self) -> np.ndarray:
        """Boolean mask of rows with at least one missing design value."""
        return np.isnan(self.matrix).any(axis=1)


def category_codes(series: pd.Series, levels: list) -> tuple[np.ndarray, np.ndarray]:
    """Codes of ``series`` in ``levels`` (-1 for missing) and a mask of values not among them.

    Values outside ``levels`` get code -1 too; the mask tells them from missing
    values, so callers can name the offending row instead of dropping it.
    """
    present = series.notna().to_numpy()
    known = series.isin(levels).to_numpy()
    unknown = present & ~known
    codes = pd.Categorical(series.where(known), categories=levels).codes.astype(np.int64)
    return codes, unknown


def _level_codes(name: str, series: pd.Series, levels: list) -> np.ndarray:
    """The codes of :func:`category_codes`, refusing a value not among ``levels`` by its row."""
    codes, unknown = category_codes(series, levels)
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        raise SchemaError(
            f"column {name!r}: value {value_at(series, pos)} is not one of its levels"
        )
    return codes


def check_distance_weights(
    weights: Mapping[str, float] | None, variables: list[str]
) -> dict[str, float]:
    """Per-variable distance weights: 1 for every variable, overridden by ``weights``.

    Parameters
    ----------
    weights : mapping of str to float, optional
        ``{column: weight}``; each weight finite and >= 0, not all 0.
    variables : list of str
        The distance variables the weights may name.

    Returns
    -------
    dict of str to float
        A weight for every variable, in the order of ``variables``.
    """
    out = dict.fromkeys(variables, 1.0)
    if weights is None:
        return out
    if not isinstance(weights, Mapping):
        raise ParameterError(
            f"weights must be a mapping {{column: weight}}, got {type(weights).__name__}"
        )
    for name, w in weights.items():
        if name not in out:
            raise SchemaError(
                f"weights: column {name!r} is not among the distance variables {variables}"
            )
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not np.isfinite(w):
            raise ParameterError(
                f"weights: weight of column {name!r} must be a finite number, got {w!r}"
            )
        if w < 0:
            raise ParameterError(
                f"weights: weight of column {name!r} is negative ({w}); weights must be >= 0"
            )
        out[name] = float(w)
    if all(w == 0 for w in out.values()):
        raise ParameterError(
            f"weights: every distance variable has weight 0 ({variables}); all distances "
            "would be 0 and neighbourhoods arbitrary — give at least one variable a positive weight"
        )
    return out


def build_design(
    data: pd.DataFrame,
    *,
    columns: Iterable[str] | None = None,
    schema: Schema | None = None,
    scale: str | None = "minmax",
    weights: Mapping[str, float] | None = None,
) -> Design:
    """Turn ``data`` into the numeric design used for distances.

    Numeric columns are scaled (``"minmax"`` to [0, 1] as in Perry, Matloff & Tendick's (2022) RWN
    experiments; ``"standard"`` to z-scores as in Matloff & Tendick (2015); ``None`` left as
    they are). Ordinal columns use their level positions 0, 1, ... and are
    scaled like numerics. Categorical columns become one 0/1 dummy per level
    (as Matloff & Tendick (2015) prescribes), and the dummies are scaled like every other
    design column, so under ``"minmax"`` they stay 0/1. Each variable's design
    columns are then multiplied by its weight (the ``wts`` of Matloff & Tendick 2015): a weight
    of 0.6 shrinks that variable's contribution to every distance by 0.6.

    Parameters
    ----------
    data : DataFrame
    columns : iterable of str, optional
        Variables to use; by default every column whose role is not weight,
        id or ignore.
    schema : Schema, optional
        Inferred from ``data`` when omitted.
    scale : {"minmax", "standard", None}
    weights : mapping, optional
        ``{column: weight >= 0}``; unspecified variables get 1.

    Returns
    -------
    Design
    """
    check_dataframe(data)
    if scale not in _SCALES:
        raise ParameterError(f"scale must be one of 'minmax', 'standard' or None, got {scale!r}")
    schema = schema if schema is not None else Schema.infer(data)
    variables = check_columns(
        data, columns if columns is not None else schema.maskable(), "columns"
    )
    if not variables:
        raise SchemaError(
            "no columns to build a design from (every column is id, weight or ignore)"
        )
    for name in variables:
        schema[name]  # every variable must be described
        if _is_temporal(data[name]):
            raise SchemaError(
                f"column {name!r} holds dates/times ({data[name].dtype}); it cannot define "
                "distances: convert it to a number (e.g. days since an origin) or leave it out"
            )
    weights_used = check_distance_weights(weights, variables)

    blocks: list[np.ndarray] = []
    names: list[str] = []
    sources: list[str] = []
    constant: list[str] = []
    for name in variables:
        spec = schema[name]
        series = data[name]
        if spec.kind is Kind.NUMERIC:
            _check_numeric(series)
            block = pd.to_numeric(series, errors="coerce").to_numpy(
                dtype=np.float64, na_value=np.nan
            )[:, None]
            infinite = np.isinf(block[:, 0])
            if infinite.any():
                pos = int(np.flatnonzero(infinite)[0])
                raise DataError(
                    f"column {name!r} holds {int(infinite.sum())} infinite value(s), e.g. "
                    f"{value_at(series, pos)}; distances "
                    "need finite numbers: replace them (or make them missing) first"
                )
            block_names = [name]
        elif spec.kind is Kind.ORDINAL:
            codes = _level_codes(name, series, list(spec.categories or ())).astype(np.float64)
            codes[codes < 0] = np.nan
            block = codes[:, None]
            block_names = [name]
        else:
            levels = list(spec.categories or ())
            codes = _level_codes(name, series, levels)
            block = np.zeros((len(series), max(len(levels), 1)), dtype=np.float64)
            ok = codes >= 0
            block[np.flatnonzero(ok), codes[ok]] = 1.0
            block[~ok, :] = np.nan
            block_names = [f"{name}={lvl}" for lvl in levels] or [name]
        block, is_constant = _scale_block(block, scale)
        if is_constant:
            constant.append(name)
        blocks.append(block * weights_used[name])
        names.extend(block_names)
        sources.extend([name] * block.shape[1])
    matrix = np.ascontiguousarray(np.hstack(blocks))
    return Design(matrix, names, sources, variables, scale, weights_used, constant)


def _scale_block(block: np.ndarray, scale: str | None) -> tuple[np.ndarray, bool]:
    """Scale each column of ``block``; a constant column becomes 0, not NaN."""
    with np.errstate(all="ignore"):
        if np.isnan(block).all(axis=0).any():
            col_min = np.zeros(block.shape[1])
            col_max = np.zeros(block.shape[1])
        else:
            col_min = np.nanmin(block, axis=0)
            col_max = np.nanmax(block, axis=0)
    spread = col_max - col_min
    is_constant = bool(np.all(spread == 0))
    if scale is None:
        return block, is_constant
    if scale == "minmax":
        denom = np.where(spread > 0, spread, 1.0)
        return (block - col_min) / denom, is_constant
    mean = np.nanmean(block, axis=0)
    sd = np.nanstd(block, axis=0, ddof=1) if block.shape[0] > 1 else np.zeros(block.shape[1])
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    return (block - mean) / sd, is_constant
