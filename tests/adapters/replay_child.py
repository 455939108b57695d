"""The child process of ``test_recorded_process.py``: replay a cassette, or die recording one.

``python -m tests.adapters.replay_child replay WIRE CASSETTE PORT STREAM`` replays the
cassette on WIRE's provider with its client pointed at 127.0.0.1:PORT (where nothing
listens) and prints the comparable response and the event documents as JSON.

``python -m tests.adapters.replay_child die WHERE CASSETTE`` records the offline model and
kills itself with SIGKILL: ``in-round-3`` while the model is asked round 3 (two exchanges
are written), ``before-rename`` inside the second write, after the new file is complete
and before it replaces the cassette.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.adapters.replay_kit import comparable, event_documents, run, settings, weather_prompt
from tests.adapters.wires import wire
from weakincentives.adapters import (
    Adapter,
    OfflineModel,
    Recorded,
    ScriptedCall,
    ScriptedTurn,
    TurnRequest,
)


def replay(wire_name: str, cassette: str, port: str, stream: str) -> None:
    """Replay ``cassette`` with no server to talk to, and print what came out."""
    wired = wire(wire_name)  # type: ignore[arg-type]
    address: Any = SimpleNamespace(base_url=f"http://127.0.0.1:{port}/v1")
    inner = wired.adapter(address, "sync", stream=stream == "stream").provider
    result = run(Adapter(Recorded(inner, cassette), settings=settings()), weather_prompt())
    json.dump(
        {"response": comparable(result.response), "events": event_documents(result.events)},
        sys.stdout,
    )


def die(where: str, cassette: str) -> None:
    """Record three rounds, and get killed at ``where``."""
    call = ScriptedCall(name="get_weather", arguments={"city": "Lisbon"})

    def model(request: TurnRequest) -> ScriptedTurn:
        if where == "in-round-3" and request.round == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return ScriptedTurn(calls=(call,)) if request.round < 3 else ScriptedTurn(text="Sunny.")

    if where == "before-rename":
        writes = 0
        rename = os.replace

        def replace_then_die(source: Any, target: Any) -> None:
            nonlocal writes
            writes += 1
            if writes == 2:
                assert Path(source).stat().st_size > 0
                os.kill(os.getpid(), signal.SIGKILL)
            rename(source, target)

        os.replace = replace_then_die  # type: ignore[assignment]
    run(Adapter(Recorded(OfflineModel(responder=model), cassette, mode="record")), weather_prompt())


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    if command == "replay":
        replay(*arguments)
    else:
        die(*arguments)
