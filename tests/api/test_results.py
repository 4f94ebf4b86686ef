"""The frozen-result base: read-only mappings, pickling, a summary to override."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from sdckit._results import FrozenResult, freeze


@dataclass(frozen=True)
class _Example(FrozenResult):
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        return f"example {self.name}"


def test_mappings_are_frozen_copies() -> None:
    given = {"k": 3}
    result = _Example("a", params=given)
    given["k"] = 4
    assert result.params["k"] == 3
    with pytest.raises(TypeError):
        result.params["k"] = 5  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.name = "b"  # type: ignore[misc]


def test_results_pickle_and_stay_frozen() -> None:
    result = _Example("a", params={"k": 3, "nested": [1, 2]})
    again = pickle.loads(pickle.dumps(result))
    assert again == result
    with pytest.raises(TypeError):
        again.params["k"] = 5  # type: ignore[index]


def test_default_summary_names_the_result_and_its_scalar_fields() -> None:
    @dataclass(frozen=True)
    class Bare(FrozenResult):
        x: int = 0
        label: str = "a"
        params: Mapping[str, Any] = field(default_factory=dict)

    assert Bare(x=3).summary() == "Bare: x=3, label='a'"
    assert _Example("a").summary() == "example a"  # a subclass's own summary wins


def test_freeze_none_is_empty() -> None:
    assert dict(freeze(None)) == {}
