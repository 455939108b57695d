"""Prompt composition: sections, templates, rendering and tools."""
