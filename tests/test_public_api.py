"""The public API: every exported name exists, lists are sorted, nothing private leaks."""

from __future__ import annotations

import importlib

import pytest

import weakincentives
from weakincentives import adapters, prompt, runtime

PACKAGES = [
    "weakincentives",
    "weakincentives.adapters",
    "weakincentives.adapters.openai",
    "weakincentives.discovery",
    "weakincentives.prompt",
    "weakincentives.runtime",
    "weakincentives.serde",
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
