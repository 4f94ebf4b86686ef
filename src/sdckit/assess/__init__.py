"""Assessment of masked releases: utility and risk measures, tuning sweeps and HTML reports.

:func:`assess` compares an original file with its masked release;
:func:`sweep` runs a masking method over a parameter grid and assesses each
release; :func:`report` writes a self-contained HTML page with the figures
of Perry, Matloff & Tendick (2022, Section 8).
"""

from sdckit.assess.assessment import Assessment, Risk, Utility, assess
from sdckit.assess.categorical import (
    Diversity,
    IndividualRisk,
    IndividualRiskComparison,
    compare_individual_risk,
    individual_risk,
    sensitive_diversity,
)
from sdckit.assess.report import report
from sdckit.assess.risk import (
    DistanceToClosest,
    ExtremeRecords,
    IntervalDisclosure,
    KeyRisk,
    KeyRiskComparison,
    RecordLinkage,
    compare_cooks_distance,
    compare_key_risk,
    compare_mahalanobis,
    distance_to_closest,
    interval_disclosure,
    key_risk,
    mahalanobis_distances,
    record_linkage,
)
from sdckit.assess.suda import Suda, suda
from sdckit.assess.sweep import SweepResult, expand_grid, sweep
from sdckit.assess.utility import (
    CorrelationComparison,
    MomentComparison,
    MutualInformationComparison,
    PCAComparison,
    PredictionCheck,
    RegressionComparison,
    RegressionFit,
    ci_overlap,
    compare_correlations,
    compare_moments,
    compare_mutual_information,
    compare_pca,
    compare_regression,
    fit_regression,
    prediction_check,
    prediction_experiment,
)

__all__ = [
    "Assessment",
    "CorrelationComparison",
    "DistanceToClosest",
    "Diversity",
    "ExtremeRecords",
    "IndividualRisk",
    "IndividualRiskComparison",
    "IntervalDisclosure",
    "KeyRisk",
    "KeyRiskComparison",
    "MomentComparison",
    "MutualInformationComparison",
    "PCAComparison",
    "PredictionCheck",
    "RecordLinkage",
    "RegressionComparison",
    "RegressionFit",
    "Risk",
    "Suda",
    "SweepResult",
    "Utility",
    "assess",
    "ci_overlap",
    "compare_cooks_distance",
    "compare_correlations",
    "compare_individual_risk",
    "compare_key_risk",
    "compare_mahalanobis",
    "compare_moments",
    "compare_mutual_information",
    "compare_pca",
    "compare_regression",
    "distance_to_closest",
    "expand_grid",
    "fit_regression",
    "individual_risk",
    "interval_disclosure",
    "key_risk",
    "mahalanobis_distances",
    "prediction_check",
    "prediction_experiment",
    "record_linkage",
    "report",
    "sensitive_diversity",
    "suda",
    "sweep",
]
