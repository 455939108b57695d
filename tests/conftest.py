"""Shared fixtures for the whole suite."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the host's provider credentials and proxies out of every test."""
    for name in list(os.environ):
        if name.startswith("OPENAI_") or name.lower() in {"http_proxy", "https_proxy", "all_proxy"}:
            monkeypatch.delenv(name, raising=False)
