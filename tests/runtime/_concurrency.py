"""Run a function on several threads at once and surface any thread's failure."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_threads(target: Callable[[int], None], count: int) -> None:
    """Call ``target(index)`` on ``count`` threads, join them, and fail if any raised."""
    errors: list[BaseException] = []

    def guarded(index: int) -> None:
        try:
            target(index)
        except BaseException as error:  # re-raised below so a failing thread fails the test
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
