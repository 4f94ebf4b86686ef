"""Thresholds of the analysis server's confidentiality rules.

Lucero et al. (2011), "The Microdata Analysis System at the U.S. Census
Bureau" (Lucero et al. 2011), keep the real values of Gamma, Gamma*, the minimum
category size and the R-squared bound confidential (Sections 3.1.1, 3.2):
knowing them helps an intruder design queries that sit just above them. So
they are configuration, read from a YAML file or a mapping, never constants
an analyst could read in the code of a deployment. The defaults below are
public, documented starting points (see ``docs/server.md``); an agency
should choose its own and keep the file private.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from sdckit.errors import ParameterError

__all__ = ["DEFAULT_CONFIG", "RULE_SETS", "ServerConfig", "load_config"]

#: The rule sets: ``"default"`` (no refusal oracle, perturbed outputs) and
#: ``"mas2011"`` (the rules exactly as Lucero et al. 2011 state them).
RULE_SETS = ("default", "mas2011")


@dataclass(frozen=True)
class ServerConfig:
    """Every threshold the rules engine uses.

    Attributes
    ----------
    gamma : int, default 50
        Universe Gamma rule: every piece of a universe (cutpoint bins combined,
        categorical levels kept apart) must hold at least ``gamma`` units
        (Lucero et al. 2011, Section 3.1.1).
    gamma_star : int, default 25
        Gamma*: every non-empty intersection of the pieces of a joint universe
        must hold at least ``gamma_star`` units; ``gamma_star <= gamma``.
    drop_q_k : int, default 5
        Drop q rule: q is uniform on {2, ..., k} (Section 3.1.2). Larger k
        lowers the differencing risk, bounded above by 1/(k-1) (equation 6).
    min_marginal : int, default 3
        No Marginal 1 or 2 rule: an (m-1)-dimensional marginal of the
        universe's implicit table must be 0 or at least this (Section 3.1.1).
    min_cell_count : int, default 3
        A released cross-tabulation has no cell or margin in 1..min_cell_count-1.
    min_category_size : int, default 10
        A dummy (category, binary predictor, or a combination of categories in
        an interaction) needs at least this many units; sparser categories are
        absorbed into the reference (Section 3.2).
    max_predictors : int, default 20
        Most predictor variables in a regression; interactions do not count.
    approved_transformations : tuple of str, default ("square", "sqrt", "log")
        The only functions an analyst may apply to a numerical variable.
    max_interaction_order : int, default 3
        Two- and three-way interactions only.
    r_squared_max : float, default 0.95
        Regression output is suppressed when R-squared (McFadden's for logit)
        exceeds this.
    max_leverage : float, default 0.8
        Output is suppressed when one unit's leverage exceeds this: its fitted
        value is then nearly its own response (an artificial outlier,
        Bleninger et al. 2011, Section 2.1).
    exact_fit_tolerance : float, default 1e-6
        A residual smaller than this times the response's standard deviation
        (for logit: a fitted probability this close to 0 or 1) is an exact
        prediction.
    min_residual_df : int, default 10
        Fewest residual degrees of freedom a regression may have.
    max_absorption_retries : int, default 3
        How many times a refused regression is refitted after absorbing the
        sparsest remaining category into its reference (Section 3.2).
    dominance_n : int, default 2
    dominance_k : float, default 0.9
        (n, k) dominance rule for cell means: a cell's mean is suppressed when
        its ``dominance_n`` largest contributions exceed ``dominance_k`` of
        the cell's total of absolute values.
    max_universe_pieces : int, default 8
        Most simple universes in one union (bounds the intersections checked).
    residual_noise_sd : float, default 0.5
        sigma of the noise added to synthetic standardized residuals (Section 3.2.1).
    residual_max_points : int, default 5000
        Synthetic sample size cap for numerical predictors.
    residual_clip : float, default 4.0
        Synthetic standardized residuals are truncated to [-clip, clip].
    smoother_frac : float, default 0.6667
        LOWESS span for the residual smoother; wide on purpose, to avoid an
        overfit curve that would reproduce individual residuals.
    size_class_bounds : tuple of int, default (1000, 10000)
        Universe size classes released by a universe check: "small" below the
        first bound, "medium" below the second, "large" above.
    rules : {"default", "mas2011"}, default "default"
        ``"mas2011"`` applies the universe rules exactly as Lucero et al.
        (2011, Section 3.1.1) state them: a marginal passes when it is ">= 3
        OR = 0", and a Gamma refusal names the small piece. ``"default"``
        refuses with one generic reason that never tells an empty part from a
        part of one or two units (see docs/server.md, "Refusals reveal
        nothing"), and absorbs empty and sparse categories alike.
    perturbation : bool, default True
        Perturb every released count by a cell key and compute every
        magnitude with fixed secret unit weights (:mod:`sdckit.server.perturbation`),
        on top of Drop q. Off, counts and statistics are those of the Drop q
        subsample, and tables with a cell of 1 or 2 are refused instead.
    perturbation_weight_range : tuple of float, default (0.05, 0.15)
        a and b of the unit weights 1 +/- U[a, b].
    min_mean_count : int, default 10
        With perturbation, a cell mean is released only when the perturbed
        count of units with a value is at least this (so a cell of one or two
        units never shows a mean, whatever its noise).
    """

    gamma: int = 50
    gamma_star: int = 25
    drop_q_k: int = 5
    min_marginal: int = 3
    min_cell_count: int = 3
    min_category_size: int = 10
    max_predictors: int = 20
    approved_transformations: tuple[str, ...] = ("square", "sqrt", "log")
    max_interaction_order: int = 3
    r_squared_max: float = 0.95
    max_leverage: float = 0.8
    exact_fit_tolerance: float = 1e-6
    min_residual_df: int = 10
    max_absorption_retries: int = 3
    dominance_n: int = 2
    dominance_k: float = 0.9
    max_universe_pieces: int = 8
    residual_noise_sd: float = 0.5
    residual_max_points: int = 5000
    residual_clip: float = 4.0
    smoother_frac: float = 2.0 / 3.0
    size_class_bounds: tuple[int, ...] = field(default=(1000, 10000))
    rules: str = "default"
    perturbation: bool = True
    perturbation_weight_range: tuple[float, ...] = field(default=(0.05, 0.15))
    min_mean_count: int = 10

    def __post_init__(self) -> None:
        if self.rules not in RULE_SETS:
            raise ParameterError(
                f"config rules must be one of {list(RULE_SETS)}, got {self.rules!r}"
            )
        if not isinstance(self.perturbation, bool):
            raise ParameterError(
                f"config perturbation must be true or false, got {self.perturbation!r}"
            )
        wr = tuple(self.perturbation_weight_range)
        if (
            len(wr) != 2
            or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in wr)
            or not 0.0 <= wr[0] <= wr[1] < 1.0
        ):
            raise ParameterError(
                "config perturbation_weight_range must be two numbers a <= b in [0, 1), "
                f"got {list(wr)!r}"
            )
        object.__setattr__(self, "perturbation_weight_range", (float(wr[0]), float(wr[1])))
        object.__setattr__(self, "approved_transformations", tuple(self.approved_transformations))
        object.__setattr__(self, "size_class_bounds", tuple(self.size_class_bounds))
        ints = {
            "gamma": 1,
            "gamma_star": 1,
            "drop_q_k": 2,
            "min_marginal": 1,
            "min_cell_count": 1,
            "min_category_size": 1,
            "max_predictors": 1,
            "max_interaction_order": 1,
            "min_residual_df": 1,
            "max_absorption_retries": 0,
            "dominance_n": 1,
            "max_universe_pieces": 1,
            "residual_max_points": 10,
            "min_mean_count": 1,
        }
        for name, minimum in ints.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ParameterError(f"config {name} must be an integer, got {value!r}")
            if value < minimum:
                raise ParameterError(f"config {name} must be >= {minimum}, got {value}")
            object.__setattr__(self, name, int(value))
        fractions = {
            "r_squared_max": (0.0, 1.0),
            "max_leverage": (0.0, 1.0),
            "exact_fit_tolerance": (0.0, 1.0),
            "dominance_k": (0.0, 1.0),
            "smoother_frac": (0.0, 1.0),
        }
        for name, (low, high) in fractions.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ParameterError(f"config {name} must be a number, got {value!r}")
            if not low < float(value) <= high:
                raise ParameterError(f"config {name} must be in ({low}, {high}], got {value}")
            object.__setattr__(self, name, float(value))
        for name in ("residual_noise_sd", "residual_clip"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or value <= 0:
                raise ParameterError(f"config {name} must be a number > 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.gamma_star > self.gamma:
            raise ParameterError(
                f"config gamma_star ({self.gamma_star}) must not exceed gamma ({self.gamma})"
            )
        # After Drop q removes up to k units, the smallest allowed universe must
        # still hold enough units for the cell rule to mean anything.
        if self.gamma < self.drop_q_k + self.min_cell_count:
            raise ParameterError(
                f"config gamma ({self.gamma}) must be at least drop_q_k + min_cell_count "
                f"({self.drop_q_k + self.min_cell_count})"
            )
        if self.max_interaction_order > 3:
            raise ParameterError(
                "config max_interaction_order must be at most 3 (Lucero et al. 2011 allow only two- "
                f"and three-way interactions), got {self.max_interaction_order}"
            )
        known = {"square", "sqrt", "log"}
        unknown = [t for t in self.approved_transformations if t not in known]
        if unknown:
            raise ParameterError(
                f"config approved_transformations lists {unknown}; the engine implements only "
                f"{sorted(known)}"
            )
        bounds = self.size_class_bounds
        if len(bounds) != 2 or not all(
            isinstance(b, numbers.Integral) and not isinstance(b, bool) for b in bounds
        ):
            raise ParameterError(
                f"config size_class_bounds must be two integers, got {list(bounds)!r}"
            )
        if not self.gamma <= bounds[0] < bounds[1]:
            raise ParameterError(
                f"config size_class_bounds must satisfy gamma <= first < second, got {list(bounds)}"
            )

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any] | None) -> ServerConfig:
        """Build a config from a mapping; keys not given keep their defaults."""
        if mapping is None:
            return cls()
        if not isinstance(mapping, Mapping):
            raise ParameterError(f"config must be a mapping, got {type(mapping).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(mapping) - names)
        if unknown:
            raise ParameterError(f"unknown config key(s) {unknown}; known keys: {sorted(names)}")
        return cls(**dict(mapping))

    @classmethod
    def from_yaml(cls, path: str | Path) -> ServerConfig:
        """Read a config from a YAML file holding a mapping of the keys above."""
        loaded = read_yaml(path, "config")
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, Mapping):
            raise ParameterError(
                f"config file {path} must hold a mapping, got {type(loaded).__name__}"
            )
        return cls.from_dict(loaded)

    def to_dict(self) -> dict[str, Any]:
        """Plain mapping of every threshold (for a private config file, never for analysts)."""
        out = asdict(self)
        out["approved_transformations"] = list(self.approved_transformations)
        out["size_class_bounds"] = list(self.size_class_bounds)
        out["perturbation_weight_range"] = list(self.perturbation_weight_range)
        return out

    def size_class(self, n: int) -> str:
        """The public size class of a universe of ``n`` units (never the count itself)."""
        small, medium = self.size_class_bounds
        if n < small:
            return "small"
        if n < medium:
            return "medium"
        return "large"


DEFAULT_CONFIG = ServerConfig()


def read_yaml(path: str | Path, what: str) -> Any:
    """The content of a YAML file, or a :class:`ParameterError` naming it when it is missing.

    Parameters
    ----------
    path : path
        The file.
    what : str
        What it holds ("config", "metadata"), for the message.

    Returns
    -------
    object
        What ``yaml.safe_load`` read (None for an empty file).
    """
    path = Path(path)
    if not path.exists():
        raise ParameterError(f"{what} file {path} does not exist")
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def load_config(config: ServerConfig | Mapping[str, Any] | str | Path | None) -> ServerConfig:
    """A :class:`ServerConfig` from a config, a mapping, a YAML path, or ``None`` (defaults).

    Parameters
    ----------
    config : ServerConfig, mapping, str, Path or None
        The thresholds, or where to read them.

    Returns
    -------
    ServerConfig
    """
    if config is None:
        return DEFAULT_CONFIG
    if isinstance(config, ServerConfig):
        return config
    if isinstance(config, str | Path):
        return ServerConfig.from_yaml(config)
    if isinstance(config, Mapping):
        return ServerConfig.from_dict(config)
    raise ParameterError(
        f"config must be a ServerConfig, a mapping or a YAML path, got {type(config).__name__}"
    )
