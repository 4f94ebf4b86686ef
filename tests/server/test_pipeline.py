"""The engine runs every rule through one pipeline, each rule once per request.

Every verdict the server returns comes from a function of
``sdckit.server.rules``; the engine calls them through the module, so
counting calls with monkeypatch sees every one. The static regression rules
used to run twice per regression (once before the universe, once inside the
fit); this pins them to once, for every analysis built on a regression.
"""

from __future__ import annotations

import inspect
from collections import Counter
from typing import Any

import pytest

from sdckit.server import AnalysisServer, rules
from sdckit.server.analyses import Refusal

# The rules every regression runs: the engine's pipeline table (docs/server.md, "The pipeline").
STATIC_RULES = rules.PIPELINE["static (regressions and plots)"]
# rare_categories_left_out runs only when a narrower universe is answered instead.
UNIVERSE_RULES = tuple(r for r in rules.PIPELINE["universe"] if r != "rare_categories_left_out")


def _rule_functions() -> list[str]:
    """Every function of rules.__all__ that gives verdicts (not the pipeline table or helpers)."""
    return [
        name
        for name in rules.__all__
        if inspect.isfunction(getattr(rules, name))
        and name not in {"combined", "violation", "static_regression_rules"}
    ]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the calls of every rule function during a test."""
    counter: Counter[str] = Counter()
    for name in _rule_functions():
        original = getattr(rules, name)

        def counted(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            counter[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(rules, name, counted)
    return counter


REGRESSION_QUERIES = [
    ("regress", ("ALL", "log(wage) ~ age + square(age) + sex + region"), {}),
    ("regress", ("sex = female", "employed ~ age + hours + region"), {"family": "logit"}),
    ("residual_plot", ("ALL", "log(wage) ~ age + sex"), {}),
    ("logit_diagnostics", ("ALL", "employed ~ age + sex"), {}),
]


@pytest.mark.parametrize(("method", "args", "kwargs"), REGRESSION_QUERIES)
def test_each_static_and_universe_rule_runs_once_per_regression(
    server: AnalysisServer, calls: Counter[str], method: str, args: tuple, kwargs: dict
) -> None:
    result = getattr(server, method)(*args, **kwargs)
    assert not isinstance(result, Refusal), result.summary()
    for name in STATIC_RULES + UNIVERSE_RULES:
        assert calls[name] == 1, f"{name} ran {calls[name]} times"
    # Every verdict released names a rule that ran, and none is listed twice
    # except the rule that reports absorptions (category_support) and the
    # one the logit separation checks share (exact_prediction).
    listed = Counter(v.rule for v in result.verdicts)
    assert {name for name, n in listed.items() if n > 1} <= {"category_support", "exact_prediction"}


def test_a_static_refusal_stops_before_the_universe(
    server: AnalysisServer, calls: Counter[str]
) -> None:
    result = server.regress("ALL", "wage ~ age + age:sex")
    assert isinstance(result, Refusal) and result.rules == ("interaction_hierarchy",)
    assert calls["interaction_hierarchy"] == 1
    assert all(calls[name] == 0 for name in UNIVERSE_RULES)


@pytest.mark.parametrize(
    ("method", "args"),
    [
        ("universe_check", ("sex = female",)),
        ("crosstab", ("ALL", "region", "sex")),
        ("correlation", ("ALL", ["age", "log(wage)", "hours"])),
    ],
)
def test_other_analyses_run_each_rule_once(
    server: AnalysisServer, calls: Counter[str], method: str, args: tuple
) -> None:
    result = getattr(server, method)(*args)
    assert not isinstance(result, Refusal), result.summary()
    for name in UNIVERSE_RULES:
        assert calls[name] == 1
    ran = {name for name, n in calls.items() if n}
    assert all(calls[name] == 1 for name in ran), dict(calls)
    # Each verdict released comes from a rule function that ran.
    assert {v.rule for v in result.verdicts} <= ran


def test_a_definition_error_is_a_rule_violation_refusal(server: AnalysisServer) -> None:
    from sdckit.errors import FormulaError, ParameterError, RuleViolation, UniverseError

    assert issubclass(UniverseError, RuleViolation) and issubclass(UniverseError, ParameterError)
    assert issubclass(FormulaError, RuleViolation) and issubclass(FormulaError, ParameterError)
    refused = server.regress("ALL", "wage ~ 1/(abs(hours - 41) + 0.0001)")
    assert isinstance(refused, Refusal) and refused.rules == ("formula_syntax",)
    refused = server.crosstab("nosuch = 1", "sex")
    assert isinstance(refused, Refusal) and refused.rules == ("universe_definition",)


def test_every_rule_cites_its_paper_section_and_is_documented() -> None:
    """Each rule function's docstring cites a paper section; docs/server.md lists it.

    A rule sdckit adds says so ("sdckit's own rule") and still cites the
    section it extends.
    """
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text(encoding="utf-8")
    for name in _rule_functions():
        doc = inspect.getdoc(getattr(rules, name)) or ""
        assert re.search(r"\(\d{4}\)[,.]? (§|eq\.)", doc), (
            f"{name}: no 'Author (year), §x' citation"
        )
        assert f"`{name}`" in page, f"{name} is not listed in docs/server.md"
    staged = {rule for stage in rules.PIPELINE.values() for rule in stage}
    assert set(_rule_functions()) <= staged, set(_rule_functions()) - staged
