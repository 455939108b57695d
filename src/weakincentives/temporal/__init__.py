"""Evaluations as Temporal workflows: the loop in a workflow, steps as activities.

Needs the ``temporal`` extra (``pip install 'weakincentives[temporal]'``). A worker
process serves prompts on a task queue; any process starts evaluations on it and
reads their results:

```python
worker = EvaluationWorker(OpenAIResponses(model="gpt-4.1"), prompts=[support])
async with worker.worker(client, task_queue="agents"):
    ...

evaluations = EvaluationClient(client, task_queue="agents")
response = await evaluations.evaluate(support, Ticket(id="T-1"))
```

The loop runs inside the workflow, deterministically; each provider request and each
tool call that does I/O is an activity; pure tools run in the workflow; a call that
requires approval waits for a ``decide`` signal. ``specs/TEMPORAL.md`` says what runs
where.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.temporal._client import EvaluationClient, EvaluationHandle
from weakincentives.temporal._worker import EvaluationWorker

__all__ = ["EvaluationClient", "EvaluationHandle", "EvaluationWorker"]

publish("weakincentives.temporal", globals(), __all__)
