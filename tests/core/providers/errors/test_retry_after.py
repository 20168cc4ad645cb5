"""How long a server asks to wait: Retry-After headers and "try again in" messages."""

from __future__ import annotations

import email.utils

import pytest

from app.core.providers.errors.retry_after import parse_retry_after, retry_after_from_message


def test_milliseconds_header_wins_over_seconds() -> None:
    assert parse_retry_after({"Retry-After-Ms": "1500", "Retry-After": "30"}) == 1.5


def test_seconds_header_any_case() -> None:
    assert parse_retry_after({"retry-after": " 7 "}) == 7.0
    assert parse_retry_after({"RETRY-AFTER": "0.25"}) == 0.25


def test_an_http_date_counts_from_now() -> None:
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 42, usegmt=True)
    assert parse_retry_after({"Retry-After": header}, now=now) == pytest.approx(42.0)
    # A date already past asks for no wait at all.
    past = email.utils.formatdate(now - 100, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0


def test_without_a_now_given_the_date_counts_from_the_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = 1_700_000_000.0
    monkeypatch.setattr("app.core.providers.errors.retry_after.time.time", lambda: clock)
    header = email.utils.formatdate(clock + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": header}) == pytest.approx(30.0)


def test_no_usable_header_means_no_wait_asked() -> None:
    assert parse_retry_after(None) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After-Ms": "x"}) is None  # and no seconds header
    assert parse_retry_after({"Retry-After": "-5"}) == 0.0


@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Rate limit reached. Please try again in 1.5s.", 1.5),
        ("Please try again in 250ms", 0.25),
        ("try again in 20 seconds", 20.0),
        ("Rate limit reached, slow down", None),
    ],
)
def test_in_band_messages_say_the_wait_in_words(message: str, seconds: float | None) -> None:
    assert retry_after_from_message(message) == seconds
