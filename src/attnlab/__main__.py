"""``python -m attnlab`` runs the ``attnlab`` command."""

from attnlab.cli.main import main

main()
