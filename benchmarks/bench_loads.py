"""What the untrusted-input checks of ``serde.loads`` cost over plain ``json.loads``.

Prints ``name  n  best_ms  ratio`` lines (best of several repeats, rounds
interleaved so load on a shared machine does not skew one row); the ratio is
``loads`` over ``json.loads`` on the same text. Documents: a small tool-argument
object, a 200 KB provider-like reply (ASCII), the same reply with non-ASCII text
and emoji escapes (takes the encode and surrogate-escape checks), a float-heavy
embeddings reply (every float goes through the overflow hook), and a reply with
more than ``MAX_JSON_DEPTH`` brackets nested 40 deep (takes the depth pass).
Run with ``python benchmarks/bench_loads.py``; needs nothing beyond the library.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable

from weakincentives.serde import loads

REPEATS = 25


def _documents() -> dict[str, tuple[str, int]]:
    rng = random.Random(7)
    small = json.dumps(
        {"customer_id": "C-1042", "items": [{"sku": "A1", "quantity": 2, "price": 9.5}]}
    )
    items = [
        {
            "id": f"item_{index}",
            "type": "message",
            "content": [{"type": "output_text", "text": f"line {index} of the answer"}],
            "score": rng.random(),
            "tags": ["a", "b"],
        }
        for index in range(1000)
    ]
    reply = json.dumps({"id": "resp_1", "output": items, "usage": {"total_tokens": 1234}})
    unicode_items = [
        {**item, "content": [{"type": "output_text", "text": "déjà vu 😀 " * 3}]} for item in items
    ]
    unicode_reply = json.dumps({"output": unicode_items})  # ensure_ascii: \\ud83d\\ude00 pairs
    embeddings = json.dumps(
        {"data": [{"embedding": [rng.uniform(-1, 1) for _ in range(1536)]} for _ in range(4)]}
    )
    nested: object = {"leaf": [1, 2, 3]}
    for _ in range(40):
        nested = {"child": nested, "siblings": [[1], [2], {"k": [3]}]}
    deep = json.dumps(nested)
    return {
        "tool arguments (small object)": (small, 5000),
        "provider reply, ASCII (~200 KB)": (reply, 10),
        "provider reply, emoji escapes": (unicode_reply, 10),
        "embeddings reply (6,144 floats)": (embeddings, 10),
        "40 levels deep, 160+ brackets": (deep, 1000),
    }


def _time(function: Callable[[str], object], text: str, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        function(text)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    """Time each document through both decoders and print the ratios."""
    documents = _documents()
    for text, _ in documents.values():
        assert loads(text) == json.loads(text)
    best: dict[tuple[str, str], float] = {}
    for _ in range(REPEATS):
        for name, (text, n) in documents.items():
            for label, function in (("json.loads", json.loads), ("serde.loads", loads)):
                elapsed = _time(function, text, n)
                key = (name, label)
                best[key] = min(best.get(key, elapsed), elapsed)
    print(f"{'name':<46}{'n':>7}{'best_ms':>10}{'ratio':>8}")
    for name, (_, n) in documents.items():
        base = best[(name, "json.loads")]
        ours = best[(name, "serde.loads")]
        print(f"{'json.loads: ' + name:<46}{n:>7}{base:>10.3f}")
        print(f"{'serde.loads: ' + name:<46}{n:>7}{ours:>10.3f}{ours / base:>8.2f}")


if __name__ == "__main__":
    main()
