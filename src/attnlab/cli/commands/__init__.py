"""Subcommands of the ``attnlab`` command, one module each.

Every module here defines ``register(app: typer.Typer) -> None`` and an integer ``ORDER`` that
places it in ``attnlab --help``; :mod:`attnlab.cli.main` discovers them, so adding a command never
means editing the entry point.
"""
