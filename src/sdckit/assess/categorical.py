"""Risk carried by categorical key variables: individual, global and household risk, diversity.

Sources
-------
* Benedetti & Franconi (1998) and Franconi & Polettini (2004), §2-3: the
  individual risk r_i = E(1 / F_k | f_k) of a record in key combination k,
  with the population frequency F_k given the sample frequency f_k a
  negative binomial (F_k - f_k ~ NegBin(f_k, p_k), p_k = f_k / sum of the
  sampling weights of k). The closed forms for f_k = 1, 2 and the
  approximation p_k / (f_k - 1 + p_k) for f_k > 2 are those of sdcMicro's
  ``indivRisk`` / ``measure_risk`` (Templ, Kowarik & Meindl 2015, §3.2).
* Hundepool et al. (2012), §3.3.6: the expected number of re-identifications
  sum_i r_i, the global risk (their mean) and the household risk
  1 - prod_{i in h} (1 - r_i) of the records of household h.
* Machanavajjhala et al. (2007), §4.1-4.3: distinct, entropy and recursive
  (c, l)-diversity of a sensitive variable within each key combination.
* Li, Li & Venkatasubramanian (2007), §4: t-closeness, the Earth Mover's
  Distance between a class's distribution of the sensitive variable and the
  whole file's, with the equal ground distance (nominal values) or the
  ordered distance (ordinal or numeric values).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from scipy.special import hyp2f1

from sdckit._keys import KeyGroups, check_missing, group_keys, key_codes
from sdckit._pairs import check_pair_schema, pair_doc, resolve_schema
from sdckit._results import FrozenResult
from sdckit._validation import (
    check_columns,
    check_dataframe,
    check_positive,
    describe_row,
    plain_value,
)
from sdckit.assess._result import MeasureResult
from sdckit.errors import DataError, ParameterError, SchemaError
from sdckit.schema import Kind, Schema

__all__ = [
    "Diversity",
    "IndividualRisk",
    "IndividualRiskComparison",
    "compare_individual_risk",
    "individual_risk",
    "sensitive_diversity",
]

RiskMethod = Literal["approx", "exact"]

#: A numeric key with more distinct values than this is refused (see check_keys).
NUMERIC_KEY_LEVELS = 100


def max_numeric_key_levels(n_records: int) -> int:
    """Most distinct values a numeric key may take: 100, and at most half the records."""
    return int(min(NUMERIC_KEY_LEVELS, n_records / 2))


def check_keys(
    data: pd.DataFrame, keys: Iterable[str] | str, schema: Schema | None
) -> tuple[list[str], Schema]:
    """The data, schema and key variables checked: the keys exist, and none is a continuous number.

    A numeric key is accepted only if it takes few distinct values
    (:func:`max_numeric_key_levels`), since nearly every value of a continuous
    variable is unique; one declared categorical in the schema is used as it is.
    Returns the keys and the schema (inferred from ``data`` when None).
    """
    check_dataframe(data)
    schema = resolve_schema(data, schema)
    keys = check_columns(data, keys, "keys")
    if not keys:
        raise ParameterError("keys: give at least one key variable")
    for key in keys:
        if schema[key].kind is not Kind.NUMERIC:
            continue
        distinct = int(data[key].nunique())
        if distinct > max_numeric_key_levels(len(data)):
            raise SchemaError(
                f"key {key!r} is numeric with {distinct} distinct values in {len(data)} records "
                f"(more than {max_numeric_key_levels(len(data))}): nearly every value points at "
                "few records. Recode it into categories (bands) before using it as a key, or "
                "declare it categorical to use its values as they are"
            )
    return keys, schema


def check_weights(data: pd.DataFrame, weight: str, keys: Sequence[str]) -> np.ndarray:
    """The sampling weights of ``weight``: numbers, positive, none missing (row named otherwise)."""
    check_columns(data, [weight], "weight")
    if weight in keys:
        raise ParameterError(f"weight {weight!r} is also a key")
    column = data[weight]
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        raise SchemaError(f"weight {weight!r} must hold numbers, it has dtype {column.dtype}")
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if len(bad):
        row = describe_row(data.index, int(bad[0]))
        raise DataError(
            f"weight {weight!r} must be a positive number in every record; {row} has "
            f"{plain_value(column.iloc[bad[0]])!r} ({len(bad)} such record(s))"
        )
    return values


def benedetti_franconi(
    sample_frequency: np.ndarray, population_frequency: np.ndarray, method: RiskMethod = "approx"
) -> np.ndarray:
    """Individual risk E(1/F | f) under the negative binomial model (Benedetti & Franconi 1998).

    With p = f / F (F the sum of the sampling weights of the key
    combination, p capped at 1), F - f ~ NegBin(f, p), and

        r = sum_{h >= f} (1/h) C(h-1, f-1) p^f (1-p)^(h-f)
          = (1/f) 2F1(1, f; f+1; -(1-p)/p) = (p/f) 2F1(1, 1; f+1; 1-p).

    For f = 1, r = p/(1-p) log(1/p); for f = 2, r = p/(1-p) - (p/(1-p))^2
    log(1/p) (Franconi & Polettini 2004, §3). For f > 2, ``"approx"`` takes
    p / (f - (1 - p)), the approximation sdcMicro's ``indivRisk`` and
    ``measure_risk`` use, and ``"exact"`` the hypergeometric function. When
    p = 1 (the file is the population) r = 1/f.

    Parameters
    ----------
    sample_frequency : ndarray
        f of each record (>= 1).
    population_frequency : ndarray
        F of each record (> 0).
    method : {"approx", "exact"}
        How r is computed for f > 2.

    Returns
    -------
    ndarray of float
    """
    f = np.asarray(sample_frequency, dtype=np.float64)
    p = np.minimum(f / np.asarray(population_frequency, dtype=np.float64), 1.0)
    q = 1.0 - p
    r = np.empty_like(f)
    full = q <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = p / q
        log_inv = -np.log(p)
        one = odds * log_inv
        two = odds - odds**2 * log_inv
        if method == "exact":
            # Pfaff's transformation of (1/f) 2F1(1, f; f+1; -(1-p)/p): an argument in [0, 1).
            more = p / f * _hyp2f1_one_one(f + 1.0, q)
        else:
            more = p / (f - q)
    r = np.where(f == 1, one, np.where(f == 2, two, more))
    r[full] = 1.0 / f[full]
    return r


def _hyp2f1_one_one(c: np.ndarray, z: np.ndarray) -> np.ndarray:
    """2F1(1, 1; c; z) for c > 2 and 0 <= z < 1.

    scipy's ``hyp2f1`` returns NaN for a large c with z near 1 (c = 108,
    z = 0.99); there the series sum_n n! / (c)_n z^n, whose terms shrink
    at least as fast as z^n, is summed directly.
    """
    out = np.asarray(hyp2f1(1.0, 1.0, c, z), dtype=np.float64).copy()
    bad = np.flatnonzero(~np.isfinite(out) & np.isfinite(z) & (z < 1))
    if len(bad):
        cc, zz = c[bad], z[bad]
        term = np.ones(len(bad))
        total = np.ones(len(bad))
        active = np.arange(len(bad))
        n = 0
        while len(active):
            term[active] *= (n + 1) / (cc[active] + n) * zz[active]
            total[active] += term[active]
            active = active[term[active] > 1e-17 * total[active]]
            n += 1
        out[bad] = total
    return out


def _household_risk(risk: np.ndarray, household: pd.Series) -> np.ndarray:
    """1 - prod (1 - r_i) over each record's household, given to every member."""
    codes = pd.factorize(household, use_na_sentinel=False)[0]
    with np.errstate(divide="ignore"):
        log_safe = np.log1p(-np.minimum(risk, 1.0))
    per_house = np.bincount(codes, weights=log_safe)
    return -np.expm1(per_house[codes])


