"""weakincentives.mcp exports a sorted, public, importable API, and nothing imports it eagerly."""

from __future__ import annotations

import subprocess
import sys

import weakincentives.mcp as mcp_package


def test_all_is_sorted_public_and_importable() -> None:
    """`__all__` is sorted (constants first), names no private module, and resolves."""
    exported = list(mcp_package.__all__)
    assert exported == sorted(exported, key=lambda item: (not item.isupper(), item))
    for entry in exported:
        assert not entry.startswith("_")
        assert getattr(mcp_package, entry) is not None


def test_the_core_package_does_not_import_the_sdk() -> None:
    """`import weakincentives` and the CLI stay usable without the mcp extra."""
    code = (
        "import sys, weakincentives, weakincentives._cli; "
        "print('mcp' in sys.modules, 'weakincentives.mcp' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]
