"""``python -m weakincentives``: the ``wink`` command line run as a module."""

from __future__ import annotations

import sys

from weakincentives._cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m weakincentives"))
