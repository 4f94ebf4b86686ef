"""Differencing and padding attacks on an analysis server (Lucero et al. 2011, §3.1-§4).

The intruder knows, for a target unit ``t``, the level ``c`` of a
categorical variable ``X`` and the cutpoint bin ``j`` of a continuous
variable ``Z`` (both public in the server's metadata), and that ``t`` is the
only unit of the whole file in that cell (:func:`find_cell_targets` finds
such units in the confidential file, which the intruder would know from a
public register). She never reads the server's data: every query goes
through ``target.ask`` (:class:`~sdckit.attacks.targets.LibraryServer` or
:class:`~sdckit.attacks.client.ServiceTarget`), as an analyst's would.

The battery (:func:`server_attack`), each attack a pair or a triple of
universes whose difference is the target's cell:

* *narrow condition*: ``X = c`` against ``X = c AND Z in bins (all but j)``;
* *complementary conditions*: everyone against the complement of the cell,
  ``X in (other levels) OR Z in bins (all but j)``;
* *third universe*: ``X = c``, ``Z in bin j`` and their union, whose
  inclusion-exclusion gives the cell's total;
* *regression intercept*: the narrow pair through ``sensitive ~ Z``, whose
  fit passes through the means (``ȳ = b0 + b1 z̄``, ``z̄`` from a table of
  means of ``Z``) and reports its number of units;
* *padding* (Lucero et al. 2011, §3.1.2 and §4, the attack Drop q does
  not stop): a narrow pair on a small piece of the target's row (its bin
  and other bins of the row adding up to about 100 units), each universe
  joined with the same large piece of the commonest other level, the
  padding and the other bins varied from pair to pair so that Drop q
  mostly removes padding; the intruder takes the value
  on which most of her estimates agree (within 0.5%) after 1, 2, 5, ...
  pairs — the success rate as a function of the number of queries;
* *repeated queries*: the same universe asked again and rewritten in
  equivalent forms; averaging helps only if the answers differ;
* *residual of a variable*: ``ALL`` minus every level of a categorical
  variable the server answers alone leaves its rare levels and the units
  missing it, though no universe ever names them; where the intruder knows
  that residual holds one or two units (she knows the population), the
  difference of the totals is their value. Each query passes the universe
  rules on its own.

From a pair she takes ``n1 m1 - n2 m2`` of the row ``X = c`` of a
cross-tabulation with the mean of the sensitive variable (the cell's total,
``y_t``), and ``n1 - n2`` (the cell's count, 1: she learns the target is
there).

**What counts as learned** is what the intruder can recognise, not what an
oracle holding the truth sees. Every attack asks for several *independent*
estimates of the same target: the narrow, complementary, third-universe and
regression-intercept attacks each difference :data:`VARIANTS` different
universe pairs whose difference is the target's cell (the second leaves a
further bin of the target's row out of both universes), the padding attack
its padded pairs. Estimates computed from identical answers (the same unit
sets asked again) count once. An attack *learns* a target's value when at
least two distinct estimates agree within :data:`AGREEMENT` (0.5%) of one
another — the value most of them agree on, as the padding attack's reading
already was — and that value is within 1% of ``y_t``. A single estimate
that lands within 1% is only the *oracle's* view (``oracle_recovered``):
against a perturbed server such hits are noise that now and then falls near
the truth, and the intruder cannot tell the one hit from the misses around
it; an exact server answers every variant with the same true value, so
agreement is what exactness looks like from outside. This is Lucero et al.
(2011, §4)'s framing of the padding attack — risk is what repeated,
differently padded queries let the intruder *confirm* — applied to every
attack. A count is learned when a released count is 1 or 2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from sdckit._results import FrozenResult
from sdckit._validation import check_dataframe, check_random_state, plain_value
from sdckit.attacks.regression import RECOVERY_TOLERANCE
from sdckit.attacks.targets import PublicMetadata, quote_level
from sdckit.errors import DataError, ParameterError, SchemaError

__all__ = [
    "PADDING_QUERY_COUNTS",
    "CellTarget",
    "ServerAttackResult",
    "find_cell_targets",
    "server_attack",
]

#: Numbers of padded pairs after which the padding attack's success is measured.
PADDING_QUERY_COUNTS = (1, 2, 5, 10, 20, 40)

_ATTACKS = (
    "narrow condition",
    "complementary conditions",
    "third universe",
    "regression intercept",
    "padding",
    "repeated queries",
    "residual of a variable",
)

#: Units of the target's row a padded universe keeps besides the target (twice the default Gamma).
_PIECE = 100

#: Two estimates of the same target agree when within this share of each other.
AGREEMENT = 0.005

#: Independent universe pairs (or triples) each single-pair attack differences per target.
VARIANTS = 2


@dataclass(frozen=True)
class CellTarget:
    """A unit alone in its cell of a categorical variable by a continuous variable's cutpoint bin.

    ``position`` is the unit's 0-based row position in the confidential file
    (``row`` the 1-based row a spreadsheet shows); ``value`` its sensitive
    value, the truth the attacks are scored against.
    """

    position: int
    category: str
    level: Any
    numeric: str
    bin: int
    value: float

    @property
    def row(self) -> int:
        """The target's row as a spreadsheet shows it (1-based)."""
        return self.position + 1


