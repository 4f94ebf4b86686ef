"""The intruder's lab: attacks on what sdckit releases.

Regression attacks through artificial outliers and strategic dummies
(Bleninger, Drechsler & Ronning 2011) against a naive OLS server, sdckit's
analysis server and masked files (:mod:`sdckit.attacks.regression`,
:mod:`sdckit.attacks.targets`), and record linkage on masked files, nearest
record and one-to-one optimal assignment (:mod:`sdckit.attacks.linkage`),
and differencing and padding between universes of an analysis server
(Lucero et al. 2011; :mod:`sdckit.attacks.differencing`), and attacks on
cell-key tables (Giessing & Höhne 2011, §5; :mod:`sdckit.attacks.tables`).
"""

from sdckit.attacks.differencing import (
    PADDING_QUERY_COUNTS,
    CellTarget,
    ServerAttackResult,
    find_cell_targets,
    server_attack,
)
from sdckit.attacks.linkage import LinkageAttackResult, linkage_attack
from sdckit.attacks.regression import (
    DEFAULT_QUANTILES,
    RECOVERY_TOLERANCE,
    RegressionAttackResult,
    artificial_outlier,
    dummy_mean_isolates,
    dummy_variance_isolates,
    isolated_dummy_variance,
    outlier_distance,
    quantile_subsets,
    recover_value,
    regression_attack,
    strategic_dummy,
    unique_maximum,
)
from sdckit.attacks.tables import (
    AveragingAttackResult,
    IntervalAttackResult,
    OverlapAttackResult,
    averaging_attack,
    interval_attack,
    overlap_differencing_attack,
    shared_cells,
)
from sdckit.attacks.targets import (
    Answer,
    ArtificialOutlier,
    Factor,
    LibraryServer,
    MaskedRelease,
    NaiveServer,
    PublicMetadata,
    Refused,
    RegressionQuery,
    StrategicDummy,
    Target,
    Variable,
    attack,
    universe_text,
)

__all__ = [
    "DEFAULT_QUANTILES",
    "PADDING_QUERY_COUNTS",
    "RECOVERY_TOLERANCE",
    "Answer",
    "ArtificialOutlier",
    "AveragingAttackResult",
    "CellTarget",
    "Factor",
    "IntervalAttackResult",
    "LibraryServer",
    "LinkageAttackResult",
    "MaskedRelease",
    "NaiveServer",
    "OverlapAttackResult",
    "PublicMetadata",
    "Refused",
    "RegressionAttackResult",
    "RegressionQuery",
    "ServerAttackResult",
    "StrategicDummy",
    "Target",
    "Variable",
    "artificial_outlier",
    "attack",
    "averaging_attack",
    "dummy_mean_isolates",
    "dummy_variance_isolates",
    "find_cell_targets",
    "interval_attack",
    "isolated_dummy_variance",
    "linkage_attack",
    "outlier_distance",
    "overlap_differencing_attack",
    "quantile_subsets",
    "recover_value",
    "regression_attack",
    "server_attack",
    "shared_cells",
    "strategic_dummy",
    "unique_maximum",
    "universe_text",
]
