"""Recipes: the studio's export, ``sdckit recipe run``, the script and the commands agree byte for byte."""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from studio_cases import STEPS

from sdckit.cli.main import main
from sdckit.errors import ParameterError
from sdckit.studio import export_release, load_recipe, project_recipe


@pytest.fixture
def exported(project, tmp_path):
    for method, params, seed in STEPS:
        project.apply(method, params, seed=seed)
    out = tmp_path / "out"
    out.mkdir()
    return project, export_release(project, out, name="release", with_report=False)


def _run_commands(commands: Path, folder: Path) -> None:
    """Run the exported shell script with bash, in ``folder``, as a steward would."""
    lines = [line for line in commands.read_text().splitlines() if line.startswith("sdckit ")]
    assert len(lines) == len(STEPS) + 1  # one per step, then the release
    # The sdckit command of this environment first on the PATH, as after `pip install sdckit`.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        ["bash", str(commands)],
        cwd=folder,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _replay_folder(project, tmp_path: Path) -> Path:
    """A folder holding a copy of the original file, where the replays write."""
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "testdata.csv").write_bytes(project.path.read_bytes())
    return replay


def test_run_and_script_reproduce_the_export_byte_for_byte(exported, tmp_path, monkeypatch):
    project, done = exported
    release = done.files["release"].read_bytes()
    assert b"income" not in release.splitlines()[0]  # sensitive: not released
    assert b"ori_hid" not in release.splitlines()[0]  # household number: not released
    replay = _replay_folder(project, tmp_path)

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


@pytest.mark.slow  # four sdckit processes, each importing the library
def test_the_exported_commands_run_by_bash_reproduce_the_export_byte_for_byte(exported, tmp_path):
    project, done = exported
    replay = _replay_folder(project, tmp_path)
    _run_commands(done.files["commands"], replay)
    assert (replay / "release.csv").read_bytes() == done.files["release"].read_bytes()
    # The intermediate states hold every column (the household number too): not left behind.
    assert sorted(p.name for p in replay.iterdir()) == ["release.csv", "testdata.csv"]


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
    project.apply(*STEPS[1][:2], seed=STEPS[1][2])
    done = export_release(project, tmp_path, name="forced", override=["income"], with_report=False)
    assert "income" in done.columns
    assert any("'income'" in w and "sensitive" in w for w in done.warnings)
    assert "ori_hid" not in done.columns


def test_a_direct_identifier_is_never_released_override_or_recipe(exported, tmp_path):
    from sdckit.errors import DataError, SchemaError
    from sdckit.studio import run_recipe

    project, done = exported
    project.set_columns(roles={"ori_hid": "id"})
    with pytest.raises(SchemaError, match="'ori_hid'.*never released"):
        export_release(project, tmp_path, name="x", override=["ori_hid"], with_report=False)
    assert not (tmp_path / "x.csv").exists()
    # A recipe edited by hand to release it is refused before anything is read or written.
    recipe = load_recipe(done.files["recipe"])
    edited = type(recipe)(
        **{**recipe.__dict__, "columns": [*recipe.columns, "ori_hid"]},
    )
    edited = type(recipe)(
        **{**edited.__dict__, "studio_roles": {**recipe.studio_roles, "ori_hid": "id"}}
    )
    with pytest.raises(DataError, match="'ori_hid'.*direct identifier"):
        run_recipe(edited, project.path, tmp_path / "never.csv")
    assert not (tmp_path / "never.csv").exists()


def test_a_release_of_original_values_is_refused_until_confirmed(project, tmp_path):
    # Noise on the sensitive income only: the released columns keep the original values.
    project.apply("additive_noise", {"columns": ["income"], "variance_factor": 0.1}, seed=4)
    with pytest.raises(ParameterError, match="confirm_unmasked: the 1 step.*changed no released"):
        export_release(project, tmp_path, name="same", with_report=False)
    assert not list(tmp_path.glob("same*"))  # nothing written
    done = export_release(project, tmp_path, name="same", with_report=False, confirm_unmasked=True)
    assert done.warnings[0].startswith("nothing was masked")
    # The values decide, not the dtypes: integers held as floats are the same values.
    from sdckit.studio.export import _unmasked

    columns = [c for c in project.original.columns if c != "income"]
    as_floats = project.original[columns].copy()
    ints = list(as_floats.select_dtypes("integer").columns)
    as_floats[ints] = as_floats[ints].astype("float64")
    assert ints and _unmasked(project, as_floats, columns).startswith("the 1 step")
    project.apply(*STEPS[1][:2], seed=STEPS[1][2])  # PRAM on a released key: masked
    masked = export_release(project, tmp_path, name="masked", with_report=False)
    assert not any(w.startswith("nothing was masked") for w in masked.warnings)


def test_a_recipe_loads_back_into_a_project_on_the_same_file(exported, testdata, tmp_path):
    from sdckit.errors import DataError
    from sdckit.studio import Project

    project, done = exported
    project.snapshot("released")
    recipe = load_recipe(done.files["recipe"])
    again = Project(testdata)
    last = again.load_recipe(recipe)
    assert again.current == last.id and len(again.path_to()) == len(STEPS)
    assert again.roles == project.roles
    assert again.state().equals(project.state())
    assert project_recipe(again, done.columns) == recipe

    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n3,4\n")
    elsewhere = Project(other)
    with pytest.raises(DataError, match="another file"):
        elsewhere.load_recipe(recipe)
    assert list(elsewhere.steps) == [0]
