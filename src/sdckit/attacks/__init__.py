"""The intruder's lab: attacks on what sdckit releases.

Regression attacks through artificial outliers and strategic dummies
(Bleninger, Drechsler & Ronning 2011) against a naive OLS server, sdckit's
analysis server and masked files (:mod:`sdckit.attacks.regression`,
:mod:`sdckit.attacks.targets`), and record linkage on masked files, nearest
record and one-to-one optimal assignment (:mod:`sdckit.attacks.linkage`),
prediction of the sensitive value from the quasi-identifiers of a masked
file against a baseline without the target (:mod:`sdckit.attacks.prediction`),
differencing and padding between universes of an analysis server
(Lucero et al. 2011; :mod:`sdckit.attacks.differencing`), and attacks on
cell-key tables (Giessing & Höhne 2011, §5; :mod:`sdckit.attacks.tables`),
and the comparison of sdckit's server with emulations of ACRO's and
DataSHIELD's rules on attacks and on a corpus of benign queries
(:mod:`sdckit.attacks.peers`, :mod:`sdckit.attacks.corpus`).
"""

from sdckit.attacks.corpus import (
    BenignQuery,
    ServerComparison,
    benign_corpus,
    compare_servers,
    run_corpus,
)
from sdckit.attacks.differencing import (
    PADDING_QUERY_COUNTS,
    CellTarget,
    ServerAttackResult,
    find_cell_targets,
    server_attack,
)
from sdckit.attacks.linkage import LinkageAttackResult, linkage_attack
from sdckit.attacks.peers import ACRORules, DataSHIELDRules, PeerServer
from sdckit.attacks.prediction import PredictionAttackResult, prediction_attack
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
    "ACRORules",
    "Answer",
    "ArtificialOutlier",
    "AveragingAttackResult",
    "BenignQuery",
    "CellTarget",
    "DataSHIELDRules",
    "Factor",
    "IntervalAttackResult",
    "LibraryServer",
    "LinkageAttackResult",
    "MaskedRelease",
    "NaiveServer",
    "OverlapAttackResult",
    "PeerServer",
    "PredictionAttackResult",
    "PublicMetadata",
    "Refused",
    "RegressionAttackResult",
    "RegressionQuery",
    "ServerAttackResult",
    "ServerComparison",
    "StrategicDummy",
    "Target",
    "Variable",
    "artificial_outlier",
    "attack",
    "averaging_attack",
    "benign_corpus",
    "compare_servers",
    "dummy_mean_isolates",
    "dummy_variance_isolates",
    "find_cell_targets",
    "interval_attack",
    "isolated_dummy_variance",
    "linkage_attack",
    "outlier_distance",
    "overlap_differencing_attack",
    "prediction_attack",
    "quantile_subsets",
    "recover_value",
    "regression_attack",
    "run_corpus",
    "server_attack",
    "shared_cells",
    "strategic_dummy",
    "unique_maximum",
    "universe_text",
]
