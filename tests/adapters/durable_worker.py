"""One process of a kill test: start the scenario's evaluation, or resume it.

    python -m tests.adapters.durable_worker start  BACKEND LOCATION SIDE_EFFECTS KILL_POINT
    python -m tests.adapters.durable_worker resume BACKEND LOCATION SIDE_EFFECTS

``start`` runs the evaluation of ``tests/adapters/durable_scenario.py`` on a durable
store; at its kill point it prints the marker line and waits for the test's SIGKILL
(``none``: it runs to the end). ``resume`` carries the evaluation on in a new process.
Both print ``DONE`` and the response document when the evaluation finishes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.adapters.durable_scenario import (
    EVALUATION,
    KILL_POINTS,
    SESSION,
    StopAfterStep,
    build,
    fail,
)
from weakincentives.runtime import Session
from weakincentives.store import PostgresStore, SQLiteStore, Store, SyncStore


def _store(backend: str, location: str) -> Store:
    if backend == "sqlite":
        return SQLiteStore(location)
    return PostgresStore(location)


def main(arguments: list[str]) -> None:
    """Run one command (see the module docstring)."""
    command, backend, location, side_effects, *rest = arguments
    kill_point = rest[0] if rest else "none"
    if kill_point not in KILL_POINTS:
        fail(f"unknown kill point {kill_point!r}")
    adapter, prompt = build(Path(side_effects), kill_point)
    store = _store(backend, location)
    with SyncStore(store):
        if command == "start":
            durable = (
                StopAfterStep(store, "round:1/call:call_1_1") if kill_point == "between" else store
            )
            response = adapter.evaluate(
                prompt,
                store=durable,
                session=Session(session_id=SESSION),
                evaluation_id=EVALUATION,
            )
        elif command == "resume":
            response = adapter.resume(EVALUATION, prompt, store=store)
        else:
            fail(f"unknown command {command!r}")
            return
    print("DONE", flush=True)
    print(response.to_json(), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
