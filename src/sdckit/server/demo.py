"""A generated census-like dataset for ``sdckit serve --demo``, the tests and the load benchmark.

Synthetic people (no real person behind any row): sex, region, education,
age, weekly hours, an hourly wage that is log-linear in age, hours,
education and sex, and employment. Its metadata comes from
:meth:`Metadata.infer` with minimum-width cutpoints (Lucero et al. 2011, Section 3.1.3).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from sdckit._validation import check_int, check_random_state
from sdckit.server.metadata import Metadata

__all__ = ["DEMO_LABELS", "demo_metadata", "make_demo_data"]

DEMO_LABELS = {
    "sex": "Sex",
    "region": "Region of residence",
    "education": "Highest level of education",
    "age": "Age in years",
    "hours": "Usual weekly hours of work",
    "wage": "Hourly wage",
    "employed": "Employed at the reference date",
}

_EDUCATION = ("primary", "secondary", "tertiary", "doctorate")


def make_demo_data(n: int = 5000, *, random_state=0) -> pd.DataFrame:
    """``n`` synthetic people, indexed by a person number.

    Parameters
    ----------
    n : int, default 5000
        Number of people (at least 100).
    random_state : None, int or numpy.random.Generator, default 0
        Seed of the generator.

    Returns
    -------
    DataFrame
        sex, region, education, age, hours, wage and employed.
    """
    n = check_int(n, "n", minimum=100)
    rng = check_random_state(random_state)
    sex = rng.choice(np.array(["female", "male"]), n)
    region = rng.choice(np.array(["north", "south", "east", "west"]), n, p=[0.4, 0.3, 0.2, 0.1])
    education_code = rng.choice(4, n, p=[0.25, 0.45, 0.25, 0.05])
    age = rng.integers(18, 80, n).astype(np.float64)
    hours = np.round(np.clip(rng.normal(38.0, 8.0, n), 1.0, 80.0), 1)
    log_wage = (
        2.0
        + 0.03 * age
        - 0.0003 * age**2
        + 0.005 * hours
        + 0.15 * education_code
        + 0.1 * (sex == "male")
        + rng.normal(0.0, 0.35, n)
    )
    employed = np.where(
        rng.random(n) < 1.0 / (1.0 + np.exp(-(0.5 + 0.4 * education_code - 0.02 * (age - 45)))),
        "yes",
        "no",
    )
    return pd.DataFrame(
        {
            "sex": sex,
            "region": region,
            "education": np.asarray(_EDUCATION, dtype=object)[education_code].astype(str),
            "age": age,
            "hours": hours,
            "wage": np.round(np.exp(log_wage), 2),
            "employed": employed,
        },
        index=pd.Index(np.arange(1, n + 1) * 7 + 100_000, name="person"),
    )


def demo_metadata(data: pd.DataFrame, *, beta: int = 250) -> Metadata:
    """Metadata of :func:`make_demo_data` output: labels, ordered education, cutpoints.

    Parameters
    ----------
    data : DataFrame
        Output of :func:`make_demo_data`.
    beta : int, default 250
        Fewest units per cutpoint bin (Lucero et al. (2011), §3.1.3).

    Returns
    -------
    Metadata
    """
    meta = Metadata.infer(data, beta=beta, labels=DEMO_LABELS)
    variables = dict(meta.variables)
    if "education" in variables:
        variables["education"] = replace(variables["education"], levels=_EDUCATION)
    return Metadata(variables)
