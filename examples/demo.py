"""The sdckit demo: mask a real dataset shipped with statsmodels and compare before and after.

Run with ``make demo``. Uses the Fair (1978) extramarital-affairs survey that
ships inside statsmodels (6,366 women; ratings, ages, years married, children,
religiousness, education, occupations, affairs), so no download is needed.
Outputs go to ``demo-output/``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm

from sdckit import Schema, rwn, write_table

OUT = Path(__file__).resolve().parents[1] / "demo-output"


def load_fair() -> pd.DataFrame:
    """The Fair affairs data with occupations as categoricals."""
    data = sm.datasets.fair.load_pandas().data.copy()
    for col in ("occupation", "occupation_husb"):
        data[col] = pd.Categorical(data[col].astype(int))
    for col in ("rate_marriage", "religious", "educ"):
        data[col] = data[col].astype(int)
    return data


def main() -> None:
    OUT.mkdir(exist_ok=True)
    data = load_fair()
    schema = Schema.infer(data)
    print(f"Fair affairs survey: {len(data)} records, {data.shape[1]} columns")
    print(schema.summary())
    print()

    result = rwn(data, k=10, eps=0.15, q=1.0, schema=schema, random_state=2026)
    print(result.summary())
    masked = result.data

    pairs = [
        ("age", "yrs_married"),
        ("yrs_married", "children"),
        ("rate_marriage", "affairs"),
        ("religious", "affairs"),
    ]
    print()
    print(f"{'correlation':<32}{'original':>10}{'masked':>10}")
    for a, b in pairs:
        r0 = np.corrcoef(data[a], data[b])[0, 1]
        r1 = np.corrcoef(masked[a], masked[b])[0, 1]
        print(f"{a + ' ~ ' + b:<32}{r0:>10.3f}{r1:>10.3f}")
    changed = (masked.to_numpy() != data.to_numpy()).mean()
    print(f"\nshare of cells whose value changed: {changed:.1%}")

    write_table(masked, OUT / "fair_masked.csv")
    write_table(result.diagnostics.reset_index(names="record"), OUT / "fair_rwn_diagnostics.csv")
    print(f"masked data and diagnostics written to {OUT}/")

    assess_release(data, result, schema)


def assess_release(data: pd.DataFrame, result, schema: Schema) -> None:
    """Utility and risk of the release, and the HTML report a data steward reads."""
    from sdckit.assess import assess, report

    assessment = assess(
        data,
        result,
        schema=schema,
        response="affairs",
        predictors=["rate_marriage", "age", "yrs_married", "children", "religious", "educ"],
        keys=["age", "educ", "occupation"],
    )
    print()
    print("Assessment of the release:")
    for note in assessment.notes()[:4]:
        print(f"  - {note}")
    page = report(assessment, path=OUT / "report.html", title="sdckit demo: RWN on the Fair survey")
    print(f"\nassessment report ({len(page.figures)} figures): {page.path}")


if __name__ == "__main__":
    main()
