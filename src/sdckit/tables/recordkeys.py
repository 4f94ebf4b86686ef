"""Record keys: drawn once per record and stored, so cell keys are consistent.

Giessing & Höhne (2011), Section 4: every record gets a random key
uniform on ``[0, 2^31 - 1)``; the keys of a cell's records are summed modulo
``2^31 - 1``. The same set of records always gives the same cell key, so
logically identical cells of different tables receive identical perturbations.

Keys are drawn once and stored as a column (not generated inside a
tabulation): removing or adding records then changes only the cells those
records belong to.

Two kinds are offered:

* ``"integer"``: int64 keys in ``[0, 2^31 - 1)``, summed modulo ``2^31 - 1``;
* ``"uniform"``: float keys in ``[0, 1)`` summed modulo 1. They are drawn on a
  grid of ``2^-32`` and summed as integers, so the cell key does not depend on
  the order of summation (floating-point sums would).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdckit._validation import RandomState, check_dataframe, check_random_state
from sdckit.errors import DataError, ParameterError

__all__ = [
    "INTEGER_KEY_MODULUS",
    "UNIFORM_KEY_RESOLUTION",
    "add_record_keys",
    "key_units",
]

#: Range of integer record keys (Giessing & Höhne 2011, Section 4): keys lie in [0, 2^31 - 1).
INTEGER_KEY_MODULUS = 2**31 - 1
#: Uniform keys are multiples of 1 / 2^32, summed exactly as integers modulo 2^32.
UNIFORM_KEY_RESOLUTION = 2**32


def add_record_keys(
    data: pd.DataFrame,
    seed: RandomState = None,
    *,
    kind: str = "integer",
    column: str = "record_key",
    overwrite: bool = False,
    key_range: int | None = None,
) -> pd.DataFrame:
    """Return a copy of ``data`` with a record-key column.

    Parameters
    ----------
    data : DataFrame
        Microdata; never modified.
    seed : None, int or Generator
        Random state; the same seed gives the same keys.
    kind : {"integer", "uniform"}
        ``"integer"``: int64 in ``[0, 2^31 - 1)``; ``"uniform"``: float64 in
        ``[0, 1)`` on a ``2^-32`` grid.
    column : str, default "record_key"
    overwrite : bool, default False
        Replace an existing column of that name (otherwise an error: keys
        should be drawn once and kept).
    key_range : int, optional
        With ``kind="integer"``, draw keys in ``0..key_range-1`` instead
        (256 or 4096 for the ONS p-tables, whose cell keys are sums modulo
        the key range); tabulate them with ``key_modulus=key_range``.

    Returns
    -------
    DataFrame
        A copy of ``data`` with the key column added (the input is not
        modified).
    """
    data = check_dataframe(data)
    if kind not in ("integer", "uniform"):
        raise ParameterError(f"kind must be 'integer' or 'uniform', got {kind!r}")
    if column in data.columns and not overwrite:
        raise ParameterError(
            f"column {column!r} already exists; record keys are drawn once and kept "
            "(pass overwrite=True to draw new ones)"
        )
    if key_range is not None:
        if kind != "integer":
            raise ParameterError("key_range applies to integer keys (kind='integer')")
        if (
            isinstance(key_range, bool)
            or not isinstance(key_range, int | np.integer)
            or not 2 <= key_range <= INTEGER_KEY_MODULUS
        ):
            raise ParameterError(f"key_range must be a whole number >= 2, got {key_range!r}")
    rng = check_random_state(seed)
    out = data.copy()
    if kind == "integer":
        top = INTEGER_KEY_MODULUS if key_range is None else int(key_range)
        out[column] = rng.integers(0, top, size=len(data), dtype=np.int64)
    else:
        units = rng.integers(0, UNIFORM_KEY_RESOLUTION, size=len(data), dtype=np.int64)
        out[column] = units / UNIFORM_KEY_RESOLUTION
    return out


def key_units(
    keys: pd.Series | np.ndarray, *, name: str = "record_key", modulus: int | None = None
) -> tuple[np.ndarray, int, bool]:
    """Record keys as non-negative int64 units, with their modulus.

    Parameters
    ----------
    keys : Series or array
        Integer keys, or floats in ``[0, 1)``.
    name : str, default "record_key"
        Column name for messages.
    modulus : int, optional
        Range of integer keys (``0..modulus-1``, summed modulo ``modulus``),
        e.g. 256 for the ONS p-tables; default ``2^31 - 1``. Not used for
        uniform keys.

    Returns
    -------
    units : int64 array
    modulus : int
        ``2^31 - 1`` for integer keys, ``2^32`` for uniform keys.
    uniform : bool
        True for keys in ``[0, 1)``.
    """
    values = keys.to_numpy() if isinstance(keys, pd.Series) else np.asarray(keys)
    if modulus is not None and (
        isinstance(modulus, bool) or not isinstance(modulus, int | np.integer) or modulus < 2
    ):
        raise ParameterError(f"key_modulus must be a whole number of at least 2, got {modulus!r}")
    if values.dtype.kind in "iu":
        units = values.astype(np.int64, copy=False)
        top = int(modulus) if modulus is not None else INTEGER_KEY_MODULUS
        if len(units) and (units.min() < 0 or units.max() >= top):
            shown = "[0, 2^31 - 1)" if modulus is None else f"0..{top - 1}"
            raise DataError(
                f"integer record keys in {name!r} must lie in {shown}, "
                f"found {units.min()}..{units.max()}"
            )
        return units, top, False
    if values.dtype.kind == "f":
        if not np.isfinite(values).all():
            raise DataError(f"record keys in {name!r} have missing values")
        if len(values) and (values.min() < 0 or values.max() >= 1):
            raise DataError(f"uniform record keys in {name!r} must lie in [0, 1)")
        units = np.floor(values * UNIFORM_KEY_RESOLUTION).astype(np.int64)
        return units, UNIFORM_KEY_RESOLUTION, True
    raise DataError(
        f"record keys in {name!r} must be integers or floats in [0, 1), got {values.dtype}"
    )
