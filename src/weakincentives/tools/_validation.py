"""Checks shared by hosted tool configurations: problem collection and domain names.

Configurations validate in ``__post_init__``: they collect every problem, then
raise one :class:`~weakincentives.errors.ConfigValidationError`. Nothing is
normalised silently: a value that is almost right is rejected with the exact
spelling to use instead, so what the caller wrote is what the provider gets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from weakincentives.errors import ConfigValidationError

__all__ = [
    "ConfigProblem",
    "domain_problem",
    "domain_tuple_problems",
    "positive_int_problem",
    "raise_config_problems",
]

_LABEL = re.compile(r"^[a-z0-9-]+$")
_MAX_LABEL = 63
_MAX_DOMAIN = 253


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One thing wrong with one field of a configuration."""

    field_name: str
    value: object
    message: str


def raise_config_problems(config_type: type[object], problems: Sequence[ConfigProblem]) -> None:
    """Raise one ConfigValidationError listing ``problems``; do nothing when there are none."""
    if not problems:
        return
    first = problems[0]
    if len(problems) == 1:
        message = first.message
    else:
        lines = "\n".join(f"- {problem.message}" for problem in problems)
        message = f"{len(problems)} problems in {config_type.__name__}:\n{lines}"
    raise ConfigValidationError(
        message, config_type=config_type, field_name=first.field_name, value=first.value
    )


def positive_int_problem(where: str, value: object) -> str | None:
    """Say what is wrong with an optional count or duration that must be at least 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{where} must be an int, got {type(value).__name__}"
    if value < 1:
        return f"{where} must be at least 1, got {value}"
    return None


def domain_tuple_problems(owner: str, field_name: str, value: object) -> list[ConfigProblem]:
    """Check a tuple of bare domain names, reporting each bad or repeated entry."""
    where = f"{owner}.{field_name}"
    if not isinstance(value, tuple):
        hint = f"; write ({value!r},)" if isinstance(value, str) else ""
        message = f"{where} must be a tuple of domain names, got {type(value).__name__}{hint}"
        return [ConfigProblem(field_name, value, message)]
    problems: list[ConfigProblem] = []
    seen: set[str] = set()
    for index, domain in enumerate(value):
        problem = domain_problem(domain)
        if problem is None and domain in seen:
            problem = "is listed twice"
        if problem is not None:
            problems.append(
                ConfigProblem(field_name, domain, f"{where}[{index}] {domain!r} {problem}")
            )
        if isinstance(domain, str):
            seen.add(domain)
    return problems


def domain_problem(domain: object) -> str | None:
    """Say what is wrong with a bare host name such as ``cdc.gov``, or return None.

    The text reads after the domain itself (``'CDC.gov' must be lowercase; use
    'cdc.gov'``) and suggests the corrected spelling whenever one can be derived.
    """
    if not isinstance(domain, str):
        return f"must be a string, got {type(domain).__name__}"
    reason = _first_reason(domain)
    if reason is None:
        return None
    suggestion = _suggest(domain)
    if suggestion is not None and suggestion != domain and _structure_problem(suggestion) is None:
        return f"{reason}; use {suggestion!r}"
    return reason


def _first_reason(domain: str) -> str | None:
    if not domain:
        return "must not be empty"
    if any(char.isspace() for char in domain):
        return "must not contain whitespace"
    if "://" in domain:
        return "must be a bare host name without a scheme"
    if any(char in domain for char in "/?#"):
        return "must be a bare host name without a path"
    if "@" in domain:
        return "must be a bare host name without user info"
    if ":" in domain:
        return "must be a bare host name without a port"
    if domain.startswith("*."):
        return "must not use a wildcard: subdomains of a listed domain are already included"
    if not domain.isascii():
        return "must be ASCII: write an internationalised name in its IDNA (xn--) form"
    if domain != domain.lower():
        return "must be lowercase"
    if domain.endswith("."):
        return "must not end with '.'"
    return _structure_problem(domain)


def _structure_problem(domain: str) -> str | None:
    labels = domain.split(".")
    if any(not label for label in labels):
        return "has an empty label (two dots in a row, or a leading dot)"
    if any(_LABEL.fullmatch(label) is None for label in labels):
        return "may only contain lowercase letters, digits, '-' and '.'"
    if any(len(label) > _MAX_LABEL for label in labels):
        return f"has a label longer than {_MAX_LABEL} characters"
    if any(label.startswith("-") or label.endswith("-") for label in labels):
        return "has a label that starts or ends with '-'"
    if len(domain) > _MAX_DOMAIN:
        return f"is longer than {_MAX_DOMAIN} characters"
    if len(labels) < 2:
        return "needs a top-level domain, like 'example.com'"
    return None


def _suggest(domain: str) -> str | None:
    """Best-effort bare host name for a near miss, or None when none can be derived."""
    host = domain.strip()
    host = host.split("://", 1)[-1]
    host = re.split(r"[/?#]", host, maxsplit=1)[0]
    host = host.rsplit("@", 1)[-1]
    host = host.split(":", 1)[0]
    host = host.removeprefix("*.").rstrip(".").lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return host or None
