"""A remote analysis server: confidentiality rules, Drop q, safe analyses, synthetic residuals.

Lucero et al. (2011), "The Microdata Analysis System at the U.S. Census
Bureau", and Bleninger, Drechsler & Ronning (2011), "Remote data access and
the risk of disclosure from linear regression". This package is
the rules engine as a library (:class:`AnalysisServer`); a web service can
be layered on top of it without the library knowing about it.
"""

from sdckit.server.analyses import (
    AnovaRow,
    Coefficient,
    CorrelationResult,
    CrosstabResult,
    Refusal,
    RegressionResult,
)
from sdckit.server.config import DEFAULT_CONFIG, ServerConfig, load_config
from sdckit.server.cutpoints import Binning, PartitionNode, cutpoints
from sdckit.server.differencing import DifferencingSimulation, simulate_differencing, xi, xi_bounds
from sdckit.server.dropq import DropQ, generate_secret, unit_keys
from sdckit.server.engine import AnalysisServer, AuditRecord, AuditSink, UniverseCheckResult
from sdckit.server.formula import Factor, Formula, FormulaError, Term, parse_formula
from sdckit.server.metadata import Metadata, Variable
from sdckit.server.residuals import ResidualPanel, ResidualPlotResult
from sdckit.server.rules import Verdict
from sdckit.server.universe import Universe, UniverseError, parse_universe

__all__ = [
    "DEFAULT_CONFIG",
    "AnalysisServer",
    "AnovaRow",
    "AuditRecord",
    "AuditSink",
    "Binning",
    "Coefficient",
    "CorrelationResult",
    "CrosstabResult",
    "DifferencingSimulation",
    "DropQ",
    "Factor",
    "Formula",
    "FormulaError",
    "Metadata",
    "PartitionNode",
    "Refusal",
    "RegressionResult",
    "ResidualPanel",
    "ResidualPlotResult",
    "ServerConfig",
    "Term",
    "Universe",
    "UniverseCheckResult",
    "UniverseError",
    "Variable",
    "Verdict",
    "cutpoints",
    "generate_secret",
    "load_config",
    "parse_formula",
    "parse_universe",
    "simulate_differencing",
    "unit_keys",
    "xi",
    "xi_bounds",
]
