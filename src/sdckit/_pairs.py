"""An original file and its release side by side: checking the pair, numeric
matrices and a design scaled the same way for both files.

Shared by the assessment measures (:mod:`sdckit.assess`) and the attacks on a
masked release (:mod:`sdckit.attacks.linkage`, :mod:`sdckit.attacks.prediction`).

The nearest-record searches live in :mod:`sdckit.neighbors`, shared with masking.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np
import pandas as pd

from sdckit._docs import shared_doc
from sdckit._validation import (
    check_columns,
    check_dataframe,
    plain_value,
    row_label,
    value_at,
)
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.schema import ColumnSpec, Kind, Schema, build_design, category_codes

#: Parameter entries the measures of ``utility.py`` and ``risk.py`` share: a line
#: ``{{pair}}`` (or ``{{numeric_pair}}``, ``{{schema}}``, ``{{distance_search}}``) in a
#: Parameters section stands for them (:func:`sdckit._docs.shared_doc`).
PAIR_FRAGMENTS = {
    "pair": """
        original, masked : DataFrame
            The original file and its release (same rows, same order).
        """,
    "schema": """
        schema : Schema, optional
            Inferred from ``original`` when omitted.
        """,
    "numeric_pair": """
        original, masked : DataFrame
            The original file and its release (same rows, same order).
        columns : iterable of str, optional
            Numeric or ordinal variables; default every numeric/ordinal column.
        schema : Schema, optional
            Inferred from ``original`` when omitted.
        """,
    "distance_search": """
        scale, weights
            How distances are computed (see :func:`sdckit.schema.build_design`);
            the scaling constants are computed on both files together.
        backend : NeighborBackend or str, optional
            The neighbour search: a :class:`~sdckit.neighbors.NeighborBackend`
            or a name for :func:`~sdckit.neighbors.make_backend` (default an
            exact KD-tree).
        chunk_size : int, default 8192
            Records per search block.
        n_jobs : None, -1 or positive int
            Search threads (:func:`sdckit.neighbors.resolve_n_jobs`: None or -1
            is one per core).
        """,
}
pair_doc = shared_doc(PAIR_FRAGMENTS)

__all__ = [
    "categorical_columns",
    "check_pair",
    "check_pair_schema",
    "complete_rows",
    "joint_design",
    "numeric_columns",
    "numeric_matrix",
    "resolve_schema",
]


def check_pair(original: object, masked: object) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Check that ``masked`` is a release of ``original``: same columns, same rows in the same order.

    Record i of the masked file must be the masked version of record i of the
    original file: every risk measure that asks "is this still record i?"
    depends on that correspondence.

    Parameters
    ----------
    original, masked : DataFrame
        The original file and its release.

    Returns
    -------
    tuple of DataFrame
        ``(original, masked)``, checked.
    """
    original_frame = check_dataframe(original, "original", min_rows=2)
    masked_frame = check_dataframe(masked, "masked", min_rows=2)
    return _check_same_records(original_frame, masked_frame)


def check_pair_schema(
    original: object, masked: object, schema: Schema | None
) -> tuple[pd.DataFrame, pd.DataFrame, Schema]:
    """:func:`check_pair`, then :func:`resolve_schema`: the opening of every comparison.

    Parameters
    ----------
    original, masked : DataFrame
        The original file and its release.
    schema : Schema or None
        The schema given by the user (checked against the original), or None
        to infer it from the original.

    Returns
    -------
    tuple
        ``(original, masked, schema)``, checked.
    """
    original_frame, masked_frame = check_pair(original, masked)
    return original_frame, masked_frame, resolve_schema(original_frame, schema)