def _bins(metadata: PublicMetadata, name: str, values: np.ndarray) -> np.ndarray:
    edges = np.asarray(metadata.variables[name]["cutpoints"]["inner_edges"], dtype=float)
    out = np.searchsorted(edges, values, side="right")
    return np.where(np.isnan(values), -1, out)


def find_cell_targets(
    data: pd.DataFrame,
    metadata: PublicMetadata,
    *,
    sensitive: str,
    max_targets: int = 6,
    random_state: Any = None,
) -> list[CellTarget]:
    """Units alone in a cell (level of a categorical variable x bin of a continuous one).

    The cells come from the public metadata only (levels and inner
    cutpoints); the counts from the confidential file, as an intruder who
    knows the population would know them. Cells whose row (the level) is
    largest come first: their universes pass the size rules most easily.

    Parameters
    ----------
    data : DataFrame
        The confidential file.
    metadata : PublicMetadata
        The server's public metadata.
    sensitive : str
        The numeric variable whose value the attacks try to learn.
    max_targets : int, default 6
        Most targets returned.
    random_state : None, int or numpy.random.Generator
        Breaks ties between equally good candidates.

    Returns
    -------
    list of CellTarget
        Possibly empty (no unit is alone in any such cell).
    """
    check_dataframe(data, "data")
    if sensitive not in data.columns:
        raise SchemaError(f"sensitive: column {sensitive!r} is not in the data")
    if not pd.api.types.is_numeric_dtype(data[sensitive].dtype):
        raise DataError(f"sensitive: column {sensitive!r} is not numeric")
    if isinstance(max_targets, bool) or int(max_targets) < 1:
        raise ParameterError(f"max_targets must be a positive integer, got {max_targets!r}")
    rng = check_random_state(random_state)
    y = data[sensitive].to_numpy(dtype=float)
    usable = [v for v in metadata.variables if v in data.columns and v != sensitive]
    categorical = [v for v in usable if metadata.is_categorical(v)]
    continuous = [v for v in usable if not metadata.is_categorical(v)]
    candidates: list[tuple[int, float, CellTarget]] = []
    for x in categorical:
        levels = data[x].astype(object)
        for z in continuous:
            bins = _bins(metadata, z, data[z].to_numpy(dtype=float))
            frame = pd.DataFrame({"level": levels, "bin": bins, "pos": np.arange(len(data))})
            frame = frame[(frame["bin"] >= 0) & frame["level"].notna()]
            counts = frame.groupby(["level", "bin"], sort=False)["pos"].agg(["size", "first"])
            rows = frame.groupby("level", sort=False).size()
            for (level, b), (size, first) in counts.iterrows():
                if size != 1 or not np.isfinite(y[first]) or y[first] == 0:
                    continue
                target = CellTarget(int(first), x, plain_value(level), z, int(b), float(y[first]))
                candidates.append((int(rows[level]), float(rng.random()), target))
    candidates.sort(key=lambda c: (-c[0], c[1]))
    chosen = [t for _, _, t in candidates[: int(max_targets)]]
    return chosen


