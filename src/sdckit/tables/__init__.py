"""Protected frequency tables: tabulation, cell key perturbation, perturbation-table design.

Giessing & Höhne (2011), *Eliminating small cells from census counts tables*
This package never imports :mod:`sdckit.microdata`.
"""

from sdckit.tables.additivity import AdditivityResult, restore_additivity
from sdckit.tables.cellkey import CellKeyResult, cell_key_perturb, lookup_noise
from sdckit.tables.formats import (
    read_codelist_hierarchy,
    read_hrc,
    read_ptable,
    to_sdmx_csv,
    write_ptable,
)
from sdckit.tables.infoloss import (
    DeviationPublication,
    InfoLossResult,
    compare_information_loss,
    information_loss,
    perturb_deviations,
)
from sdckit.tables.invariant import (
    InvariantMatrix,
    banded_transition,
    invariant_matrix,
    invariant_transform,
    split_small_counts,
)
from sdckit.tables.linked import LinkedAdditivityResult, restore_linked
from sdckit.tables.magnitude import (
    MagnitudeResult,
    magnitude_information_loss,
    magnitude_perturb,
    perturb_sums,
)
from sdckit.tables.ptable import PTable, design_ptable
from sdckit.tables.recordkeys import (
    INTEGER_KEY_MODULUS,
    UNIFORM_KEY_RESOLUTION,
    add_record_keys,
    key_units,
)
from sdckit.tables.release import (
    CONFIDENTIAL_COLUMNS,
    ConfidentialColumnError,
    check_release,
    release_frame,
)
from sdckit.tables.safe import SafeResult, safe_perturb
from sdckit.tables.tabulate import TableStructure, tabulate

__all__ = [
    "CONFIDENTIAL_COLUMNS",
    "INTEGER_KEY_MODULUS",
    "UNIFORM_KEY_RESOLUTION",
    "AdditivityResult",
    "CellKeyResult",
    "ConfidentialColumnError",
    "DeviationPublication",
    "InfoLossResult",
    "InvariantMatrix",
    "LinkedAdditivityResult",
    "MagnitudeResult",
    "PTable",
    "SafeResult",
    "TableStructure",
    "add_record_keys",
    "banded_transition",
    "cell_key_perturb",
    "check_release",
    "compare_information_loss",
    "design_ptable",
    "information_loss",
    "invariant_matrix",
    "invariant_transform",
    "key_units",
    "lookup_noise",
    "magnitude_information_loss",
    "magnitude_perturb",
    "perturb_deviations",
    "perturb_sums",
    "read_codelist_hierarchy",
    "read_hrc",
    "read_ptable",
    "release_frame",
    "restore_additivity",
    "restore_linked",
    "safe_perturb",
    "split_small_counts",
    "tabulate",
    "to_sdmx_csv",
    "write_ptable",
]