def _join(keys: Sequence[str]) -> str:
    return " × ".join(keys)


@dataclass(frozen=True)
class IndividualRisk(FrozenResult):
    """Individual, global and household re-identification risk of one file.

    Attributes
    ----------
    keys : list of str
        The categorical key variables an intruder is assumed to know.
    frequencies : Series
        f_k of each record: the records of the file its keys match.
    population_frequencies : Series
        F_k of each record: the sum of the sampling weights of those records
        (equal to f_k without weights).
    risk : Series
        The individual risk r_i of each record (Benedetti & Franconi 1998).
    expected_reidentifications : float
        sum_i r_i.
    global_risk : float
        The mean individual risk, sum_i r_i / n.
    household_risk : Series or None
        1 - prod (1 - r_j) over the record's household, when households are given.
    household_expected_reidentifications : float or None
        Sum of the household risk over the records.
    household_global_risk : float or None
        Its mean over the records.
    weight, household : str or None
        The columns used.
    missing : str
        ``"category"`` or ``"any"`` (see :func:`individual_risk`).
    method : str
        ``"approx"`` or ``"exact"``.
    """

    keys: list[str]
    frequencies: pd.Series
    population_frequencies: pd.Series
    risk: pd.Series
    expected_reidentifications: float
    global_risk: float
    household_risk: pd.Series | None = None
    household_expected_reidentifications: float | None = None
    household_global_risk: float | None = None
    weight: str | None = None
    household: str | None = None
    missing: str = "category"
    method: str = "approx"
    key_values: pd.DataFrame | None = None

    @property
    def sample_uniques(self) -> int:
        """Records whose keys match no other record of the file (f_k = 1)."""
        return int((self.frequencies == 1).sum())

    def summary(self) -> str:
        n = len(self.risk)
        lines = [
            f"individual risk on {_join(self.keys)} ({n} records"
            + (f", weights {self.weight!r}" if self.weight else ", no weights: F_k = f_k")
            + f", missing key values {'match any value' if self.missing == 'any' else 'are a category'}):",
            f"  sample uniques: {self.sample_uniques}",
            f"  expected re-identifications: {self.expected_reidentifications:.4f} "
            f"({100 * self.global_risk:.4f}% of the records)",
            f"  highest individual risk: {float(self.risk.max()):.4f}; records with risk > 0.1: "
            f"{int((self.risk > 0.1).sum())}",
        ]
        if self.household_risk is not None:
            lines.append(
                f"  household risk ({self.household!r}): expected re-identifications "
                f"{self.household_expected_reidentifications:.4f} "
                f"({100 * float(self.household_global_risk or 0.0):.4f}% of the records)"
            )
        return "\n".join(lines)

    def explain(self, position: int) -> str:
        """The measures of one record in plain language.

        Parameters
        ----------
        position : int
            0-based position of the record in the file.

        Returns
        -------
        str
            E.g. "row 18 is unique in the file on urbrur × roof × sex; about
            3.2 people like it are expected in the population; ...".
        """
        n = len(self.risk)
        if not -n <= position < n:
            raise ParameterError(f"position must be between 0 and {n - 1}, got {position}")
        position = position % n
        where = describe_row(self.risk.index, position)
        f = int(self.frequencies.iloc[position])
        values = ""
        if self.key_values is not None:
            row = self.key_values.iloc[position]
            values = (
                " ("
                + ", ".join(
                    f"{k}={'missing' if pd.isna(v) else plain_value(v)}" for k, v in row.items()
                )
                + ")"
            )
        if f == 1:
            text = f"{where} is unique in the file on {_join(self.keys)}{values}"
        else:
            text = (
                f"{where} shares its combination of {_join(self.keys)}{values} with "
                f"{f - 1} other record(s) of the file"
            )
        if self.missing == "any" and self.key_values is not None:
            absent = [k for k, v in self.key_values.iloc[position].items() if pd.isna(v)]
            if absent:
                text += f" (its missing {', '.join(absent)} counted as matching any value)"
        if self.weight is not None:
            big_f = float(self.population_frequencies.iloc[position])
            text += (
                f"; by the sampling weights about {big_f:.3g} people like it are expected in "
                "the population"
            )
        r = float(self.risk.iloc[position])
        text += (
            f"; an intruder who knows these keys and that the person is in the file picks "
            f"the right record with probability about {r:.3g}"
        )
        if self.household_risk is not None:
            h = float(self.household_risk.iloc[position])
            text += (
                f"; the chance that someone of its household ({self.household!r}) is "
                f"re-identified is about {h:.3g}"
            )
        return text + "."

    def explanations(self) -> pd.Series:
        """:meth:`explain` for every record.

        Returns
        -------
        Series of str
            Indexed like the data.
        """
        return pd.Series(
            [self.explain(i) for i in range(len(self.risk))],
            index=self.risk.index,
            name="explanation",
        )

    def table(self) -> pd.DataFrame:
        """The per-record measures as one table (no data column).

        Returns
        -------
        DataFrame
            ``row`` (1-based), ``frequency``, ``population_frequency``,
            ``risk`` and, with households, ``household_risk``; indexed like
            the data.
        """
        out = pd.DataFrame(
            {
                "row": np.arange(1, len(self.risk) + 1),
                "frequency": self.frequencies,
                "population_frequency": self.population_frequencies,
                "risk": self.risk,
            }
        )
        if self.household_risk is not None:
            out["household_risk"] = self.household_risk
        return out


