"""``python -m uuidkit``: the command line (see :mod:`uuidkit.cli`)."""

from uuidkit.cli import main

raise SystemExit(main())
