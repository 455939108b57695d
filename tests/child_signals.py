"""A prelude for child scripts that test how the library meets SIGINT.

A child inherits its parent's ignored signals and its signal mask across ``exec``, and
the test runner's worker (its threads, native libraries, earlier tests) may have left
either changed; a user's script starts with Python's default. The prelude restores
that default, so the child measures the library and not the runner.
"""

from __future__ import annotations

FRESH_SIGINT = """\
import signal as _signal
_signal.signal(_signal.SIGINT, _signal.default_int_handler)
_signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGINT})
"""