def frequencies(
    data: pd.DataFrame,
    keys: Sequence[str],
    *,
    missing: str = "category",
    weights: np.ndarray | None = None,
) -> tuple[KeyGroups, np.ndarray, np.ndarray]:
    """The key groups, f_k and F_k of every record under a missing-value convention.

    With weights, the counts and the sums of weights are matched in one pass.
    """
    groups = group_keys(key_codes(data, keys), check_missing(missing))
    if weights is None:
        fk = groups.matched(groups.size.astype(np.float64))[groups.group]
        return groups, fk, fk.copy()
    both = groups.matched(np.column_stack([groups.size, groups.sum_by_group(weights)]))
    return groups, both[groups.group, 0], both[groups.group, 1]


def individual_risk(
    data: pd.DataFrame,
    keys: Iterable[str] | str,
    *,
    weight: str | None = None,
    household: str | None = None,
    missing: str = "category",
    method: str = "approx",
    schema: Schema | None = None,
) -> IndividualRisk:
    """Individual risk of re-identification of every record (Benedetti & Franconi 1998).

    The intruder knows the key variables of a person and that the person is
    in the sample; the chance of picking the right record is 1/F_k, F_k the
    number of people in the population with those keys. F_k is unknown in a
    sample; given the sample frequency f_k and the sum of the sampling
    weights of the combination, the model of Benedetti & Franconi (1998)
    gives its expectation r_i (see :func:`benedetti_franconi`). Without
    weights the file is taken as the population and r_i = 1/f_k.
    The expected number of re-identifications is sum_i r_i and the global
    risk its mean (Hundepool et al. 2012, §3.3.6). With households, the risk
    that at least one member of household h is re-identified is
    1 - prod_{i in h} (1 - r_i), given to every member, as sdcMicro's
    ``measure_risk`` does with ``hid``.

    Parameters
    ----------
    data : DataFrame
        One file (a sample, with its sampling weights).
    keys : iterable of str
        The categorical key variables.
    weight : str, optional
        Column of sampling weights (positive numbers).
    household : str, optional
        Column of household identifiers.
    missing : {"category", "any"}, default "category"
        A missing key value is a category of its own, or matches any value
        (sdcMicro's and mu-Argus' convention for suppressed cells).
    method : {"approx", "exact"}, default "approx"
        For f_k > 2: sdcMicro's approximation, or the exact expectation.
    schema : Schema, optional
        Column kinds (a numeric key declared categorical is accepted); inferred
        from ``data`` when omitted.

    Returns
    -------
    IndividualRisk
        Per record f_k, F_k and r_i; their sums and means.
    """
    keys, schema = check_keys(data, keys, schema)
    if method not in ("approx", "exact"):
        raise ParameterError(f"method must be 'approx' or 'exact', got {method!r}")
    missing = check_missing(missing)
    weights = None if weight is None else check_weights(data, weight, keys)
    if household is not None:
        check_columns(data, [household], "household")
        if household in keys:
            raise ParameterError(f"household {household!r} is also a key")
    _, fk, big_f = frequencies(data, keys, missing=missing, weights=weights)
    risk = benedetti_franconi(fk, big_f, method)  # type: ignore[arg-type]  # checked above
    index = data.index
    hh = hh_er = hh_global = None
    if household is not None:
        hh_values = _household_risk(risk, data[household])
        hh = pd.Series(hh_values, index=index, name="household_risk")
        hh_er = float(hh_values.sum())
        hh_global = hh_er / len(data)
    er = float(risk.sum())
    return IndividualRisk(
        keys=keys,
        frequencies=pd.Series(fk.astype(np.int64), index=index, name="frequency"),
        population_frequencies=pd.Series(big_f, index=index, name="population_frequency"),
        risk=pd.Series(risk, index=index, name="risk"),
        expected_reidentifications=er,
        global_risk=er / len(data),
        household_risk=hh,
        household_expected_reidentifications=hh_er,
        household_global_risk=hh_global,
        weight=weight,
        household=household,
        missing=missing,
        method=method,
        key_values=data[keys],
    )


