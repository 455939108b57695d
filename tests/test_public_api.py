"""The public API: one home per name, the count the spec states, nothing private leaks."""

from __future__ import annotations

import ast
import importlib
import re
from collections import Counter
from pathlib import Path

import pytest

import weakincentives

ROOT = Path(__file__).parent.parent
SPEC = ROOT / "specs" / "PUBLIC_API.md"
BUDGET = 150

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
]


def _exported(name: str) -> list[str]:
    return list(importlib.import_module(name).__all__)


def _internal(name: str) -> list[str]:
    return list(getattr(importlib.import_module(name), "_INTERNAL", ()))


def _sort_key(item: str) -> tuple[bool, str]:
    return (not item.isupper(), item)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_public_and_importable(name: str) -> None:
    """`__all__` (and the internal list) is sorted, names no private module, and resolves."""
    module = importlib.import_module(name)
    for names in (_exported(name), _internal(name)):
        assert names == sorted(names, key=_sort_key)
        for entry in names:
            assert not entry.startswith("_")
            assert getattr(module, entry) is not None


def test_the_top_level_package_exports_nothing() -> None:
    """Every name lives in its subpackage; the top level re-exports none of them."""
    assert weakincentives.__all__ == []
    assert not hasattr(weakincentives, "Prompt")
    with pytest.raises(ImportError, match="Session"):
        exec("from weakincentives import Session", {})


def _spec_text() -> str:
    return SPEC.read_text()


def _spec_public() -> dict[str, tuple[int, list[str]]]:
    sections = re.findall(r"^## `([\w.]+)` \((\d+)\)\n\n(.*?)$", _spec_text(), flags=re.M)
    return {name: (int(count), re.findall(r"`(\w+)`", listed)) for name, count, listed in sections}


def _spec_internal() -> dict[str, tuple[int, list[str]]]:
    internal = _spec_text().split("\n## Internal names\n", 1)[1]
    lines = re.findall(r"^- `([\w.]+)` \((\d+)\): (.*)$", internal, flags=re.M)
    return {name: (int(count), re.findall(r"`(\w+)`", listed)) for name, count, listed in lines}


def test_the_public_surface_is_the_one_the_spec_lists() -> None:
    """Every package's __all__ matches specs/PUBLIC_API.md, so the surface changes on purpose."""
    listed = _spec_public()
    assert sorted(listed) == sorted(PACKAGES)
    for name, (count, names) in listed.items():
        assert _exported(name) == names, name
        assert count == len(names), name


def test_the_spec_states_the_total_and_it_is_within_budget() -> None:
    """The total the spec states is the computed one, and it stays at most 150."""
    total = sum(len(_exported(name)) for name in PACKAGES)
    stated = re.search(r"^(\d+) names in all\.$", _spec_text(), flags=re.M)
    assert stated is not None
    assert int(stated.group(1)) == total
    assert total <= BUDGET


def test_every_name_has_one_home() -> None:
    """No name is exported (or kept as an internal name) by two packages."""
    homes = Counter(entry for name in PACKAGES for entry in (*_exported(name), *_internal(name)))
    assert [entry for entry, count in homes.items() if count > 1] == []


def test_the_internal_names_are_the_ones_the_spec_lists() -> None:
    """Names kept importable but not public are listed too, each in one package."""
    listed = _spec_internal()
    kept = {name: _internal(name) for name in PACKAGES if _internal(name)}
    assert {name: names for name, (_, names) in listed.items()} == kept
    assert all(count == len(names) for count, names in listed.values())


@pytest.mark.parametrize("name", PACKAGES)
def test_exports_name_their_public_home(name: str) -> None:
    """Exported classes and functions report their package, never an _implementation module."""
    module = importlib.import_module(name)
    for entry in (*_exported(name), *_internal(name)):
        value = getattr(module, entry)
        home = getattr(value, "__module__", None)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
            assert home == name, (entry, home)


def _imports(source: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "weakincentives"
        ):
            found.extend((str(node.module), alias.name) for alias in node.names)
    return found


def _allowed(module: str, *, internal: bool) -> set[str]:
    target = importlib.import_module(module)
    if module == "weakincentives.errors" and internal:
        return {name for name in vars(target) if not name.startswith("_")}
    return {*_exported(module), *(_internal(module) if internal else ())}


SOURCES = sorted((ROOT / "src" / "weakincentives").rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_packages_import_each_other_through_their_homes(path: Path) -> None:
    """A package imports another's public or internal names from that package, nothing else."""
    own = path.relative_to(ROOT / "src" / "weakincentives").parts[0].removesuffix(".py")
    for module, entry in _imports(path.read_text()):
        parts = module.split(".")
        if len(parts) < 2 or parts[1] == own or parts[1].startswith("_"):
            continue
        assert entry in _allowed(module, internal=True), (module, entry)


def _user_facing_sources() -> list[tuple[str, str]]:
    block = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
    documents = [ROOT / "README.md", ROOT / "llms.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [
        (f"{path.relative_to(ROOT)}#{index + 1}", match.group(1))
        for path in documents
        for index, match in enumerate(block.finditer(path.read_text()))
    ]
    found.extend(
        (str(path.relative_to(ROOT)), path.read_text())
        for path in sorted((ROOT / "examples").glob("*.py"))
    )
    return found


@pytest.mark.parametrize(
    ("name", "source"), _user_facing_sources(), ids=[name for name, _ in _user_facing_sources()]
)
def test_docs_and_examples_import_only_public_names(name: str, source: str) -> None:
    """What a user copies imports public names from their one home."""
    for module, entry in _imports(source):
        assert module in PACKAGES, (name, module)
        assert entry in _allowed(module, internal=False), (name, module, entry)
