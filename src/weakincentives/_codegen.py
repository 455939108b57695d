"""Turning generated source into a function whose text tracebacks and debuggers can show.

Several hot paths write Python at run time, once per type or per shape, as
``dataclasses`` does for ``__init__``: serde's parse and dump functions, direct
constructors of frozen records, compiled prompt renders. :func:`generated_function`
is the one way they do it. Each function gets a pseudo file name of its own (a
serial number makes it unique, so two classes with the same qualified name never
share, or overwrite, each other's text), and its source is put in :mod:`linecache`
under that name, which is where ``traceback``, ``inspect`` and ``pdb`` look.

The linecache entry lives as long as the function: it is dropped when the function
is garbage collected, so code generated per template does not pile up in the cache.
"""

from __future__ import annotations

import itertools
import linecache
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["generated_function"]

_SERIAL = itertools.count(1)


def generated_function(
    source: str, name: str, namespace: dict[str, Any], *, label: str
) -> Callable[..., Any]:
    """Compile ``source``, run it in ``namespace`` and return the function it defines as ``name``.

    ``label`` says what the code is for (``serde parse/forbid pkg.Item``); it goes into
    the pseudo file name, ``<weakincentives LABEL #N>``, that tracebacks show. The
    source must come from the library itself: names and ``repr()`` literals only,
    never text from outside.
    """
    filename = f"<weakincentives {label} #{next(_SERIAL)}>"
    code = compile(source, filename, "exec")
    # mtime None: linecache.checkcache() keeps the entry (there is no file to compare).
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(code, namespace)
    function: Callable[..., Any] = namespace[name]
    finalizer = weakref.finalize(function, linecache.cache.pop, filename, None)
    finalizer.atexit = False  # nothing to tidy when the interpreter exits
    return function
