"""``python -m attnlab`` runs the ``attnlab`` command."""

from attnlab.cli import main

main()
