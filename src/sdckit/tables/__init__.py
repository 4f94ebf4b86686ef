"""Protected frequency tables: tabulation, cell key perturbation, perturbation-table design.

Giessing & Höhne (2011), *Eliminating small cells from census counts tables*
This package never imports :mod:`sdckit.microdata`.
"""

from sdckit._moved import moved_names
from sdckit.tables.additivity import AdditivityResult, restore_additivity
from sdckit.tables.audit import AuditResult, audit_suppression
from sdckit.tables.cellkey import CellKeyResult, cell_key_perturb
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
from sdckit.tables.invariant import InvariantMatrix, banded_transition, invariant_matrix
from sdckit.tables.linked import LinkedAdditivityResult, restore_linked
from sdckit.tables.linked_suppression import (
    LinkedSuppressionResult,
    audit_linked,
    suppress_linked,
)
from sdckit.tables.magnitude import (
    MagnitudeResult,
    magnitude_information_loss,
    magnitude_perturb,
    perturb_sums,
)
from sdckit.tables.ptable import PTable, design_ptable
from sdckit.tables.recordkeys import add_record_keys
from sdckit.tables.release import ConfidentialColumnError, check_release
from sdckit.tables.rules_primary import PrimaryRule, parse_rule, primary_suppression
from sdckit.tables.safe import SafeResult, safe_perturb
from sdckit.tables.suppression import SuppressionResult, suppress
from sdckit.tables.tabulate import TableStructure, tabulate

__all__ = [
    "AdditivityResult",
    "AuditResult",
    "CellKeyResult",
    "ConfidentialColumnError",
    "DeviationPublication",
    "InfoLossResult",
    "InvariantMatrix",
    "LinkedAdditivityResult",
    "LinkedSuppressionResult",
    "MagnitudeResult",
    "PTable",
    "PrimaryRule",
    "SafeResult",
    "SuppressionResult",
    "TableStructure",
    "add_record_keys",
    "audit_linked",
    "audit_suppression",
    "banded_transition",
    "cell_key_perturb",
    "check_release",
    "compare_information_loss",
    "design_ptable",
    "information_loss",
    "invariant_matrix",
    "magnitude_information_loss",
    "magnitude_perturb",
    "parse_rule",
    "perturb_deviations",
    "perturb_sums",
    "primary_suppression",
    "read_codelist_hierarchy",
    "read_hrc",
    "read_ptable",
    "restore_additivity",
    "restore_linked",
    "safe_perturb",
    "suppress",
    "suppress_linked",
    "tabulate",
    "to_sdmx_csv",
    "write_ptable",
]

# Plumbing that left the package namespace (issue 14): importable for one release.
__getattr__ = moved_names(
    "sdckit.tables",
    {
        "CONFIDENTIAL_COLUMNS": "sdckit.tables.release",
        "INTEGER_KEY_MODULUS": "sdckit.tables.recordkeys",
        "UNIFORM_KEY_RESOLUTION": "sdckit.tables.recordkeys",
        "invariant_transform": "sdckit.tables.invariant",
        "key_units": "sdckit.tables.recordkeys",
        "lookup_noise": "sdckit.tables.cellkey",
        "release_frame": "sdckit.tables.release",
        "split_small_counts": "sdckit.tables.invariant",
    },
)
