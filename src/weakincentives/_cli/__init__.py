"""The ``wink`` command line (also ``python -m weakincentives``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from weakincentives._cli._commands import Runner
from weakincentives._cli._parser import build_parser
from weakincentives.errors import WinkError

__all__ = ["main"]

PROG = "wink"
"""The installed script's name; ``python -m weakincentives`` passes its own."""


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, prog: str = PROG) -> int:
    """Run the command line; returns the process exit code.

    Help and ``--version`` print and exit through ``SystemExit`` as argparse does; a
    command's own errors print ``PROG: error: ...`` on stderr and return 1. When the
    reader of the output goes away (``wink demo | head -1``) it stops quietly and
    returns 141, as a process ended by SIGPIPE does.
    """
    stream = out if out is not None else sys.stdout
    arguments = build_parser(prog).parse_args(argv)
    run: Runner = arguments.run
    try:
        return run(arguments, stream)
    except (WinkError, ValueError, ImportError) as exc:
        sys.stderr.write(f"{prog}: error: {exc}\n")
        return 1
    except BrokenPipeError:
        if stream is sys.stdout:
            _discard_stdout()
        return BROKEN_PIPE


BROKEN_PIPE = 141
"""The exit status when the output's reader left: 128 plus SIGPIPE's number, as shells show."""


def _discard_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
