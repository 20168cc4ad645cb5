"""Session titles: made from a user message, typed by the user."""

from __future__ import annotations

import pytest

from app.core.sessions.titles import (
    NEW_CONVERSATION_TITLE,
    TITLE_MAX_CHARS,
    _given_title,
    make_title,
)


def test_a_title_is_the_message_on_one_line() -> None:
    assert make_title("  Why does\n the build\tfail?  ") == "Why does the build fail?"
    assert make_title(" \n\t ") == NEW_CONVERSATION_TITLE


def test_a_long_message_is_cut_with_an_ellipsis() -> None:
    title = make_title("word " * 40)
    assert len(title) <= TITLE_MAX_CHARS and title.endswith("word…")
    exact = "x" * TITLE_MAX_CHARS
    assert make_title(exact) == exact  # at the limit: kept whole


def test_a_typed_title_is_trimmed_and_must_say_something() -> None:
    assert _given_title("  Release notes ") == "Release notes"
    with pytest.raises(ValueError, match="cannot be empty"):
        _given_title("   ")
