"""A remote analysis server: confidentiality rules, Drop q, safe analyses, synthetic residuals.

Lucero et al. (2011), "The Microdata Analysis System at the U.S. Census
Bureau", and Bleninger, Drechsler & Ronning (2011), "Remote data access and
the risk of disclosure from linear regression". This package is
the rules engine as a library (:class:`AnalysisServer`); a web service can
be layered on top of it without the library knowing about it.
"""

from sdckit._moved import moved_names
from sdckit.server.analyses import CorrelationResult, CrosstabResult, Refusal, RegressionResult
from sdckit.server.config import DEFAULT_CONFIG, ServerConfig, load_config
from sdckit.server.cutpoints import cutpoints
from sdckit.server.differencing import DifferencingSimulation, simulate_differencing
from sdckit.server.dropq import DropQ, generate_secret
from sdckit.server.engine import AnalysisServer, AuditRecord, AuditSink, UniverseCheckResult
from sdckit.server.formula import Formula, FormulaError, parse_formula
from sdckit.server.metadata import Metadata, Variable
from sdckit.server.residuals import ResidualPanel, ResidualPlotResult
from sdckit.server.rules import Verdict
from sdckit.server.universe import Universe, UniverseError, parse_universe

__all__ = [
    "DEFAULT_CONFIG",
    "AnalysisServer",
    "AuditRecord",
    "AuditSink",
    "CorrelationResult",
    "CrosstabResult",
    "DifferencingSimulation",
    "DropQ",
    "Formula",
    "FormulaError",
    "Metadata",
    "Refusal",
    "RegressionResult",
    "ResidualPanel",
    "ResidualPlotResult",
    "ServerConfig",
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
]

# Plumbing that left the package namespace (issue 14): importable for one release.
__getattr__ = moved_names(
    "sdckit.server",
    {
        "AnovaRow": "sdckit.server.analyses",
        "Binning": "sdckit.server.cutpoints",
        "Coefficient": "sdckit.server.analyses",
        "Factor": "sdckit.server.formula",
        "PartitionNode": "sdckit.server.cutpoints",
        "Term": "sdckit.server.formula",
        "unit_keys": "sdckit.server.dropq",
        "xi": "sdckit.server.differencing",
        "xi_bounds": "sdckit.server.differencing",
    },
)
