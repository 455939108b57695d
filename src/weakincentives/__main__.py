"""``python -m weakincentives``: see ``python -m weakincentives --help``."""

from __future__ import annotations

import sys

from weakincentives._cli import main

if __name__ == "__main__":
    sys.exit(main())