def _check_same_records(
    original: pd.DataFrame, masked: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    if len(original) != len(masked):
        raise DataError(
            f"original has {len(original)} rows but masked has {len(masked)}; "
            "a masked release must keep every record"
        )
    missing = [c for c in original.columns if c not in masked.columns]
    if missing:
        raise SchemaError(f"masked lacks column(s) {missing} of the original")
    extra = [c for c in masked.columns if c not in original.columns]
    if extra:
        raise SchemaError(
            f"masked has column(s) {extra} that the original lacks; a masked release holds the "
            "original's columns (is it the release of another file?)"
        )
    if not original.index.equals(masked.index):
        raise DataError(
            "original and masked have different row indexes; record i of the masked file "
            "must be the masked version of record i of the original (reset or align the indexes)"
        )
    if not original.index.is_unique:
        # Records are named by their index label in every measure and note.
        label = original.index[original.index.duplicated()][0]
        raise DataError(
            f"the row index labels records but is duplicated (e.g. {row_label(label)!r} appears "
            "more than once); give both files a unique index, e.g. with reset_index(drop=True)"
        )
    return original, masked


def resolve_schema(original: pd.DataFrame, schema: Schema | None) -> Schema:
    """The schema given, checked against the data, or one inferred from the original.

    Parameters
    ----------
    original : DataFrame
        The original file.
    schema : Schema or None
        The schema given by the user.

    Returns
    -------
    Schema
    """
    if schema is None:
        return Schema.infer(original)
    if not isinstance(schema, Schema):
        raise ParameterError(f"schema must be a sdckit Schema, got {type(schema).__name__}")
    schema.check_matches(original)
    return schema


def numeric_columns(
    data: pd.DataFrame, schema: Schema, columns: Iterable[str] | str | None = None
) -> list[str]:
    """Numeric and ordinal columns among ``columns`` (default: every maskable column).

    Parameters
    ----------
    data : DataFrame
        The file.
    schema : Schema
        Its schema.
    columns : iterable of str, str or None
        The columns asked for; a categorical one is refused.

    Returns
    -------
    list of str
    """
    if columns is None:
        candidates = schema.maskable()
        return [c for c in candidates if schema[c].kind in (Kind.NUMERIC, Kind.ORDINAL)]
    cols = check_columns(data, columns, "columns")
    bad = [c for c in cols if schema[c].kind is Kind.CATEGORICAL]
    if bad:
        raise SchemaError(
            f"column(s) {bad} are categorical; this measure needs numeric or ordinal columns"
        )
    return cols


def categorical_columns(schema: Schema, columns: Iterable[str] | None = None) -> list[str]:
    """Categorical columns among ``columns`` (default: every maskable column).

    Parameters
    ----------
    schema : Schema
        The file's schema.
    columns : iterable of str, optional
        The columns to pick from.

    Returns
    -------
    list of str
    """
    names = list(columns) if columns is not None else schema.maskable()
    return [c for c in names if schema[c].kind is Kind.CATEGORICAL]


def numeric_matrix(data: pd.DataFrame, columns: list[str], schema: Schema) -> np.ndarray:
    """``data[columns]`` as float64; ordinal columns as their level positions 0, 1, ....

    Parameters
    ----------
    data : DataFrame
        The file.
    columns : list of str
        Numeric or ordinal columns.
    schema : Schema
        Its schema.

    Returns
    -------
    ndarray
        len(data) x len(columns).
    """
    if not columns:
        return np.empty((len(data), 0))
    design = build_design(
        data[columns], columns=columns, schema=_subschema(schema, columns), scale=None
    )
    return design.matrix


def _subschema(schema: Schema, columns: list[str]) -> Schema:
    return Schema(tuple(schema[c] for c in columns))


def joint_design(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    columns: list[str],
    schema: Schema,
    *,
    scale: str | None = "minmax",
    weights: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Design matrices of both files, scaled with the *same* constants.

    The two files are stacked before scaling, so a distance of 0.1 means the
    same thing in both (scaling each file by itself would hide a masking that
    stretches or shrinks a variable).

    Parameters
    ----------
    original, masked : DataFrame
        The original file and its release.
    columns : list of str
        The variables of the design.
    schema : Schema
        The original's schema.
    scale : str or None, default "minmax"
        Scaling of numeric columns (see :func:`sdckit.schema.build_design`).
    weights : dict, optional
        Per-column weights of the distances.

    Returns
    -------
    tuple of ndarray
        The original's and the masked file's design matrices.
    """
    for col in columns:
        spec = schema[col]
        if spec.kind is Kind.ORDINAL:
            # An ordinal value must have a place in the original's order.
            levels = list(spec.categories or ())
            unknown = category_codes(masked[col], levels)[1]
            if unknown.any():
                pos = int(np.flatnonzero(unknown)[0])
                raise SchemaError(
                    f"masked data: ordinal column {col!r} has value "
                    f"{value_at(masked[col], pos)}, "
                    f"which is not one of its levels {[plain_value(v) for v in levels]}"
                )
    sub = Schema(tuple(_levels_of_both(schema[c], masked[c]) for c in columns))
    stacked = pd.concat(
        [original[columns].reset_index(drop=True), masked[columns].reset_index(drop=True)],
        ignore_index=True,
    )
    for col in columns:
        # A categorical masked column must keep the original's levels for the design.
        if isinstance(original[col].dtype, pd.CategoricalDtype):
            stacked[col] = pd.Categorical(
                stacked[col],
                categories=list(sub[col].categories or ()),
                ordered=original[col].cat.ordered,
            )
    try:
        design = build_design(stacked, columns=columns, schema=sub, scale=scale, weights=weights)
    except SchemaError as exc:
        raise SchemaError(f"masked data: {exc}") from exc
    n = len(original)
    return design.matrix[:n], design.matrix[n:]


def _levels_of_both(spec: ColumnSpec, masked: pd.Series) -> ColumnSpec:
    """An unordered categorical's levels extended by values only the masked file has.

    A release may recode or merge categories; such a value is a level of its
    own in the distances (its own dummy), never an error.
    """
    if spec.kind is not Kind.CATEGORICAL:
        return spec
    levels = list(spec.categories or ())
    known = set(levels)
    extra = [v for v in pd.unique(masked.dropna()) if v not in known]
    if not extra:
        return spec
    return replace(spec, categories=tuple(levels + extra))


def complete_rows(matrix: np.ndarray) -> np.ndarray:
    """Boolean mask of rows without missing values.

    Parameters
    ----------
    matrix : ndarray
        A design matrix.

    Returns
    -------
    ndarray of bool
    """
    return ~np.isnan(matrix).any(axis=1)
