"""The public API: every exported name exists, lists are sorted, nothing private leaks."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import weakincentives
from weakincentives import adapters, prompt, runtime

PACKAGES = [
    "weakincentives",
    "weakincentives.adapters",
    "weakincentives.adapters.anthropic",
    "weakincentives.adapters.openai",
    "weakincentives.discovery",
    "weakincentives.errors",
    "weakincentives.mcp",
    "weakincentives.prompt",
    "weakincentives.runtime",
    "weakincentives.serde",
    "weakincentives.store",
    "weakincentives.temporal",
    "weakincentives.tools",
    "weakincentives.tools.code_interpreter",
    "weakincentives.tools.web_search",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_public_and_importable(name: str) -> None:
    """`__all__` is sorted, names no private module, and every entry resolves."""
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=lambda item: (not item.isupper(), item))
    for entry in exported:
        assert not entry.startswith("_")
        assert getattr(module, entry) is not None


def test_top_level_names_are_the_subpackages_objects() -> None:
    """Top-level re-exports are the same objects as in their home packages."""
    assert weakincentives.Prompt is prompt.Prompt
    assert weakincentives.Session is runtime.Session
    assert weakincentives.OfflineAdapter is adapters.OfflineAdapter


SPEC = Path(__file__).parent.parent / "specs" / "PUBLIC_API.md"


def _spec_lists() -> dict[str, list[str]]:
    sections = re.findall(r"^## `([\w.]+)` \((\d+)\)\n\n(.*?)$", SPEC.read_text(), flags=re.M)
    return {name: re.findall(r"`(\w+)`", listed) for name, _, listed in sections}


def test_the_public_surface_is_the_one_the_spec_lists() -> None:
    """Every package's __all__ matches specs/PUBLIC_API.md, so the surface changes on purpose."""
    listed = _spec_lists()
    assert set(listed) >= set(PACKAGES)
    for name, names in listed.items():
        assert list(importlib.import_module(name).__all__) == names, name


@pytest.mark.parametrize("name", PACKAGES)
def test_exports_name_their_public_home(name: str) -> None:
    """Exported classes and functions report a public module, never an _implementation one."""
    module = importlib.import_module(name)
    for entry in module.__all__:
        value = getattr(module, entry)
        home = getattr(value, "__module__", None)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
            assert isinstance(home, str)
            assert not any(part.startswith("_") for part in home.split(".")), (entry, home)
