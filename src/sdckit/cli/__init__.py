"""The ``sdckit`` command line.

Every module in this package (other than ``main`` and private ``_*`` modules)
is a command group and must define ``register(app: typer.Typer) -> None``;
:mod:`sdckit.cli.main` discovers and registers them, so adding a command
never means editing a shared list.
"""
