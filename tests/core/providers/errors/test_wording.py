"""The words of a provider error: secrets scrubbed, messages clipped, details bounded."""

from __future__ import annotations

from app.core.providers.errors.wording import (
    MAX_DETAILS,
    MAX_MESSAGE,
    clip,
    details_text,
    scrub_secrets,
    status_text,
)

KEY = "local-secret-0123"


def test_a_given_secret_and_anything_key_shaped_are_replaced() -> None:
    text = f"key {KEY} rejected; also sk-proj-ABCDEFGH1234 and Authorization: Bearer abc.def"
    scrubbed = scrub_secrets(text, [KEY])
    assert KEY not in scrubbed
    assert "sk-proj-ABCDEFGH1234" not in scrubbed
    assert "abc.def" not in scrubbed
    assert scrubbed.count("[redacted]") == 3
    assert "Bearer [redacted]" in scrubbed


def test_a_very_short_key_does_not_shred_ordinary_words() -> None:
    assert scrub_secrets("the context is full", ["x", "the"]) == "the context is full"


def test_clip_puts_a_message_on_one_bounded_line() -> None:
    assert clip("  server\n  said\tno  ") == "server said no"
    long = clip("word " * 400)
    assert len(long) == MAX_MESSAGE
    assert long.endswith("…")


def test_details_join_the_non_empty_parts_scrubbed_and_bounded() -> None:
    assert details_text("HTTP 500", "", f"body with {KEY}", secrets=(KEY,)) == (
        "HTTP 500\nbody with [redacted]"
    )
    long = details_text("x" * (MAX_DETAILS * 2))
    assert len(long) == MAX_DETAILS
    assert long.endswith("…")


def test_a_status_is_said_with_its_phrase_when_http_names_it() -> None:
    assert status_text(502) == "502 Bad Gateway"
    assert status_text(404) == "404 Not Found"
    assert status_text(599) == "599"


def test_the_bounds_hold_at_their_exact_lengths() -> None:
    exact = "y" * MAX_MESSAGE
    assert clip(exact) == exact  # at the bound: whole
    assert clip(exact + "z") == "y" * (MAX_MESSAGE - 1) + "…"  # one over: clipped
    whole = "d" * MAX_DETAILS
    assert details_text(whole) == whole
    assert details_text(whole + "e") == "d" * (MAX_DETAILS - 1) + "…"


def test_a_secret_of_six_characters_is_scrubbed_and_of_five_is_not() -> None:
    assert scrub_secrets("token abcdef here", ["abcdef"]) == "token [redacted] here"
    assert scrub_secrets("token abcde here", ["abcde"]) == "token abcde here"
