"""Fixtures for the command-line tests: the adapters' loopback server, for real-provider runs."""

from __future__ import annotations

from tests.adapters.conftest import openai_loopback

__all__ = ["openai_loopback"]
