"""Deterministic sample values that satisfy a JSON Schema (the subset serde emits).

The offline adapter uses them to call every tool with valid arguments and to produce
a structured answer without a model; ``validate(schema(T), sample(schema(T)))`` is
empty for every type ``schema`` describes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from weakincentives.serde._json import JSONValue
from weakincentives.serde._patterns import pattern_matcher

__all__ = ["sample"]

_MAX_DEPTH = 8


def sample(schema: Mapping[str, JSONValue], *, seed: int = 0) -> JSONValue:
    """Return a value valid for ``schema``, the same one for the same schema and seed."""
    return _Sampler(random.Random(seed), schema).value(schema, 0)


class _Sampler:
    def __init__(self, rng: random.Random, root: Mapping[str, JSONValue]) -> None:
        self.rng = rng
        self.root = root
        defs = root.get("$defs")
        self.defs: Mapping[str, JSONValue] = defs if isinstance(defs, Mapping) else {}

    def value(self, schema: Mapping[str, JSONValue], depth: int) -> JSONValue:
        ref = schema.get("$ref")
        if ref == "#":
            return self.value(self.root, depth + 1) if depth < _MAX_DEPTH else None
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = self.defs.get(ref.removeprefix("#/$defs/"))
            return self.value(target, depth + 1) if isinstance(target, Mapping) else None
        if "const" in schema:
            return schema["const"]
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return enum[0]
        if "default" in schema:
            return schema["default"]
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                return self.value(_prefer_non_null(options), depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        return self.typed(kind, schema, depth)

    def typed(self, kind: JSONValue, schema: Mapping[str, JSONValue], depth: int) -> JSONValue:
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            return self.array(schema, depth)
        if kind == "string":
            return self.string(schema)
        if kind == "integer":
            return int(self.number(schema, integer=True))
        if kind == "number":
            return self.number(schema, integer=False)
        if kind == "boolean":
            return self.rng.random() < 0.5
        return None

    def object(self, schema: Mapping[str, JSONValue], depth: int) -> JSONValue:
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or depth >= _MAX_DEPTH:
            return {}
        return {
            name: self.value(sub, depth + 1)
            for name, sub in properties.items()
            if isinstance(sub, Mapping)
        }

    def array(self, schema: Mapping[str, JSONValue], depth: int) -> JSONValue:
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return [
                self.value(item, depth + 1) if isinstance(item, Mapping) else None
                for item in prefix
            ]
        items = schema.get("items")
        minimum = schema.get("minItems")
        maximum = schema.get("maxItems")
        count = max(1, minimum if isinstance(minimum, int) else 0)
        if isinstance(maximum, int):
            count = min(count, maximum)
        if not isinstance(items, Mapping) or depth >= _MAX_DEPTH:
            return []
        return [self.value(items, depth + 1) for _ in range(count)]

    def string(self, schema: Mapping[str, JSONValue]) -> JSONValue:
        fmt = schema.get("format")
        if fmt == "date-time":
            return "2026-01-01T00:00:00+00:00"
        if fmt == "date":
            return "2026-01-01"
        if fmt == "time":
            return "12:00:00"
        if fmt == "uuid":
            return "00000000-0000-4000-8000-000000000000"
        minimum = schema.get("minLength")
        maximum = schema.get("maxLength")
        low = minimum if isinstance(minimum, int) else 0
        high = maximum if isinstance(maximum, int) else None
        pattern = schema.get("pattern")
        matcher = pattern_matcher(pattern) if isinstance(pattern, str) else None
        base = f"sample-{self.rng.randrange(1000)}"
        if matcher is not None:
            # A best effort over common shapes; each is also stretched to the minimum
            # length with its own last character, so minLength holds with the pattern.
            candidates = (base, "a", "A", "0", "a1", "sample", "2026-01-01", "a@example.com")
            for candidate in candidates:
                text = _fit(candidate, low, high)
                if matcher.search(text) is not None:
                    return text
        return _fit(base, low, high)

    def number(self, schema: Mapping[str, JSONValue], *, integer: bool) -> float:
        low = _bound(schema, "minimum", "exclusiveMinimum", 1 if integer else 1e-6)
        high = _bound(schema, "maximum", "exclusiveMaximum", -1 if integer else -1e-6)
        if low is None and high is None:
            return float(self.rng.randrange(1, 10))
        if low is None:
            return float(high) - 1 if high is not None else 0.0
        if high is None:
            return float(low) + 1
        middle = (low + high) / 2
        return float(round(middle)) if integer and low <= round(middle) <= high else middle


def _fit(text: str, low: int, high: int | None) -> str:
    """``text`` padded (with its last character) to ``low`` and cut to ``high`` characters."""
    if len(text) < low:
        text = text + (text[-1:] or "x") * (low - len(text))
    return text if high is None else text[:high]


def _bound(
    schema: Mapping[str, JSONValue], inclusive: str, exclusive: str, nudge: float
) -> float | None:
    value = schema.get(inclusive)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    value = schema.get(exclusive)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) + nudge
    return None


def _prefer_non_null(options: list[JSONValue]) -> Mapping[str, JSONValue]:
    mappings = [option for option in options if isinstance(option, Mapping)]
    for option in mappings:
        if option.get("type") != "null":
            return option
    return mappings[0] if mappings else {}
