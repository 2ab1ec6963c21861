"""``python -m eagle_tui`` is the same as the ``eagle-tui`` console script."""

from eagle_tui.cli import main

raise SystemExit(main())
