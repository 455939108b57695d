"""Adapter factories: ``OpenAIAdapter(model=...)`` is ``Adapter(OpenAIResponses(model=...))``.

A factory takes exactly its provider's options (it is typed by them, so each option is
declared once, on the provider) and returns the adapter with the default
``LoopSettings``. For other loop settings, build the adapter yourself:
``Adapter(OpenAIResponses(model=...), settings=LoopSettings(max_rounds=4))``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from weakincentives.adapters._adapter import Adapter
from weakincentives.adapters._provider import Provider

__all__ = ["adapter_factory"]


def adapter_factory[**P, ProviderT: Provider[Any, Any]](
    provider: Callable[P, ProviderT], *, name: str
) -> Callable[P, Adapter[ProviderT]]:
    """A function named ``name`` that builds ``provider(...)`` and wraps it in an adapter."""

    def factory(*args: P.args, **kwargs: P.kwargs) -> Adapter[ProviderT]:
        return Adapter(provider(*args, **kwargs))

    provider_name = getattr(provider, "__name__", "the provider")
    factory.__name__ = factory.__qualname__ = name
    factory.__module__ = getattr(provider, "__module__", __name__)
    factory.__doc__ = (
        f"``Adapter({provider_name}(...))``: an adapter with the default ``LoopSettings``.\n\n"
        f"Takes the options of :class:`{provider_name}`; for other loop settings use "
        f"``Adapter({provider_name}(...), settings=LoopSettings(...))``."
    )
    signature = inspect.signature(provider)
    setattr(  # noqa: B010 - help() and IDEs then show the provider's options
        factory,
        "__signature__",
        signature.replace(return_annotation=f"Adapter[{provider_name}]"),
    )
    return factory
