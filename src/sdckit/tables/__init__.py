"""Protected frequency tables: tabulation, cell key perturbation, perturbation-table design.

Giessing & Höhne (2011), *Eliminating small cells from census counts tables*
(seed 004). This package never imports :mod:`sdckit.microdata`.
"""

from sdckit.tables.cellkey import CellKeyResult, cell_key_perturb, lookup_noise
from sdckit.tables.ptable import PTable, design_ptable
from sdckit.tables.recordkeys import (
    INTEGER_KEY_MODULUS,
    UNIFORM_KEY_RESOLUTION,
    add_record_keys,
    key_units,
)
from sdckit.tables.tabulate import TableStructure, tabulate

__all__ = [
    "INTEGER_KEY_MODULUS",
    "UNIFORM_KEY_RESOLUTION",
    "CellKeyResult",
    "PTable",
    "TableStructure",
    "add_record_keys",
    "cell_key_perturb",
    "design_ptable",
    "key_units",
    "lookup_noise",
    "tabulate",
]
