"""sdckit: statistical disclosure control for microdata, tables, remote analysis and search logs."""

from sdckit.errors import (
    DataError,
    InfeasibleError,
    ParameterError,
    RuleViolation,
    SchemaError,
    SDCError,
)
from sdckit.io import read_table, write_table
from sdckit.microdata import MaskResult, RWNResult, available_maskers, mask, rwn
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
    "available_maskers",
    "build_design",
    "mask",
    "read_table",
    "rwn",
    "write_table",
]
