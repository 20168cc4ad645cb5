"""Replies that are not the API's: web pages, bytes that are not text, JSON that does not parse."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from app.core.providers.errors.non_api_replies import (
    WEB_PAGE_SNIFF_BYTES,
    looks_like_html,
    refuse_web_page,
    unreadable_reply_error,
    web_page_error,
)

BASE_URL = "http://127.0.0.1:9/v1"
KEY = "sk-test-SECRET-0123456789abcdef"
PAGE = (
    "<!DOCTYPE html><html><head><title>502 Bad\n Gateway</title></head>"
    "<body><h1>Bad Gateway</h1><p>nginx</p></body></html>"
)


def test_web_pages_are_told_from_json_and_event_streams() -> None:
    assert looks_like_html(PAGE)
    assert looks_like_html("  <html><body>hi</body></html>")
    assert not looks_like_html('{"error": {"message": "<html>"}}')
    assert not looks_like_html('data: {"choices": []}\n\n')


@pytest.mark.parametrize(
    ("status", "category", "hint"),
    [
        (502, "server", "the service behind it may be down"),
        (404, "not_found", "is the base URL right?"),
        (405, "bad_request", "is the base URL right?"),
        (200, "bad_request", "network login page"),
        (None, "bad_request", "network login page"),
    ],
)
def test_a_web_page_is_classified_by_its_status(
    status: int | None, category: str, hint: str
) -> None:
    error = web_page_error(PAGE, base_url=BASE_URL, status=status)
    assert error.category == category
    assert error.code == "web_page"
    assert hint in error.message
    assert error.retryable == (category == "server")


def test_the_details_name_the_page_and_hold_no_secret() -> None:
    page = PAGE.replace("nginx", f"nginx key={KEY}")
    error = web_page_error(page, base_url=BASE_URL, status=502, secrets=[KEY])
    assert error.details is not None
    assert "HTTP 502 Bad Gateway" in error.details
    assert "page title: 502 Bad Gateway" in error.details
    assert KEY not in error.details and KEY not in error.message


async def test_a_streaming_web_page_is_refused_after_reading_at_most_the_sniff() -> None:
    big = PAGE.encode() + b"x" * (WEB_PAGE_SNIFF_BYTES * 3)
    read: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        for start in range(0, len(big), 4096):
            read.append(start)
            yield big[start : start + 4096]

    response = httpx2.Response(503, headers={"content-type": "text/html"}, content=body())
    with pytest.raises(Exception) as caught:
        await refuse_web_page(response, base_url=BASE_URL)
    assert getattr(caught.value, "category", None) == "server"
    assert len(read) * 4096 <= WEB_PAGE_SNIFF_BYTES + 4096


async def test_a_json_or_event_stream_response_is_let_through_unread() -> None:
    read: list[bytes] = []

    async def body() -> AsyncIterator[bytes]:
        read.append(b"data: {}\n\n")
        yield read[-1]

    response = httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, content=body()
    )
    await refuse_web_page(response, base_url=BASE_URL)  # no error
    assert read == []  # the stream is left for the provider to read


def test_json_that_does_not_parse_is_said_in_words_with_the_parser_in_details() -> None:
    try:
        json.loads('{"choices": [')
    except json.JSONDecodeError as exc:
        error = unreadable_reply_error(exc, BASE_URL, ())
    assert error.category == "malformed"
    assert error.code == "unreadable"
    assert "not valid JSON" in error.message
    assert error.details is not None and "reply starts: '{\"choices\": ['" in error.details


def test_a_web_page_where_json_was_expected_is_said_as_a_web_page() -> None:
    try:
        json.loads(PAGE)
    except json.JSONDecodeError as exc:
        error = unreadable_reply_error(exc, BASE_URL, ())
    assert error.code == "web_page"
    assert "web page instead of the API" in error.message


def test_bytes_that_are_not_text_are_said_as_such() -> None:
    try:
        b"ok \xff\xfe bad".decode("utf-8")
    except UnicodeDecodeError as exc:
        error = unreadable_reply_error(exc, BASE_URL, ())
    assert error.category == "malformed"
    assert "invalid UTF-8" in error.message
    assert error.details is not None and "\\xff\\xfe" in error.details
