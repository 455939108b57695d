"""The store tests' fixtures live in ``tests/store/backends.py`` (a plugin of the suite)."""

from __future__ import annotations

from tests.store.backends import Backend, BackendName, fresh_schema

__all__ = ["Backend", "BackendName", "fresh_schema"]
