"""The terminal front ends: the ``attnlab`` command (:mod:`~attnlab.cli.main`, one module per
subcommand in :mod:`attnlab.cli.commands`), the two lesson scripts (:mod:`~attnlab.cli._scripts`,
their walks in :mod:`~attnlab.cli.walk` and :mod:`~attnlab.cli.walk_grad`) and the terminal quiz
(:mod:`~attnlab.cli.quiz_session`).

May import: every package below the front ends; :mod:`attnlab.web` and :mod:`attnlab.notebook`
only from the ``serve`` and ``notebook`` commands.
"""
