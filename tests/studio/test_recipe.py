"""Recipes: the studio's export, ``sdckit recipe run``, the script and the commands agree byte for byte."""

from __future__ import annotations

import runpy
import shlex
import sys
from pathlib import Path

import pytest
from studio_cases import STEPS

from sdckit.cli.main import main
from sdckit.studio import export_release, load_recipe, project_recipe


@pytest.fixture
def exported(project, tmp_path):
    for method, params, seed in STEPS:
        project.apply(method, params, seed=seed)
    out = tmp_path / "out"
    out.mkdir()
    return project, export_release(project, out, name="release", with_report=False)


def _run_commands(commands: Path) -> None:
    """Run the exported shell commands through sdckit's entry point, in this process."""
    lines = [line for line in commands.read_text().splitlines() if line.startswith("sdckit ")]
    assert len(lines) == len(STEPS) + 1  # one per step, then the release
    for line in lines:
        assert main([*shlex.split(line)[1:], *(["--quiet"] if " step " in line else [])]) == 0


def test_run_script_and_commands_reproduce_the_export_byte_for_byte(
    exported, tmp_path, monkeypatch
):
    project, done = exported
    release = done.files["release"].read_bytes()
    assert b"income" not in release.splitlines()[0]  # sensitive: not released
    assert b"ori_hid" not in release.splitlines()[0]  # household number: not released
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "testdata.csv").write_bytes(project.path.read_bytes())

    code = main(
        [
            "recipe",
            "run",
            str(done.files["recipe"]),
            str(replay / "testdata.csv"),
            "-o",
            str(replay / "run.csv"),
            "--quiet",
        ]
    )
    assert code == 0
    assert (replay / "run.csv").read_bytes() == release

    monkeypatch.chdir(replay)
    monkeypatch.setattr(sys, "argv", [str(done.files["script"]), "testdata.csv", "script.csv"])
    runpy.run_path(str(done.files["script"]), run_name="__main__")
    assert (replay / "script.csv").read_bytes() == release

    _run_commands(done.files["commands"])
    assert (replay / "release.csv").read_bytes() == release


def test_the_recipe_reads_back_as_written(exported):
    project, done = exported
    recipe = load_recipe(done.files["recipe"])
    assert recipe == project_recipe(project, done.columns)
    assert [s["method"] for s in recipe.steps] == [m for m, _, _ in STEPS]
    assert [s["seed"] for s in recipe.steps] == [s for _, _, s in STEPS]


def test_a_recipe_on_another_file_is_refused_before_anything(exported, tmp_path, capsys):
    _, done = exported
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    out = tmp_path / "never.csv"
    code = main(["recipe", "run", str(done.files["recipe"]), str(other), "-o", str(out)])
    assert code == 2
    assert "not the file the recipe was made from" in capsys.readouterr().err
    assert not out.exists()


def test_the_release_never_overwrites_the_input(exported, capsys):
    project, done = exported
    before = project.path.read_bytes()
    code = main(
        ["recipe", "run", str(done.files["recipe"]), str(project.path), "-o", str(project.path)]
    )
    assert code == 2
    assert project.path.read_bytes() == before


def test_a_confidential_column_is_released_only_by_override_with_a_warning(project, tmp_path):
    done = export_release(project, tmp_path, name="forced", override=["income"], with_report=False)
    assert "income" in done.columns
    assert any("'income'" in w and "sensitive" in w for w in done.warnings)
    assert "ori_hid" not in done.columns
