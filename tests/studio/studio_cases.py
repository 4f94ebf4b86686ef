"""Roles and steps of testdata.csv shared by the studio's tests."""

from __future__ import annotations

#: Roles of testdata.csv used across the tests (the household number is not released).
ROLES = {
    "key": ["urbrur", "roof", "sex", "age"],
    "household": ["ori_hid"],
    "weight": ["sampling_weight"],
    "sensitive": ["income"],
}
#: Three methods of different families, each with its seed.
STEPS = [
    ("recode", {"intervals": {"age": [0, 20, 40, 60, 80, 120]}}, 1),
    ("pram", {"columns": ["roof"], "min_diagonal": 0.8}, 2),
    ("microaggregation", {"columns": ["expend", "savings"], "group_size": 3}, 3),
]
