"""sdckit: statistical disclosure control for microdata, tables and remote analysis.

The masking methods and the schema are re-exported here. Each other capability
is a subpackage with its own public API: :mod:`sdckit.assess` (utility, risk,
sweeps, reports), :mod:`sdckit.tables` (protected frequency tables),
:mod:`sdckit.swaprate` (estimating an undisclosed swap rate) and
:mod:`sdckit.server` (the remote analysis server), imported on demand so that
``import sdckit`` stays light.
"""

from sdckit.errors import (
    DataError,
    InfeasibleError,
    ParameterError,
    RuleViolation,
    SchemaError,
    SDCError,
)
from sdckit.io import read_table, write_table
from sdckit.microdata import (
    MaskResult,
    RWNResult,
    additive_noise,
    available_maskers,
    mask,
    microaggregate,
    multiplicative_noise,
    rank_swap,
    rwn,
    swap,
)
from sdckit.schema import ColumnSpec, Design, Kind, Role, Schema, build_design

__version__ = "0.1.0"

__all__ = [
    "ColumnSpec",
    "DataError",
    "Design",
    "InfeasibleError",
    "Kind",
    "MaskResult",
    "ParameterError",
    "RWNResult",
    "Role",
    "RuleViolation",
    "SDCError",
    "Schema",
    "SchemaError",
    "__version__",
    "additive_noise",
    "available_maskers",
    "build_design",
    "mask",
    "microaggregate",
    "multiplicative_noise",
    "rank_swap",
    "read_table",
    "rwn",
    "swap",
    "write_table",
]
