"""The build-time term table gives exactly what the tokenizer gives, on either kernel."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery._terms import Kind, TermTable
from weakincentives.discovery._text import stop_terms, tokenize

_WORDS = st.sampled_from(
    [
        "getOrderById",
        "YouTube",
        "PDFs",
        "it's",
        "Don\u2019t",
        "the",
        "a/b",
        "v1.0",
        "Récupère",
        "snake_case",
        "kebab-case",
        "~3",
        "",
        "x",
        "shortening",
        "please",
        "HTTPServer",
    ]
)
_TEXTS = st.lists(
    st.one_of(
        st.lists(_WORDS, max_size=6).map(" ".join),
        st.text(max_size=20),
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(texts=_TEXTS, vectorised=st.booleans())
def test_columns_are_the_tokenizer_output_in_order(texts: list[str], vectorised: bool) -> None:
    """Each document's content terms and stop words, in order; document positions ascending."""
    table = TermTable()
    chunked = table.chunk(texts)
    checks: list[tuple[Kind, Callable[[str], list[str]]]] = [
        ("content", tokenize),
        ("stops", stop_terms),
    ]
    for kind, expected in checks:
        terms, docs = table.column(chunked, kind, vectorised=vectorised)
        assert len(terms) == len(docs)
        assert list(docs) == sorted(docs)
        for position, text in enumerate(texts):
            found = [table.terms[t] for t, d in zip(terms, docs, strict=True) if d == position]
            assert found == expected(text)


@settings(max_examples=150, deadline=None)
@given(texts=_TEXTS)
def test_plain_terms_of_texts_and_ids(texts: list[str]) -> None:
    """``plains`` and ``plain_ids`` are ``tokenize(text, joined=False)`` of each text."""
    table = TermTable()
    expected = [tuple(tokenize(text, joined=False)) for text in texts]
    assert table.plains(table.chunk(texts)) == expected
    assert table.plain_ids(texts) == expected
    assert table.plain_ids(texts) == expected  # again, from the remembered parts


@pytest.mark.parametrize("vectorised", [True, False])
def test_chunks_added_after_a_column_was_expanded_are_seen(vectorised: bool) -> None:
    """The numpy layout is redone when new chunks arrive after an expansion."""
    table = TermTable()
    first = table.chunk(["weather forecast"])
    table.column(first, vectorised=vectorised)
    second = table.chunk(["currency converter"])
    terms, _ = table.column(second, vectorised=vectorised)
    assert [table.terms[t] for t in terms] == tokenize("currency converter")
