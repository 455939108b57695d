"""A worker in a process of its own: ``python -m tests.temporal.worker_process ADDRESS QUEUE``.

It prints ``READY`` once it polls the task queue, then serves until it is killed.
``--hold`` makes the request of round 4 of the ``work`` prompt hang after printing
``HOLDING <evaluation id>``: the point where a test SIGKILLs it; such a worker keeps no
workflow cache. ``--heartbeats`` serves the worker whose attempts may take an hour and
are lost only by a missing heartbeat.
"""

from __future__ import annotations

import asyncio
import sys

from temporalio.client import Client

from tests.temporal.agents import evaluation_worker


async def serve(address: str, queue: str, *, hold: bool, heartbeats: bool) -> None:
    client = await Client.connect(address)
    worker = evaluation_worker(hold=hold, heartbeats=heartbeats)
    # A worker that will be killed caches no workflow: every workflow task replays the
    # history, and no task waits on the sticky queue of a worker that is gone.
    options = {"max_cached_workflows": 0} if hold else {}
    async with worker.worker(client, task_queue=queue, **options):
        print("READY", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    flags = sys.argv[3:]
    asyncio.run(
        serve(sys.argv[1], sys.argv[2], hold="--hold" in flags, heartbeats="--heartbeats" in flags)
    )