@dataclass(frozen=True)
class IndividualRiskComparison(MeasureResult):
    """:class:`IndividualRisk` of the original file and of its release (the report's categorical section).

    Both are counted with a missing key value matching any value (sdcMicro's
    convention for suppressed cells), so a release made k-anonymous by local
    suppression is credited for it.
    """

    original: IndividualRisk
    masked: IndividualRisk

    LABELS: ClassVar[Mapping[str, str]] = {
        "expected_reidentifications_original": "expected re-identifications, original",
        "expected_reidentifications_masked": "expected re-identifications, masked",
        "high_risk_records_masked": "records with individual risk > 0.1, masked",
    }

    def headline(self) -> dict[str, float]:
        """Expected re-identifications of both files; high-risk records of the release.

        Returns
        -------
        dict
        """
        return {
            "expected_reidentifications_original": self.original.expected_reidentifications,
            "expected_reidentifications_masked": self.masked.expected_reidentifications,
            "high_risk_records_masked": float((self.masked.risk > 0.1).sum()),
        }

    def note(self) -> str:
        """A plain-language sentence for the report.

        Returns
        -------
        str
        """
        o, m = self.original, self.masked
        return (
            f"On the keys {', '.join(o.keys)}, an intruder would re-identify about "
            f"{o.expected_reidentifications:.3g} records of the original and "
            f"{m.expected_reidentifications:.3g} of the release (individual risk, Benedetti & "
            f"Franconi 1998); {int((m.risk > 0.1).sum())} released record(s) have a risk above 0.1."
        )

    def summary(self) -> str:
        """Both files' individual risk, one after the other."""
        return f"original:\n{self.original.summary()}\nmasked:\n{self.masked.summary()}"


