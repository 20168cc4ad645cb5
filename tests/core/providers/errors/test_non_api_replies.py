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


# -- the details, word for word ----------------------------------------------------------------


def test_a_pages_summary_is_its_title_and_the_start_of_its_visible_text() -> None:
    page = "<html><title> A &amp;\n B </title><body><p>Hi&nbsp;there</p>x<b>y</b>z</body></html>"
    error = web_page_error(page, base_url=BASE_URL, status=None)
    summary = "page title: A & B; page text: Hi there x y z"
    assert error.details == f"{BASE_URL}\n{summary}\n{page}"
    untitled = web_page_error("<body>only text</body>", base_url=BASE_URL, status=None)
    assert untitled.details == f"{BASE_URL}\npage text: only text\n<body>only text</body>"
    long_text = "<body>" + "a" * 400 + "</body>"
    details = web_page_error(long_text, base_url=BASE_URL, status=None).details or ""
    assert details.splitlines()[1] == "page text: " + "a" * 300


def test_a_page_with_no_status_is_said_as_maybe_a_login_page_in_full() -> None:
    error = web_page_error("<html></html>", base_url=BASE_URL, status=None)
    assert error.message == (
        "the server answered with a web page instead of the API — is the base URL right? A "
        "network login page (hotel, train or café Wi-Fi) can also answer in its place."
    )
    assert error.details == f"{BASE_URL}\n<html></html>"


def test_a_pages_details_keep_its_start_and_hold_no_secret() -> None:
    page = f"<html>{KEY} " + "p" * 3000 + "</html>"
    details = web_page_error(page, base_url=BASE_URL, status=500, secrets=[KEY]).details or ""
    lines = details.splitlines()
    assert lines[0] == f"{BASE_URL}: HTTP 500 Internal Server Error"
    assert lines[2].startswith("<html>[redacted] ppp") and KEY not in details


def test_html_is_looked_for_in_the_first_thousand_characters() -> None:
    assert looks_like_html(" " * 995 + "<html>")
    assert not looks_like_html(" " * 996 + "<html>")  # only "<htm" is within them


def _page_response(body: bytes, content_type: str) -> httpx2.Response:
    return httpx2.Response(502, headers={"content-type": content_type}, content=body)


async def _refused(response: httpx2.Response, secrets: tuple[str, ...] = ()) -> Exception:
    with pytest.raises(Exception) as caught:
        await refuse_web_page(response, base_url=BASE_URL, secrets=secrets)
    return caught.value


async def test_a_streamed_page_is_read_in_its_own_charset_with_bad_bytes_replaced() -> None:
    latin = await _refused(_page_response("<p>café</p>".encode("latin-1"),
                                          "Text/HTML; charset=iso-8859-1"))
    assert getattr(latin, "details", "").endswith("\n<p>café</p>")
    broken = await _refused(_page_response(b"<p>\xff</p>", "text/html; charset=utf-8"))
    assert getattr(broken, "details", "").endswith("\n<p>\ufffd</p>")


async def test_a_streamed_pages_details_name_the_address_and_hold_no_secret() -> None:
    error = await _refused(_page_response(f"<p>{KEY}</p>".encode(), "text/html"), (KEY,))
    assert getattr(error, "details", "") == (
        f"{BASE_URL}: HTTP 502 Bad Gateway\npage text: [redacted]\n<p>[redacted]</p>"
    )


async def test_a_response_without_a_content_type_is_let_through() -> None:
    response = httpx2.Response(200, content=b"{}")
    assert "content-type" not in response.headers
    await refuse_web_page(response, base_url=BASE_URL)  # no error


async def test_reading_a_streamed_page_stops_once_the_sniff_is_full() -> None:
    pulled: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        for n in range(8):
            pulled.append(n)
            yield b"<" + b"h" * (WEB_PAGE_SNIFF_BYTES // 4 - 1)

    await _refused(httpx2.Response(502, headers={"content-type": "text/html"}, content=body()))
    assert pulled == [0, 1, 2, 3]  # 4 quarters fill it exactly: the fifth is never asked for


def test_bytes_that_are_not_text_show_the_sixteen_bytes_from_the_error_and_no_secret() -> None:
    data = b"0123456789" + b"\xff" + bytes(range(65, 65 + 30))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        error = unreadable_reply_error(exc, f"{BASE_URL}?key={KEY}", (KEY,))
    assert error.details == (
        f"{BASE_URL}?key=[redacted]\n"
        "'utf-8' codec can't decode byte 0xff in position 10: invalid start byte; "
        "bytes near the error: b'\\xffABCDEFGHIJKLMNO'"
    )


def test_json_that_does_not_parse_shows_the_first_200_characters_of_the_reply() -> None:
    doc = '{"a": ' + "1" * 300
    try:
        json.loads(doc)
    except json.JSONDecodeError as exc:
        error = unreadable_reply_error(exc, BASE_URL, ())
    assert error.details == (
        f"{BASE_URL}\nExpecting ',' delimiter: line 1 column 307 (char 306); reply starts: "
        f"{doc[:200]!r}"
    )


def test_a_web_page_where_json_was_expected_names_the_address_and_hides_secrets() -> None:
    page = f"<html><title>Login</title>{KEY}</html>"
    try:
        json.loads(page)
    except json.JSONDecodeError as exc:
        error = unreadable_reply_error(exc, BASE_URL, (KEY,))
    assert error.details == (
        f"{BASE_URL}\npage title: Login; page text: [redacted]\n"
        "<html><title>Login</title>[redacted]</html>"
    )


# A secret not shaped like an API key: only the secrets given can take it out.
PASSWORD = "opensesame-4242"


async def test_a_secret_not_shaped_like_a_key_is_taken_out_of_every_pages_details() -> None:
    page = f"<html><title>{PASSWORD}</title></html>"
    direct = web_page_error(page, base_url=BASE_URL, status=502, secrets=[PASSWORD])
    streamed = await _refused(_page_response(page.encode(), "text/html"), (PASSWORD,))
    try:
        json.loads(page)
    except json.JSONDecodeError as exc:
        parsed = unreadable_reply_error(exc, BASE_URL, (PASSWORD,))
    for error in (direct, streamed, parsed):
        details = getattr(error, "details", "") or ""
        assert PASSWORD not in details and "page title: [redacted]" in details


def test_a_secret_not_shaped_like_a_key_is_taken_out_of_a_bad_replys_details() -> None:
    try:
        json.loads(f"{{{PASSWORD}")
    except json.JSONDecodeError as exc:
        error = unreadable_reply_error(exc, BASE_URL, (PASSWORD,))
    assert error.details is not None and PASSWORD not in error.details
    assert "reply starts: '{[redacted]'" in error.details
