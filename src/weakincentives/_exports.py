"""Public names show their public home: ``weakincentives.prompt.Prompt``, not ``..._prompt``.

Each package's ``__init__`` calls :func:`publish` on its ``__all__`` so reprs,
tracebacks and documentation tools name the path users import from. The defining
module is kept in ``__wink_module__``, where ``serde`` resolves a class's string
annotations (they name things the public package need not export).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping

__all__ = ["defining_module", "publish"]

_ORIGIN = "__wink_module__"


def publish(package: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Set ``__module__`` of each named class or function defined under ``package._*``."""
    private = f"{package}._"
    for name in names:
        value = namespace[name]
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        module = getattr(value, "__module__", "")
        if not module.startswith(private):
            continue
        if inspect.isclass(value):
            type.__setattr__(value, _ORIGIN, module)
        value.__module__ = package


def defining_module(cls: type[object]) -> str:
    """The module a class was written in, whatever its ``__module__`` now says."""
    origin = cls.__dict__.get(_ORIGIN)
    return origin if isinstance(origin, str) else cls.__module__
