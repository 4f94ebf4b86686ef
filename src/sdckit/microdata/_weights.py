"""Survey weights for the masks that use them: given by name or by the schema's weight role."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit._validation import check_columns, describe_row, plain_value
from sdckit.errors import DataError, ParameterError
from sdckit.schema import Role, Schema

__all__ = ["resolve_sample_weights", "sample_weight_vector"]


def resolve_sample_weights(schema: Schema, sample_weights: str | None) -> str | None:
    """The weight column to honour: the one named, else the schema's weight-role column.

    A weight declared in the schema is used rather than ignored; several
    declared weight columns must be told apart by name.

    Parameters
    ----------
    schema : Schema
        The data's schema (its weight-role columns are read).
    sample_weights : str or None
        The weight column a caller named, if any.

    Returns
    -------
    str or None
        The weight column's name; None when the data are unweighted.
    """
    if sample_weights is not None:
        if not isinstance(sample_weights, str):
            raise ParameterError(
                "sample_weights must be the name of a weight column, got "
                f"{type(sample_weights).__name__}"
            )
        return sample_weights
    declared = schema.by_role(Role.WEIGHT)
    if len(declared) > 1:
        raise ParameterError(
            f"the schema declares several weight columns {declared}; name the one to use "
            "with sample_weights="
        )
    return declared[0] if declared else None


def sample_weight_vector(data: pd.DataFrame, sample_weights: str | None) -> np.ndarray | None:
    """The weights as floats (> 0 and finite, else a DataError naming the row); None when unweighted.

    Parameters
    ----------
    data : DataFrame
        The microdata.
    sample_weights : str or None
        The weight column (from :func:`resolve_sample_weights`).

    Returns
    -------
    ndarray or None
        One float weight per record; None when ``sample_weights`` is None.
    """
    if sample_weights is None:
        return None
    check_columns(data, [sample_weights], "sample_weights")
    w = pd.to_numeric(data[sample_weights], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    bad = ~np.isfinite(w) | (w <= 0)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"sample_weights column {sample_weights!r} must hold finite numbers > 0; "
            f"{describe_row(data.index, pos)} has {plain_value(data[sample_weights].iloc[pos])!r}"
        )
    return w
