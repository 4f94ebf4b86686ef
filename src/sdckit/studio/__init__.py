"""The steward's studio: a local web workbench over the library, and its recipes.

:class:`Project` holds an input file, its columns' kinds and roles and a
history tree of masking steps; :func:`method_forms` generates every
registered method's form; a project's recipe (:func:`load_recipe`,
:func:`run_recipe`, :func:`recipe_script`, :func:`recipe_commands`) replays
its release byte for byte; :func:`export_release` writes the release, its
HTML assessment and the recipe. The HTTP API is :mod:`sdckit.studio.app`
(FastAPI, imported only by ``sdckit studio``).
"""

from sdckit.studio.export import Export, export_release, project_recipe, publishable_columns
from sdckit.studio.forms import method_form, method_forms
from sdckit.studio.project import Project, Step, file_fingerprint
from sdckit.studio.recipe import (
    Recipe,
    load_recipe,
    recipe_commands,
    recipe_script,
    replay_step,
    run_recipe,
)

__all__ = [
    "Export",
    "Project",
    "Recipe",
    "Step",
    "export_release",
    "file_fingerprint",
    "load_recipe",
    "method_form",
    "method_forms",
    "project_recipe",
    "publishable_columns",
    "recipe_commands",
    "recipe_script",
    "replay_step",
    "run_recipe",
]