# ---------------------------------------------------------------------------
# Universes in the server's language
# ---------------------------------------------------------------------------


def _levels(values: Sequence[Any]) -> str:
    return "{" + ", ".join(quote_level(str(plain_value(v))) for v in values) + "}"


def _bin_list(bins: Sequence[int]) -> str:
    return ", ".join(str(b) for b in bins)


@dataclass(frozen=True)
class _Cell:
    t: CellTarget
    levels: tuple[Any, ...]
    n_bins: int
    padding_level: Any
    row_bins: Mapping[int, int]

    @property
    def level(self) -> str:
        return f"{self.t.category} in {_levels([self.t.level])}"

    def other_bins(self, leave: Sequence[int] = ()) -> list[int]:
        return [b for b in range(self.n_bins) if b != self.t.bin and b not in leave]

    def row(self, leave: Sequence[int] = ()) -> str:
        """The target's row, without the bins ``leave`` (the whole row when none)."""
        if not leave:
            return self.level
        kept = [b for b in range(self.n_bins) if b not in leave]
        return f"{self.level} AND {self.t.numeric} in bins {_bin_list(kept)}"

    def without(self, bins: Sequence[int] | None = None) -> str:
        chosen = self.other_bins() if bins is None else bins
        return f"{self.level} AND {self.t.numeric} in bins {_bin_list(chosen)}"

    def leave_outs(self, rng: np.random.Generator) -> list[tuple[int, ...]]:
        """Bins each variant leaves out of both universes: none, then populated bins of the row.

        A left-out bin must hold units of the row, so that each variant's
        universes are different unit sets (fresh answers from a keyed server).
        """
        populated = [b for b in self.other_bins() if self.row_bins.get(b, 0) > 0]
        chosen = [int(b) for b in rng.permutation(populated)[: VARIANTS - 1]] if populated else []
        return [(), *((b,) for b in chosen)]


# ---------------------------------------------------------------------------
# Reading answers
# ---------------------------------------------------------------------------


def _row_index(answer: Mapping[str, Any], level: Any) -> int | None:
    labels = [str(v) for v in answer.get("row_labels", [])]
    text = str(plain_value(level))
    return labels.index(text) if text in labels else None


def _row_total(answer: Mapping[str, Any], level: Any) -> tuple[float, float] | None:
    """(count, mean) of the row of ``level``: None when refused, suppressed or absent."""
    if answer.get("status") != "ok":
        return None
    i = _row_index(answer, level)
    if i is None:
        return (0.0, 0.0)
    n = answer["row_totals"][i]
    mean = answer.get("row_means", [None] * (i + 1))[i]
    if n is None or (mean is None and n):
        return None
    return float(n), float(mean or 0.0)


def _counts(answer: Mapping[str, Any]) -> list[float]:
    if answer.get("status") != "ok":
        return []
    if "row_totals" in answer:
        out = [c for row in answer["counts"] for c in row]
        out += [*answer["row_totals"], *answer["col_totals"], answer["total"]]
        return [float(c) for c in out if c is not None]
    return [float(answer["n_obs"])] if answer.get("n_obs") is not None else []


# ---------------------------------------------------------------------------
# The battery
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The battery
# ---------------------------------------------------------------------------


@dataclass
class _Tally:
    queries: int = 0
    answered: int = 0
    estimates: list[float] = field(default_factory=list)
    count_differences: list[float] = field(default_factory=list)
    small_counts: int = 0
    reasons: set[str] = field(default_factory=set)

    def take(self, answer: Mapping[str, Any]) -> Mapping[str, Any]:
        self.queries += 1
        if answer.get("status") == "ok":
            self.answered += 1
            self.small_counts += sum(1 for c in _counts(answer) if c in (1.0, 2.0))
        else:
            for r in answer.get("refusals", []):
                self.reasons.add(str(r.get("rule")))
        return answer

    def record(
        self, found: dict[Any, float], key: Any, estimate: float, count_difference: float
    ) -> None:
        """Keep one estimate of the target; estimates from identical answers count once."""
        if key in found:
            return
        found[key] = estimate
        self.estimates.append(estimate)
        self.count_differences.append(count_difference)


