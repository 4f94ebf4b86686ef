"""``python -m sdckit``: the same command line as the ``sdckit`` console script."""

from __future__ import annotations

import sys

from sdckit.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
