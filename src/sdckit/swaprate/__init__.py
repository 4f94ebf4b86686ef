"""Estimating an undisclosed swap rate (Kifer 2015).

An agency swaps the values of a swap attribute between random pairs of
records and keeps the rate secret. From the released data alone,

* :func:`estimate_swap_count` (Algorithm 1) fits a record model M_theta and
  the group swap count alpha together by maximising the relaxed likelihood;
* :func:`consensus_swap_count` (Algorithm 2, Lemma 4.3) corrects the bias of a
  misspecified model using two attribute sets with independent predictions;
* every result carries a **verdict** (:class:`~sdckit.swaprate.verdict.SwapVerdict`):
  ``result.verdict.code`` is ``estimated``, ``no_evidence``, ``unreliable`` or
  ``not_identified``, decided by the identifiability check, the model fit
  check (:mod:`~sdckit.swaprate.fitcheck`), the imbalance and the re-swap
  calibration (:mod:`~sdckit.swaprate.calibration`), which runs by default;
* :mod:`~sdckit.swaprate.diagnostics` says when to trust them: the
  identifiability check (do the attributes carry any information about the
  swap attribute?), the imbalance check (4.1.4), the re-swap linearity diagnostic (4.3.2, 5.4) and the
  concordance of two-group splits of a multi-valued swap attribute (4.1.3).

The swap rate rho follows from alpha by Lemma 2.3. The simulator is the rho
data swap :func:`sdckit.microdata.swap.swap` itself.
"""

from sdckit._moved import moved_names
from sdckit.swaprate.calibration import SwapCalibration, reswap_calibration
from sdckit.swaprate.consensus import ConsensusEstimate, consensus_swap_count
from sdckit.swaprate.diagnostics import (
    ImbalanceCheck,
    LinearityCheck,
    SplitConcordance,
    identifiability_check,
    imbalance_check,
    reswap_linearity,
    split_concordance,
)
from sdckit.swaprate.fitcheck import ModelFitCheck, model_fit_check
from sdckit.swaprate.gsc import (
    IdentifiabilityCheck,
    SwapCountEstimate,
    estimate_swap_count,
    swap_rate_from_count,
)
from sdckit.swaprate.models import (
    Gaussian,
    GaussianParameters,
    NaiveBayes,
    NaiveBayesParameters,
    RecordModel,
    make_model,
)
from sdckit.swaprate.simulate import swap_group_count
from sdckit.swaprate.verdict import VERDICT_CODES, SwapVerdict, judge_swap_estimate

__all__ = [
    "VERDICT_CODES",
    "ConsensusEstimate",
    "Gaussian",
    "GaussianParameters",
    "IdentifiabilityCheck",
    "ImbalanceCheck",
    "LinearityCheck",
    "ModelFitCheck",
    "NaiveBayes",
    "NaiveBayesParameters",
    "RecordModel",
    "SplitConcordance",
    "SwapCalibration",
    "SwapCountEstimate",
    "SwapVerdict",
    "consensus_swap_count",
    "estimate_swap_count",
    "identifiability_check",
    "imbalance_check",
    "judge_swap_estimate",
    "make_model",
    "model_fit_check",
    "reswap_calibration",
    "reswap_linearity",
    "split_concordance",
    "swap_group_count",
    "swap_rate_from_count",
]

# Plumbing that left the package namespace (issue 14): importable for one release.
__getattr__ = moved_names(
    "sdckit.swaprate",
    {
        "EncodedRecords": "sdckit.swaprate.models",
        "agreement_sums": "sdckit.swaprate.consensus",
        "binary_swap_attribute": "sdckit.swaprate.gsc",
        "consensus_closed_form": "sdckit.swaprate.consensus",
        "relaxed_log_likelihood": "sdckit.swaprate.gsc",
        "swap": "sdckit.microdata",
    },
)
