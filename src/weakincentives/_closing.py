"""``with`` and ``async with`` for objects that hold resources until closed.

Adapters, MCP toolboxes and the synchronous store all end their ``with`` block by
closing; these mixins say so once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["AsyncClosing", "Closing"]


class Closing(ABC):
    """``with obj:`` closes ``obj`` on the way out (``close``)."""

    __slots__ = ()

    @abstractmethod
    def close(self) -> None:
        """Release what the object holds; idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClosing(ABC):
    """``async with obj:`` closes ``obj`` on the way out (``aclose``)."""

    __slots__ = ()

    @abstractmethod
    async def aclose(self) -> None:
        """Release what the object holds without blocking the event loop; idempotent."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
