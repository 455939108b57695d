"""Finish a 2026-07-28 request whose first answer asks the client for input.

On the 2026-07-28 revision a server cannot send the client requests of its own;
instead ``tools/call``, ``prompts/get`` and ``resources/read`` may answer with an
``InputRequiredResult`` holding elicitation, sampling or roots requests. The
client answers them through the same handlers as the older server-to-client
requests and sends the original request again with the answers and the server's
``requestState``, until a final result arrives (at most ``MAX_INPUT_ROUNDS``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from mcp import ClientSession, types
from mcp.client.session import ClientRequestContext

from weakincentives.errors import WinkError

__all__ = ["MAX_INPUT_ROUNDS", "EndlessRoundsError", "InputRefusedError", "settle"]

MAX_INPUT_ROUNDS = 10
"""Rounds of input a request may ask for before the client gives up."""
_STATE_ONLY_WAIT = 0.05
"""Seconds before resending a request whose answer asked for nothing but a later retry."""

type Retry[T] = Callable[[types.InputResponses | None, str | None], Awaitable[T]]


class EndlessRoundsError(WinkError):
    """The server kept asking for input (mapped to ``MCPProtocolError``)."""


class InputRefusedError(WinkError):
    """This client refused one of the server's input requests (mapped to ``MCPProtocolError``)."""

    def __init__(self, method: str, error: types.ErrorData) -> None:
        super().__init__(
            f"the server asked for {method}, and this client refused: {error.code} {error.message}"
        )
        self.code = error.code


async def settle[T](
    session: ClientSession,
    first: T | types.InputRequiredResult,
    retry: Retry[T | types.InputRequiredResult],
) -> T:
    """The final result of a request, answering every round of input the server asks for."""
    current = first
    for _ in range(MAX_INPUT_ROUNDS):
        if not isinstance(current, types.InputRequiredResult):
            return current
        responses: types.InputResponses | None = None
        if current.input_requests:
            responses = {}
            for key, request in current.input_requests.items():
                context = ClientRequestContext(session=session, request_id=key)
                answer = await session.dispatch_input_request(context, request)
                if isinstance(answer, types.ErrorData):
                    raise InputRefusedError(request.method, answer)
                responses[key] = answer
        else:
            await asyncio.sleep(_STATE_ONLY_WAIT)
        current = await retry(responses, current.request_state)
    if not isinstance(current, types.InputRequiredResult):
        return current
    raise EndlessRoundsError(f"the server asked for input more than {MAX_INPUT_ROUNDS} times")
