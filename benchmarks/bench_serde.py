"""Benchmark serde against pydantic-core on the same data, in one process.

Prints ``name  n  best_ms  ratio`` lines (best of several repeats); the ratio
is ours over the baseline, so below 1.0 means serde is faster. Needs the
``bench`` extra (pydantic); run with ``python benchmarks/bench_serde.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, make_dataclass
from typing import Annotated, Literal

import pydantic

from weakincentives.serde import dump, loads, parse, parse_json, schema

REPEATS = 7
PARSE_REPEATS = 15
type Mode = Literal["a", "b"] | None


@dataclass(frozen=True, slots=True)
class LineItem:
    """One line of an order."""

    sku: str
    quantity: int = field(metadata={"ge": 1})
    price: float = 0.0


@dataclass(frozen=True, slots=True)
class OrderParams:
    """Parameters of a tool that places an order."""

    customer_id: str = field(metadata={"description": "Customer identifier", "min_length": 1})
    items: tuple[LineItem, ...]
    priority: Literal["low", "normal", "high"] = "normal"
    note: str | None = None
    express: bool = False
    discount: float = field(default=0.0, metadata={"ge": 0, "le": 1})


class LineItemModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")
    sku: str
    quantity: int = pydantic.Field(ge=1)
    price: float = 0.0


@pydantic.with_config(extra="forbid")
@dataclass(frozen=True, slots=True)
class LineItemDataclass:
    """LineItem as pydantic validates a stdlib dataclass: constraints in Annotated."""

    sku: str
    quantity: Annotated[int, pydantic.Field(ge=1)]
    price: float = 0.0


@pydantic.with_config(extra="forbid")
@dataclass(frozen=True, slots=True)
class OrderDataclass:
    """OrderParams as pydantic validates a stdlib dataclass."""

    customer_id: Annotated[str, pydantic.Field(min_length=1)]
    items: tuple[LineItemDataclass, ...]
    priority: Literal["low", "normal", "high"] = "normal"
    note: str | None = None
    express: bool = False
    discount: Annotated[float, pydantic.Field(ge=0, le=1)] = 0.0


class OrderModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")
    customer_id: str = pydantic.Field(description="Customer identifier", min_length=1)
    items: tuple[LineItemModel, ...]
    priority: Literal["low", "normal", "high"] = "normal"
    note: str | None = None
    express: bool = False
    discount: float = pydantic.Field(default=0.0, ge=0, le=1)


PAYLOAD = json.dumps(
    {
        "customer_id": "c-42",
        "items": [
            {"sku": "apple", "quantity": 3, "price": 0.5},
            {"sku": "pear", "quantity": 1, "price": 0.75},
            {"sku": "plum", "quantity": 12, "price": 0.2},
        ],
        "priority": "high",
        "note": "leave at the door",
        "express": True,
        "discount": 0.1,
    }
)


def best_ms(function: Callable[[], object], n: int) -> float:
    """Best total milliseconds of ``n`` calls over REPEATS runs."""
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(n):
            function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def report(name: str, n: int, ours: float, baseline: float | None) -> None:
    ratio = "" if baseline is None else f"{ours / baseline:.2f}"
    print(f"{name:<34} {n:>6} {ours:>10.3f} {ratio:>6}")


def interleaved(rows: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    """Best total milliseconds of ``n`` calls per row; rounds interleave the rows.

    Process time, not wall time: on a shared machine the wall clock also counts the
    time other jobs hold the core, which moves one row and not the next.
    """
    best = dict.fromkeys(rows, float("inf"))
    for _ in range(PARSE_REPEATS):
        for name, function in rows.items():
            start = time.process_time()
            for _ in range(n):
                function()
            best[name] = min(best[name], time.process_time() - start)
    return {name: seconds * 1000 for name, seconds in best.items()}


def bench_parse() -> None:
    model = pydantic.TypeAdapter(OrderModel)
    same = pydantic.TypeAdapter(OrderDataclass)
    ours_value = parse_json(OrderParams, PAYLOAD)
    assert ours_value == parse(OrderParams, loads(PAYLOAD))
    assert (
        dump(ours_value)
        == dump(same.validate_json(PAYLOAD))
        == model.validate_python(json.loads(PAYLOAD)).model_dump(mode="json")
    )
    n = 20_000
    times = interleaved(
        {
            "parse_json (serde)": lambda: parse_json(OrderParams, PAYLOAD),
            "validate_json, BaseModel (pydantic)": lambda: model.validate_json(PAYLOAD),
            "validate_json, dataclass (pydantic)": lambda: same.validate_json(PAYLOAD),
            "loads + parse (serde, reference)": lambda: parse(OrderParams, loads(PAYLOAD)),
            "json.loads alone": lambda: json.loads(PAYLOAD),
        },
        n,
    )
    baseline = times["validate_json, BaseModel (pydantic)"]
    same_baseline = times["validate_json, dataclass (pydantic)"]
    print(f"{'name':<38} {'n':>6} {'best_ms':>10} {'x_model':>8} {'x_dataclass':>12}")
    for name, ms in times.items():
        print(f"{name:<38} {n:>6} {ms:>10.3f} {ms / baseline:>8.2f} {ms / same_baseline:>12.2f}")
    print()


def bench_dump() -> None:
    value = parse_json(OrderParams, PAYLOAD)
    model = pydantic.TypeAdapter(OrderModel).validate_json(PAYLOAD)
    adapter = pydantic.TypeAdapter(OrderModel)
    assert json.loads(json.dumps(dump(value))) == json.loads(adapter.dump_json(model))
    n = 20_000
    ours = best_ms(lambda: json.dumps(dump(value)), n)
    theirs = best_ms(lambda: adapter.dump_json(model), n)
    just_dump = best_ms(lambda: dump(value), n)
    report("dump + json.dumps (serde)", n, ours, theirs)
    report("dump_json (pydantic)", n, theirs, None)
    report("dump alone (serde)", n, just_dump, theirs)


def bench_schema() -> None:
    count = 1000
    classes = [
        make_dataclass(
            f"Params{i}",
            [
                ("name", str),
                ("count", int, field(default=i, metadata={"ge": 0})),
                ("tags", list[str], field(default_factory=list)),
                ("mode", Literal["a", "b"] | None, field(default=None)),
            ],
            frozen=True,
        )
        for i in range(count)
    ]
    models = [
        pydantic.create_model(
            f"Model{i}",
            name=(str, ...),
            count=(int, pydantic.Field(default=i, ge=0)),
            tags=(list[str], pydantic.Field(default_factory=list)),
            mode=(Mode, None),
        )
        for i in range(count)
    ]
    start = time.perf_counter()
    for cls in classes:
        schema(cls)
    ours = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    for model in models:
        pydantic.TypeAdapter(model).json_schema()
    theirs = (time.perf_counter() - start) * 1000
    report("schema, first call (serde)", count, ours, theirs)
    report("TypeAdapter.json_schema (pydantic)", count, theirs, None)
    cached = best_ms(lambda: [schema(cls) for cls in classes], 1)
    report("schema, cached (serde)", count, cached, theirs)


def main() -> None:
    bench_parse()
    print(f"{'name':<34} {'n':>6} {'best_ms':>10} {'ratio':>6}")
    bench_dump()
    bench_schema()


if __name__ == "__main__":
    main()
