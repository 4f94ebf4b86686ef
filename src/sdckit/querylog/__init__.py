"""Protected search logs: user-level k-anonymity by semantic microaggregation.

Erola, Castellà-Roca, Navarro-Arribas & Torra (2011): users are grouped by
the meaning of what they search for (their queries' terms classified in a
taxonomy) and each group of at least k users is released as one aggregated
user. ZEALOUS (Götz et al. 2012) releases query frequencies with
differential privacy instead, and the planted-query attack shows why that can
matter. See ``docs/querylog.md``.
"""

from __future__ import annotations

from sdckit.querylog.evaluate import (
    LinkageAttack,
    LogEvaluation,
    evaluate,
    linkage_attack,
    semantic_remain_percentage,
)
from sdckit.querylog.partition import random_partition, semantic_clusters, semantic_partition
from sdckit.querylog.planted import PlantedAttack, planted_query_attack
from sdckit.querylog.protect import ProtectedLog, protect
from sdckit.querylog.reading import QueryLog, read_log
from sdckit.querylog.report import evaluation_html, write_evaluation_html
from sdckit.querylog.similarity import (
    Classification,
    QueryClassifier,
    classification_matrices,
    incidence_matrix,
)
from sdckit.querylog.taxonomy import (
    ODP239Taxonomy,
    TableTaxonomy,
    Taxonomy,
    WordNetTaxonomy,
    load_taxonomy,
)
from sdckit.querylog.zealous import ZealousRelease, zealous, zealous_parameters

__all__ = [
    "Classification",
    "LinkageAttack",
    "LogEvaluation",
    "ODP239Taxonomy",
    "PlantedAttack",
    "ProtectedLog",
    "QueryClassifier",
    "QueryLog",
    "TableTaxonomy",
    "Taxonomy",
    "WordNetTaxonomy",
    "ZealousRelease",
    "classification_matrices",
    "evaluate",
    "evaluation_html",
    "incidence_matrix",
    "linkage_attack",
    "load_taxonomy",
    "planted_query_attack",
    "protect",
    "random_partition",
    "read_log",
    "semantic_clusters",
    "semantic_partition",
    "semantic_remain_percentage",
    "write_evaluation_html",
    "zealous",
    "zealous_parameters",
]
