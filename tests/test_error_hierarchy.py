"""Every exception class the package defines derives from WinkError (private ones aside)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import weakincentives
from weakincentives.errors import WinkError


def _exception_classes() -> list[tuple[str, type[BaseException]]]:
    found: list[tuple[str, type[BaseException]]] = []
    for info in pkgutil.walk_packages(weakincentives.__path__, "weakincentives."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found.append((f"{module.__name__}.{name}", value))
    return found


def test_the_walk_finds_the_library_errors() -> None:
    """The walk sees errors in every layer, so an empty result cannot pass by accident."""
    names = {name for name, _ in _exception_classes()}
    assert "weakincentives.errors.PromptEvaluationError" in names
    assert "weakincentives.runtime.EventDeliveryError" in names
    assert len(names) > 15


def test_every_public_exception_class_derives_from_wink_error() -> None:
    """A new error outside the hierarchy fails here, wherever it is defined."""
    outside = sorted(
        name
        for name, error in _exception_classes()
        if not name.rsplit(".", 1)[1].startswith("_") and not issubclass(error, WinkError)
    )
    assert outside == []