def _crosstab(ask: Callable[..., Any], tally: _Tally, universe: str, rows: str, mean_of: str):
    return tally.take(ask("crosstab", {"universe": universe, "rows": rows, "mean_of": mean_of}))


def _pair_estimate(
    ask: Callable[..., Any],
    tally: _Tally,
    found: dict[Any, float],
    cell: _Cell,
    sensitive: str,
    u1: str,
    u2: str,
) -> None:
    """Record ``n1 m1 - n2 m2`` of the target's row in ``found`` unless either answer is missing."""
    a = _row_total(_crosstab(ask, tally, u1, cell.t.category, sensitive), cell.t.level)
    b = _row_total(_crosstab(ask, tally, u2, cell.t.category, sensitive), cell.t.level)
    if a is not None and b is not None:
        tally.record(found, (a, b), a[0] * a[1] - b[0] * b[1], a[0] - b[0])


def _regression_mean(
    ask: Callable[..., Any], tally: _Tally, cell: _Cell, sensitive: str, universe: str
) -> tuple[float, float] | None:
    fit = tally.take(
        ask("regression", {"universe": universe, "formula": f"{sensitive} ~ {cell.t.numeric}"})
    )
    table = _row_total(
        _crosstab(ask, tally, universe, cell.t.category, cell.t.numeric), cell.t.level
    )
    if fit.get("status") != "ok" or table is None:
        return None
    beta = {c["term"]: float(c["estimate"]) for c in fit["coefficients"]}
    mean = beta.get("Intercept", 0.0) + beta.get(cell.t.numeric, 0.0) * table[1]
    return float(fit["n_obs"]), mean


def agreed_value(values: Sequence[float]) -> float | None:
    """The value at least two estimates agree on, or None when the intruder cannot tell one.

    Two estimates agree when they are within :data:`AGREEMENT` of each
    other. The value is the estimate with the most others agreeing with it;
    when no two agree, or when two values apart are equally supported, the
    intruder has no value she can recognise (Lucero et al. 2011, §4: what
    differently padded queries confirm).

    Parameters
    ----------
    values : sequence of float
        Distinct estimates of one target's value.

    Returns
    -------
    float or None
    """
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return None
    support = np.array([(np.abs(v - x) <= AGREEMENT * abs(x)).sum() for x in v])
    best = int(np.argmax(support))
    centre = v[best]
    rivals = (support == support[best]) & (np.abs(v - centre) > 2 * AGREEMENT * abs(centre))
    if support[best] < 2 or rivals.any():
        return None
    return float(centre)


def _close(estimate: float, truth: float) -> bool:
    return bool(abs(estimate - truth) <= RECOVERY_TOLERANCE * abs(truth))


def _score(values: Sequence[float], truth: float) -> tuple[bool, bool]:
    """(learned, oracle hit): an agreed value within 1%, and any single estimate within 1%."""
    agreed = agreed_value(values)
    return (
        agreed is not None and _close(agreed, truth),
        any(_close(v, truth) for v in values),
    )