@pair_doc
def compare_individual_risk(
    original: pd.DataFrame,
    masked: pd.DataFrame,
    keys: Iterable[str],
    *,
    schema: Schema | None = None,
) -> IndividualRiskComparison:
    """:func:`individual_risk` of both files, missing key values matching any value.

    Parameters
    ----------
    {{pair}}
    keys : iterable of str
        The key variables.
    {{schema}}

    Returns
    -------
    IndividualRiskComparison
    """
    original, masked, schema = check_pair_schema(original, masked, schema)
    return IndividualRiskComparison(
        original=individual_risk(original, keys, missing="any", schema=schema),
        masked=individual_risk(masked, keys, missing="any", schema=schema),
    )


# ---------------------------------------------------------------------------
# Diversity of a sensitive variable within key combinations; t-closeness
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Diversity(FrozenResult):
    """How varied a sensitive variable is within each key combination, and how close to the file's.

    Attributes
    ----------
    sensitive : str
        The sensitive variable.
    keys : list of str
        The key variables that define the classes.
    distinct : Series of int
        Per record, the number of distinct sensitive values among the records
        its keys match (distinct l-diversity, Machanavajjhala et al. 2007, §4.1).
    entropy : Series of float
        Per record, exp(H) with H the entropy of those values (entropy
        l-diversity, §4.2: the class is entropy l-diverse for every l <= exp(H)).
    recursive : Series of int
        Per record, the largest l for which its class is recursive
        (c, l)-diverse: r_1 < c (r_l + ... + r_m), r_1 >= r_2 >= ... the
        counts of the values (§4.3).
    closeness : Series of float
        Per record, the Earth Mover's Distance between the class's
        distribution of the sensitive variable and the whole file's
        (Li, Li & Venkatasubramanian 2007, §4).
    c : float
    ordered : bool
        Whether the ordered distance was used (else the equal distance).
    l_distinct, l_recursive : int
        Minima over the records.
    l_entropy : float
        Minimum of ``entropy``.
    t_closeness : float
        Maximum of ``closeness``: the file is t-close for every t at least this.
    """

    sensitive: str
    keys: list[str]
    distinct: pd.Series
    entropy: pd.Series
    recursive: pd.Series
    closeness: pd.Series
    c: float
    ordered: bool
    l_distinct: int
    l_entropy: float
    l_recursive: int
    t_closeness: float

    def summary(self) -> str:
        distance = "ordered distance" if self.ordered else "equal distance"
        return (
            f"sensitive {self.sensitive!r} within {_join(self.keys)}: distinct "
            f"{self.l_distinct}-diverse, entropy {self.l_entropy:.3g}-diverse, recursive "
            f"({self.c:g}, {self.l_recursive})-diverse; {self.t_closeness:.4f}-close ({distance})"
        )


