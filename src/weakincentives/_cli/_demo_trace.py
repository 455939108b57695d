"""``wink demo --trace FILE``: the run's OpenTelemetry spans, written to a file.

The library only starts spans; exporting them is the application's choice. The demo
is an application, so with ``--trace`` it installs the OpenTelemetry SDK's tracer
provider with the SDK's ``ConsoleSpanExporter`` writing one JSON object per span and
line to FILE (a ``SimpleSpanProcessor``: each span is written when it ends). The
provider is the process's global one, which the API lets a process set once, so this
is for the command line, not for a library call.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO, cast

from weakincentives._cli._render import CommandError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["SERVICE_NAME", "spans_written_to"]

SERVICE_NAME = "wink-demo"
"""The ``service.name`` resource attribute of the demo's spans."""


@contextlib.contextmanager
def spans_written_to(path: str | None) -> Iterator[None]:
    """Inside the block, every finished span is a JSON line in ``path`` (nothing when None)."""
    if path is None:
        yield
        return
    try:
        from opentelemetry import trace  # noqa: PLC0415 - optional: only --trace needs it
        from opentelemetry.sdk.resources import Resource  # noqa: PLC0415 - optional SDK
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415 - optional SDK
        from opentelemetry.sdk.trace.export import (  # noqa: PLC0415 - optional SDK
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
    except ImportError as exc:
        raise CommandError(
            "--trace needs the OpenTelemetry SDK: pip install 'weakincentives[otel]' "
            f"opentelemetry-sdk ({exc.name} is missing)"
        ) from exc
    try:
        file = Path(path).open("w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise CommandError(f"cannot write the trace to {path!r}: {exc.strerror}") from exc
    sink = _TraceFile(file)
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE_NAME}))
    provider.add_span_processor(
        SimpleSpanProcessor(ConsoleSpanExporter(out=cast("IO[str]", sink), formatter=_one_line))
    )
    trace.set_tracer_provider(provider)
    try:
        yield
    finally:
        provider.shutdown()
        sink.finish()
    if sink.error is not None:
        raise CommandError(f"cannot write the trace to {path!r}: {sink.error.strerror}")


class _TraceFile:
    """The trace file; its first failed write (a full disk) is kept to be reported once.

    The SDK would log a traceback for every span it could not write.
    """

    def __init__(self, file: TextIO) -> None:
        self._file = file
        self.error: OSError | None = None

    def write(self, text: str) -> int:
        """Write ``text`` unless a write already failed."""
        self._guarded(lambda: self._file.write(text))
        return len(text)

    def flush(self) -> None:
        """Flush, unless a write already failed."""
        self._guarded(self._file.flush)

    def finish(self) -> None:
        """Close the file (its last buffered text is written then)."""
        self._guarded(self._file.flush)
        # After a failed flush, close fails the same way (and still releases the file).
        with contextlib.suppress(OSError):
            self._file.close()

    def _guarded(self, action: Callable[[], object]) -> None:
        if self.error is None:
            try:
                action()
            except OSError as exc:
                self.error = exc


def _one_line(span: ReadableSpan) -> str:
    line: str = span.to_json(indent=None)
    return line + "\n"