def _padding(
    pair: Callable[[str, str], None],
    found: Mapping[Any, float],
    cell: _Cell,
    n_pairs: int,
    rng: np.random.Generator,
) -> list[int]:
    """Ask ``n_pairs`` padded pairs through ``pair``, padding and other bins drawn afresh each time.

    Returns, after each pair, how many distinct estimates ``found`` holds.
    """
    others = cell.other_bins()
    sizes = []
    for _ in range(n_pairs):
        # The target's piece: other bins of its row, drawn in random order until the piece
        # holds _PIECE units (the intruder knows the population), so Drop q rarely touches it.
        keep: list[int] = []
        for b in rng.permutation(others):
            keep.append(int(b))
            if sum(cell.row_bins.get(k, 0) for k in keep) >= _PIECE:
                break
        keep.sort()
        pad_bins = sorted(
            int(b) for b in rng.choice(cell.n_bins, max(1, cell.n_bins // 2), replace=False)
        )
        pad = (
            f"{cell.t.category} in {_levels([cell.padding_level])} AND "
            f"{cell.t.numeric} in bins {_bin_list(pad_bins)}"
        )
        pair(
            f"{cell.without(sorted([*keep, cell.t.bin]))} OR {pad}",
            f"{cell.without(keep)} OR {pad}",
        )
        sizes.append(len(found))
    return sizes


@dataclass(frozen=True)
class ServerAttackResult(FrozenResult):
    """What the differencing and padding battery learned from one server.

    ``table`` has one row per attack: ``queries`` sent, ``answered`` (share),
    ``targets``, ``learned`` (share of targets whose value the intruder can
    recognise: at least two distinct estimates agree within 0.5% and the
    value they agree on is within 1% of the truth; module docstring),
    ``oracle_recovered`` (share of targets of which some single estimate
    came within 1%: what an oracle holding the truth sees, not a
    disclosure), ``estimates`` (distinct estimates per target, on
    average), ``pairs`` (pairs or triples of universes answered whole),
    ``presence`` (share of those whose count difference was exactly 1, the
    target's cell count), ``small_counts`` (released counts of 1 or 2),
    ``median_error`` (median relative error of the estimates) and
    ``refused_by`` (the rules that refused). ``padding_curve`` has, for
    each number of padded pairs, the share of targets learned and the
    oracle's share.
    """

    table: pd.DataFrame
    padding_curve: pd.DataFrame
    targets: tuple[CellTarget, ...]
    target: str

    @property
    def learned(self) -> pd.DataFrame:
        """The rows of attacks that learned a value the intruder can recognise, or a count of 1-2."""
        t = self.table
        return t[(t["learned"] > 0) | (t["small_counts"] > 0)]

    def summary(self) -> str:
        """The verdict first, then the table and the padding curve.

        Returns
        -------
        str
        """
        learned = self.learned
        n = len(self.targets)
        if n == 0:
            first = (
                f"Nothing was attacked: no unit is alone in a cell of a categorical variable by "
                f"a cutpoint bin of a continuous one, so the battery has no target on the "
                f"{self.target}."
            )
        elif learned.empty:
            first = (
                f"No differencing or padding attack learned a confidential value or a count "
                f"of 1 or 2 units from the {self.target} ({n} targets alone in their cells)."
            )
            hits = self.table[self.table["oracle_recovered"] > 0]
            if len(hits):
                first += (
                    f" Single estimates of {', '.join(hits['attack'])} fell within 1% of a "
                    "true value, unconfirmed by any other estimate: chance hits the intruder "
                    "cannot tell from the misses (oracle_recovered)."
                )
        else:
            first = (
                f"{len(learned)} of {len(self.table)} attacks learned from the {self.target}: "
                + "; ".join(
                    f"{r.attack} recovered {r.learned:.0%} of {r.targets} targets' values"
                    + (f" and released {r.small_counts} counts of 1 or 2" if r.small_counts else "")
                    for r in learned.itertuples()
                )
                + " (confirmed by agreeing estimates)."
            )
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            return "\n".join(
                [
                    first,
                    "",
                    self.table.to_string(index=False),
                    "",
                    "padding: share of targets learned (two estimates agree, within 1%) and the "
                    "oracle's share (some estimate within 1%) after k pairs",
                    self.padding_curve.to_string(index=False),
                ]
            )


def server_attack(
    data: pd.DataFrame,
    *,
    target: Any,
    sensitive: str,
    targets: Sequence[CellTarget] | None = None,
    max_targets: int = 6,
    padding_pairs: int = 40,
    repeats: int = 5,
    random_state: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> ServerAttackResult:
    """Run the differencing and padding battery (module docstring) against a server.

    Parameters
    ----------
    data : DataFrame
        The confidential file: the intruder's background knowledge (which
        units are alone in which cell) and the truth answers are scored
        against. The server never sees it through this function.
    target : LibraryServer or ServiceTarget
        The server, reached through its ``ask(analysis, body)`` door.
    sensitive : str
        A continuous variable of the server's metadata.
    targets : sequence of CellTarget, optional
        The units attacked (default :func:`find_cell_targets`).
    max_targets : int, default 6
        Targets found when ``targets`` is not given.
    padding_pairs : int, default 40
        Padded pairs per target (the padding curve stops there).
    repeats : int, default 5
        Times the repeated-queries attack asks the same universe.
    random_state : None, int or numpy.random.Generator
        Draws the padding.
    progress : callable, optional
        Called as ``progress(done, total)`` after each target.

    Returns
    -------
    ServerAttackResult
    """
    ask = getattr(target, "ask", None)
    if not callable(ask):
        raise ParameterError(
            f"target must be a server with an ask(analysis, body) method "
            f"(LibraryServer or ServiceTarget), got {type(target).__name__}"
        )
    metadata: PublicMetadata = target.metadata
    if sensitive not in metadata.variables or metadata.is_categorical(sensitive):
        raise SchemaError(
            f"sensitive: {sensitive!r} is not a continuous variable the server offers"
        )
    for name, value in (("padding_pairs", padding_pairs), ("repeats", repeats)):
        if isinstance(value, bool) or int(value) < 1:
            raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    rng = check_random_state(random_state)
    if targets is None:
        targets = find_cell_targets(
            data, metadata, sensitive=sensitive, max_targets=max_targets, random_state=rng
        )
    tallies = {name: _Tally() for name in _ATTACKS}
    learned = {name: 0 for name in _ATTACKS}
    oracle = {name: 0 for name in _ATTACKS}
    counted = {name: 0 for name in _ATTACKS}
    errors: dict[str, list[float]] = {name: [] for name in _ATTACKS}
    curve = np.zeros((2, len(PADDING_QUERY_COUNTS)))
    for done, t in enumerate(targets):
        cell = _target_cell(data, metadata, t)
        found: dict[str, dict[Any, float]] = {name: {} for name in _ATTACKS}
        for leave in cell.leave_outs(rng):
            _variant(ask, tallies, found, cell, sensitive, leave)
        pair = partial(_pair_estimate, ask, tallies["padding"], found["padding"], cell, sensitive)
        sizes = _padding(pair, found["padding"], cell, int(padding_pairs), rng)
        padded = list(found["padding"].values())
        for i, k in enumerate(PADDING_QUERY_COUNTS):
            so_far = padded[: sizes[min(k, len(sizes)) - 1]]
            curve[:, i] += _score(so_far, t.value)
        _repeated(ask, tallies["repeated queries"], cell, sensitive, int(repeats))
        for name, estimates in found.items():
            values = list(estimates.values())
            errors[name] += [abs(v - t.value) / abs(t.value) for v in values]
            hit, seen = _score(values, t.value)
            learned[name] += hit
            oracle[name] += seen
            counted[name] += len(values)
        if progress is not None:
            progress(done + 1, len(targets))
    residuals = _residual_attack(
        ask, tallies["residual of a variable"], data, metadata, sensitive, errors
    )
    for hit, seen, count in residuals:
        learned["residual of a variable"] += hit
        oracle["residual of a variable"] += seen
        counted["residual of a variable"] += count
    rows = []
    for name in _ATTACKS:
        n_targets = len(residuals) if name == "residual of a variable" else len(targets)
        n = max(n_targets, 1)
        tally = tallies[name]
        diffs = np.asarray(tally.count_differences, dtype=float)
        repeated = name == "repeated queries"
        rows.append(
            {
                "attack": name,
                "queries": tally.queries,
                "answered": tally.answered / tally.queries if tally.queries else float("nan"),
                "targets": n_targets,
                "learned": learned[name] / n,
                "oracle_recovered": oracle[name] / n,
                "estimates": counted[name] / n,
                "pairs": int(diffs.size) if not repeated else 0,
                "presence": float(np.mean(diffs == 1.0)) if not repeated and diffs.size else 0.0,
                "small_counts": tally.small_counts,
                "median_error": float(np.median(errors[name])) if errors[name] else float("nan"),
                "distinct_answers": int(diffs.max()) if repeated and diffs.size else None,
                "refused_by": ", ".join(sorted(tally.reasons)),
            }
        )
    padding_curve = pd.DataFrame(
        {
            "pairs": [min(k, int(padding_pairs)) for k in PADDING_QUERY_COUNTS],
            "learned": curve[0] / max(len(targets), 1),
            "oracle_recovered": curve[1] / max(len(targets), 1),
        }
    ).drop_duplicates("pairs")
    table = pd.DataFrame(rows)
    table["distinct_answers"] = table["distinct_answers"].astype("Int64")
    return ServerAttackResult(table, padding_curve, tuple(targets), str(target.name))


def _target_cell(data: pd.DataFrame, metadata: PublicMetadata, t: CellTarget) -> _Cell:
    """The target's cell, with the padding level and the row's units by bin (from the file)."""
    # The padding: the commonest other level, as an intruder who knows the population picks it.
    common = data[t.category].astype(object).value_counts()
    common = common[[str(v) != str(t.level) for v in common.index]]
    in_row = data[t.category].astype(object).map(str) == str(t.level)
    row_bins = pd.Series(
        _bins(metadata, t.numeric, data.loc[in_row.to_numpy(), t.numeric].to_numpy(dtype=float))
    ).value_counts()
    return _Cell(
        t,
        tuple(metadata.variables[t.category]["levels"]),
        metadata.n_bins(t.numeric),
        plain_value(common.index[0]),
        {int(b): int(c) for b, c in row_bins.items()},
    )


def _variant(
    ask: Callable[..., Any],
    tallies: Mapping[str, _Tally],
    found: Mapping[str, dict[Any, float]],
    cell: _Cell,
    sensitive: str,
    leave: Sequence[int],
) -> None:
    """One variant of the four single-pair attacks: both universes without the bins ``leave``."""
    t, cat = cell.t, cell.t.category
    others = [v for v in cell.levels if str(v) != str(t.level)]
    row, narrow = cell.row(leave), cell.without(cell.other_bins(leave))
    _pair_estimate(
        ask, tallies["narrow condition"], found["narrow condition"], cell, sensitive, row, narrow
    )
    everyone = "ALL" if not leave else (
        f"{cat} in {_levels(others)} OR {t.numeric} in bins "
        f"{_bin_list([b for b in range(cell.n_bins) if b not in leave])}"
    )  # fmt: skip
    complement = (
        f"{cat} in {_levels(others)} OR {t.numeric} in bins {_bin_list(cell.other_bins(leave))}"
    )
    _pair_estimate(
        ask,
        tallies["complementary conditions"],
        found["complementary conditions"],
        cell,
        sensitive,
        everyone,
        complement,
    )
    tally = tallies["third universe"]
    parts = [
        _row_total(_crosstab(ask, tally, u, cat, sensitive), t.level)
        for u in (row, f"{t.numeric} in bins {t.bin}", f"{row} OR {t.numeric} in bins {t.bin}")
    ]
    if all(p is not None for p in parts):
        (na, ma), (nb, mb), (nu, mu) = (p for p in parts if p is not None)
        tally.record(
            found["third universe"], tuple(parts), na * ma + nb * mb - nu * mu, na + nb - nu
        )
    tally = tallies["regression intercept"]
    first = _regression_mean(ask, tally, cell, sensitive, row)
    second = _regression_mean(ask, tally, cell, sensitive, narrow)
    if first is not None and second is not None:
        tally.record(
            found["regression intercept"],
            (first, second),
            first[0] * first[1] - second[0] * second[1],
            first[0] - second[0],
        )


def _repeated(
    ask: Callable[..., Any], tally: _Tally, cell: _Cell, sensitive: str, repeats: int
) -> None:
    """The same universe asked again and rewritten: the number of distinct answers."""
    t, level = cell.t, cell.level
    rewrites = [level] * repeats + [
        f"{level} AND {t.numeric} in bins {_bin_list(range(cell.n_bins))}",
        f"{level} AND {t.category} in {_levels(cell.levels)}",
    ]
    answers = [
        _row_total(_crosstab(ask, tally, u, t.category, sensitive), t.level) for u in rewrites
    ]
    # Averaging helps only when answers differ; the intruder's best is then their mean.
    tally.count_differences.append(float(len({a for a in answers if a is not None})))


def _residual_variables(data: pd.DataFrame, metadata: PublicMetadata, sensitive: str) -> list[str]:
    """Categorical variables whose units missing it and rarest levels could number 1 or 2.

    The intruder knows the population's counts: if the units missing a
    variable, together with its rarest levels up to some size, number one or
    two, a server that answers every larger level alone leaves exactly them
    in ``ALL`` minus those levels. Only such variables are worth probing.
    """
    out = []
    for name in metadata.variables:
        if name == sensitive or name not in data.columns or not metadata.is_categorical(name):
            continue
        values = data[name].astype(object)
        counts = np.sort(values.value_counts().to_numpy())
        cumulative = int(values.isna().sum()) + np.concatenate([[0], np.cumsum(counts)])
        if ((cumulative >= 1) & (cumulative <= 2)).any():
            out.append(str(name))
    return out


def _table_total(answer: Mapping[str, Any]) -> tuple[float, float] | None:
    """(units, total) of a table with the mean of the sensitive variable, or None."""
    if answer.get("status") != "ok":
        return None
    total = 0.0
    for n, mean in zip(answer["row_totals"], answer.get("row_means", []), strict=False):
        if n is None or (n and mean is None):
            return None
        total += float(n) * float(mean or 0.0)
    return float(answer["total"]), total


def _residual_attack(
    ask: Callable[..., Any],
    tally: _Tally,
    data: pd.DataFrame,
    metadata: PublicMetadata,
    sensitive: str,
    errors: dict[str, list[float]],
) -> list[tuple[bool, bool, int]]:
    """``ALL`` minus every level answered alone, for each variable whose residual is 1-2 units.

    The intruder probes every level of a candidate variable ``X`` alone (a
    table by the categorical variable ``B`` with the fewest levels, with the
    mean of ``sensitive``), keeps the answered levels, and, when the units
    outside them number 1 or 2 (she knows the population), estimates their
    total twice: ``ALL`` minus the answered levels, and the same within each
    level ``b`` of ``B`` (``B = b`` minus ``X = l AND B = b``), whose unit sets
    are all different. Returns (learned, oracle hit, estimates) per target.
    """
    y = data[sensitive].to_numpy(dtype=float)
    categorical = [v for v in metadata.variables if metadata.is_categorical(v)]
    answers: dict[tuple[str, str], tuple[float, float] | None] = {}

    def total(universe: str, by: str) -> tuple[float, float] | None:
        if (universe, by) not in answers:
            answers[(universe, by)] = _table_total(_crosstab(ask, tally, universe, by, sensitive))
        return answers[(universe, by)]

    out = []
    for name in _residual_variables(data, metadata, sensitive):
        rows_by = [v for v in categorical if v != name and v in data.columns]
        if not rows_by:
            continue
        by = min(rows_by, key=lambda v: len(metadata.variables[v]["levels"]))
        levels = [f"{name} in {_levels([v])}" for v in metadata.variables[name]["levels"]]
        answered = [str(v) for v, u in zip(metadata.variables[name]["levels"], levels, strict=True)
                    if total(u, by) is not None]  # fmt: skip
        residual = ~data[name].astype(object).map(str).isin(answered).to_numpy() & np.isfinite(y)
        residual &= data[by].notna().to_numpy()
        if not 1 <= int(residual.sum()) <= 2:
            continue
        truth = float(y[residual].sum())
        found: dict[Any, float] = {}
        kept = [f"{name} in {_levels([v])}" for v in answered]
        within = [(f"{by} in {_levels([b])}", f" AND {by} in {_levels([b])}")
                  for b in metadata.variables[by]["levels"]]  # fmt: skip
        splits = [[("ALL", "")], within]
        for split in splits:
            pieces = [
                (total(whole, by), [total(u + extra, by) for u in kept]) for whole, extra in split
            ]
            if any(w is None or any(p is None for p in parts) for w, parts in pieces):
                continue
            units = value = 0.0
            for w, parts in pieces:
                assert w is not None  # checked above
                units += w[0] - sum(p[0] for p in parts if p is not None)
                value += w[1] - sum(p[1] for p in parts if p is not None)
            tally.record(found, tuple(split), value, units)
        estimates = list(found.values())
        if truth != 0:
            errors["residual of a variable"] += [abs(v - truth) / abs(truth) for v in estimates]
        hit, seen = _score(estimates, truth) if truth != 0 else (False, False)
        out.append((hit, seen, len(estimates)))
    return out