def _sensitive_codes(column: pd.Series) -> np.ndarray:
    """Codes in the variable's order (categories' order, else sorted); a missing value last."""
    codes, uniques = pd.factorize(column, sort=True, use_na_sentinel=True)
    codes = codes.astype(np.int64)
    codes[codes < 0] = len(uniques)
    return codes


def _class_diversity(
    group: np.ndarray, value: np.ndarray, total: np.ndarray, n_groups: int, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct count, exp(entropy) and recursive l of each class from its sparse histogram."""
    distinct = np.bincount(group, minlength=n_groups)
    class_total = np.bincount(group, weights=total, minlength=n_groups)
    share = total / class_total[group]
    entropy = np.exp(np.bincount(group, weights=-share * np.log(share), minlength=n_groups))
    # Recursive (c, l): counts sorted in decreasing order within each class.
    order = np.lexsort((-total, group))
    g, t = group[order], total[order]
    start = np.searchsorted(g, g, side="left")
    before = np.cumsum(t) - t  # the counts ahead of this one in the whole list
    tail = class_total[g] - (before - before[start])  # r_l + ... + r_m of its class
    largest = t[start]
    holds = largest < c * tail
    recursive = np.bincount(g, weights=holds, minlength=n_groups).astype(np.int64)
    return distinct, entropy, recursive


def _closeness(
    group: np.ndarray,
    value: np.ndarray,
    total: np.ndarray,
    n_groups: int,
    overall: np.ndarray,
    ordered: bool,
) -> np.ndarray:
    """EMD between each class's distribution and ``overall`` (Li, Li & Venkatasubramanian 2007)."""
    class_total = np.bincount(group, weights=total, minlength=n_groups)
    share = total / class_total[group]
    m = len(overall)
    if not ordered or m < 2:
        # Equal ground distance: half the L1 distance; values absent from a class contribute q_v.
        present = np.abs(share - overall[value]) - overall[value]
        return 0.5 * (np.bincount(group, weights=present, minlength=n_groups) + 1.0)
    out = np.empty(n_groups)
    block = max(1, 20_000_000 // m)
    for lo in range(0, n_groups, block):
        hi = min(n_groups, lo + block)
        take = (group >= lo) & (group < hi)
        dense = np.zeros((hi - lo, m))
        dense[group[take] - lo, value[take]] = share[take]
        cumulative = np.cumsum(dense - overall, axis=1)
        out[lo:hi] = np.abs(cumulative).sum(axis=1) / (m - 1)
    return out


def sensitive_diversity(
    data: pd.DataFrame,
    keys: Iterable[str] | str,
    sensitive: str,
    *,
    missing: str = "category",
    c: float = 2.0,
    ordered: bool | None = None,
    schema: Schema | None = None,
) -> Diversity:
    """Distinct, entropy and recursive l-diversity and t-closeness of a sensitive variable.

    Each record's class is the set of records its keys match (under the
    ``missing`` convention). A missing sensitive value counts as a value of
    its own. Machanavajjhala et al. (2007), §4.1-4.3; Li, Li &
    Venkatasubramanian (2007), §4.

    Parameters
    ----------
    data : DataFrame
        One file.
    keys : iterable of str
        The key variables.
    sensitive : str
        The sensitive variable (not a key).
    missing : {"category", "any"}, default "category"
        A missing key value is a category of its own, or matches any value.
    c : float, default 2.0
        The constant of recursive (c, l)-diversity (> 0).
    ordered : bool, optional
        Use the ordered distance of t-closeness (values in the variable's
        order: an ordered categorical's categories, else sorted); default:
        for a numeric or ordinal sensitive variable. Otherwise the equal
        distance.
    schema : Schema, optional
        Inferred from ``data`` when omitted.

    Returns
    -------
    Diversity
    """
    keys, schema = check_keys(data, keys, schema)
    check_columns(data, [sensitive], "sensitive")
    if sensitive in keys:
        raise ParameterError(f"sensitive variable {sensitive!r} is also a key")
    c = check_positive(c, "c")
    if ordered is None:
        ordered = schema[sensitive].kind in (Kind.NUMERIC, Kind.ORDINAL)
    groups = group_keys(key_codes(data, keys), check_missing(missing))
    codes = _sensitive_codes(data[sensitive])
    group, value, total = groups.matched_histogram(codes)
    distinct, entropy, recursive = _class_diversity(group, value, total, groups.n_groups, c)
    overall = np.bincount(codes, minlength=int(codes.max()) + 1) / len(codes)
    close = _closeness(group, value, total, groups.n_groups, overall, bool(ordered))
    index = data.index
    per = groups.group
    return Diversity(
        sensitive=sensitive,
        keys=keys,
        distinct=pd.Series(distinct[per], index=index, name="l_distinct"),
        entropy=pd.Series(entropy[per], index=index, name="l_entropy"),
        recursive=pd.Series(recursive[per], index=index, name="l_recursive"),
        closeness=pd.Series(close[per], index=index, name="t_closeness"),
        c=c,
        ordered=bool(ordered),
        l_distinct=int(distinct[per].min()),
        l_entropy=float(entropy[per].min()),
        l_recursive=int(recursive[per].min()),
        t_closeness=float(close[per].max()),
    )
