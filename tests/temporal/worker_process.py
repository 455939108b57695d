"""A worker in a process of its own: ``python -m tests.temporal.worker_process ADDRESS QUEUE``.

It prints ``READY`` once it polls the task queue, then serves until it is killed.
``--hold`` makes the request of round 4 of the ``work`` prompt hang after printing
``HOLDING <evaluation id>``: the point where a test SIGKILLs it; such a worker keeps no
workflow cache.
"""

from __future__ import annotations

import asyncio
import sys

from temporalio.client import Client

from tests.temporal.agents import evaluation_worker


async def serve(address: str, queue: str, *, hold: bool) -> None:
    client = await Client.connect(address)
    worker = evaluation_worker(hold=hold)
    # A worker that will be killed caches no workflow: every workflow task replays the
    # history, and no task waits on the sticky queue of a worker that is gone.
    options = {"max_cached_workflows": 0} if hold else {}
    async with worker.worker(client, task_queue=queue, **options):
        print("READY", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2], hold="--hold" in sys.argv[3:]))
