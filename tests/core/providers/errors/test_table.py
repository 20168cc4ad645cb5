"""Errors a user can meet, in words: web pages instead of the API, unreadable bytes, timeouts,
and a key inside the base URL. The technical detail is kept apart, in ``details``."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import openai
import pytest

from app.core.items import user_message
from app.core.providers.base import ModelRequest, ProviderError
from app.core.providers.chat import ChatCompletionsProvider
from app.core.providers.errors.table import classify_exception
from app.core.providers.responses import ResponsesProvider

KEY = "sk-test-DO-NOT-LEAK-0123456789"
BASE_URL = "https://gateway.example/v1"
NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0 (Ubuntu)</center>\r\n"
    "</body>\r\n</html>\r\n"
)
PORTAL = (
    "<!DOCTYPE html><html><head><title>Welcome to CityHotel Wi-Fi</title></head>"
    "<body><form action='/login'>Accept the terms to get online</form></body></html>"
)
REQUEST = ModelRequest(model="m", instructions="be brief", input=[user_message("hi")])


def _status_error(status: int, body: str, base_url: str = BASE_URL) -> openai.APIStatusError:
    request = httpx2.Request("POST", f"{base_url}/responses")
    response = httpx2.Response(
        status, headers={"content-type": "text/html"}, content=body.encode(), request=request
    )
    client = openai.OpenAI(api_key=KEY, base_url=base_url)
    return client._make_status_error_from_response(response)


def _client(handler: Callable[[httpx2.Request], httpx2.Response]) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


async def _stream_error(provider: ResponsesProvider | ChatCompletionsProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        async for _event in provider.stream(REQUEST):
            pass
    await provider.close()
    return caught.value


def test_a_502_nginx_page_is_described_in_words_with_the_page_in_details() -> None:
    error = classify_exception(_status_error(502, NGINX_502), BASE_URL, secrets=[KEY])

    assert error.message == (
        "the server answered with a web page instead of the API (HTTP 502 Bad Gateway) — "
        "is the base URL right? If it is, the service behind it may be down."
    )
    assert "<" not in error.message
    assert error.category == "server" and error.retryable
    assert error.status == 502
    assert error.details is not None
    assert "page title: 502 Bad Gateway" in error.details
    assert "nginx/1.18.0" in error.details


def test_a_404_web_page_asks_about_the_base_url_and_is_not_retried() -> None:
    page = "<!doctype html><html><title>Not Found</title><body>No such page</body></html>"
    error = classify_exception(_status_error(404, page), BASE_URL)
    assert error.message == (
        "the server answered with a web page instead of the API (HTTP 404 Not Found) — "
        "is the base URL right?"
    )
    assert not error.retryable


def test_a_401_web_page_is_still_a_rejected_key_with_the_page_in_details() -> None:
    page = "<html><head><title>401 Authorization Required</title></head></html>"
    error = classify_exception(_status_error(401, page), BASE_URL, secrets=[KEY])
    assert error.category == "auth"
    assert error.message == f"the server rejected the API key for {BASE_URL}"
    assert error.details is not None and "401 Authorization Required" in error.details


@pytest.mark.parametrize("provider_class", [ResponsesProvider, ChatCompletionsProvider])
async def test_a_captive_portal_page_instead_of_the_stream_says_so(
    provider_class: type[ResponsesProvider | ChatCompletionsProvider],
) -> None:
    def portal(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/html"}, text=PORTAL)

    provider = provider_class(BASE_URL, KEY, http_client=_client(portal))
    error = await _stream_error(provider)

    assert error.message.startswith(
        "the server answered with a web page instead of the API (HTTP 200 OK) — "
        "is the base URL right? A network login page"
    )
    assert "stream closed" not in error.message
    assert not error.retryable  # the same address gives the same page
    assert error.details is not None and "Welcome to CityHotel Wi-Fi" in error.details


async def test_invalid_bytes_in_the_stream_are_described_not_a_codec_error() -> None:
    def garbage(request: httpx2.Request) -> httpx2.Response:
        body = b'data: {"type": "response.output_text.delta", "delta": "\xff\xfe"}\n\n'
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    provider = ResponsesProvider(BASE_URL, KEY, http_client=_client(garbage))
    error = await _stream_error(provider)

    assert error.message == (
        "the server sent bytes that are not text (invalid UTF-8) where the API's JSON was "
        "expected — is the base URL an OpenAI-compatible API?"
    )
    assert "codec" not in error.message
    assert error.category == "malformed"
    assert error.details is not None and "codec can't decode" in error.details


async def test_a_web_page_from_the_compact_endpoint_is_described() -> None:
    def page(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "application/json"}, text=PORTAL)

    provider = ResponsesProvider(BASE_URL, KEY, http_client=_client(page))
    with pytest.raises(ProviderError) as caught:
        await provider.compact(REQUEST)
    await provider.close()
    assert caught.value.message.startswith(
        "the server answered with a web page instead of the API — is the base URL right?"
    )


def test_invalid_json_says_so_and_keeps_the_parser_message_in_details() -> None:
    try:
        json.loads("{not json")
    except json.JSONDecodeError as exc:
        error = classify_exception(exc, BASE_URL)
    assert (
        error.message == "the server sent a reply that is not valid JSON, so it could not be read"
    )
    assert error.details is not None and "Expecting property name" in error.details


def test_timeouts_are_marked_as_stalls() -> None:
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    before = classify_exception(openai.APITimeoutError(request=request), BASE_URL)
    assert before.code == "timeout"
    assert before.message == (
        f"Coco could not reach the server at {BASE_URL}: it did not answer in time (timed "
        "out). Check that the server is running and reachable; a slow server may need a longer "
        "request timeout in Settings."
    )
    during = classify_exception(httpx2.ReadTimeout("timed out", request=request), BASE_URL)
    assert during.code == "timeout"
    assert during.message == (
        "the server stopped sending: nothing arrived for the whole request timeout"
    )


# --- a key inside the base URL ------------------------------------------------------------------

KEYED_URL = f"https://gateway.example/{KEY}/v1"


def test_a_key_in_the_base_url_is_not_in_an_auth_error() -> None:
    exc = _status_error(401, '{"error": {"message": "bad key"}}', KEYED_URL)
    error = classify_exception(exc, KEYED_URL, secrets=[KEY])
    assert error.category == "auth"
    assert KEY not in error.message
    assert (
        error.message == "the server rejected the API key for https://gateway.example/[redacted]/v1"
    )


def test_a_key_in_the_base_url_is_not_in_a_connection_error_or_its_details() -> None:
    request = httpx2.Request("POST", f"{KEYED_URL}/responses")
    try:
        try:
            raise httpx2.ConnectError(f"Connection refused for {KEYED_URL}")
        except httpx2.ConnectError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as exc:
        error = classify_exception(exc, KEYED_URL, secrets=[KEY])
    assert KEY not in error.message and KEY not in str(error)
    assert error.details is not None and KEY not in error.details
    assert error.message.startswith(
        "Coco could not reach the server at https://gateway.example/[redacted]/v1"
    )


def test_a_web_page_error_never_shows_the_key() -> None:
    page = f"<html><title>Error</title><body>bad request to /{KEY}/v1</body></html>"
    error = classify_exception(_status_error(502, page, KEYED_URL), KEYED_URL, secrets=[KEY])
    assert error.details is not None
    assert KEY not in error.details and KEY not in error.message


# ------------------------------------------------------------------ boundaries (issue 40)


def _json_error(status: int, message: str = "it went wrong") -> openai.APIStatusError:
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    response = httpx2.Response(
        status, json={"error": {"message": message}}, request=request
    )
    return openai.OpenAI(api_key=KEY, base_url=BASE_URL)._make_status_error_from_response(
        response
    )


@pytest.mark.parametrize(
    ("status", "category", "message"),
    [
        (400, "bad_request", "it went wrong"),
        (403, "auth", None),
        (404, "not_found", f"not found on {BASE_URL}: it went wrong"),
        (405, "bad_request", "it went wrong"),
        (428, "bad_request", "it went wrong"),
        (429, "rate_limit", f"rate limited by {BASE_URL}: it went wrong"),
        (430, "bad_request", "it went wrong"),
        (499, "bad_request", "it went wrong"),
        (500, "server", "server error 500: it went wrong"),
        (501, "server", "server error 501: it went wrong"),
    ],
)
def test_each_status_is_classified_at_the_edges_of_its_range(
    status: int, category: str, message: str | None
) -> None:
    error = classify_exception(_json_error(status), BASE_URL)
    assert (error.category, error.status) == (category, status)
    if message is not None:
        assert error.message == message


def test_a_model_output_error_is_a_server_errors_only() -> None:
    text = "Failed to parse tool call arguments as JSON"
    assert classify_exception(_json_error(499, text), BASE_URL).category == "bad_request"
    assert classify_exception(_json_error(500, text), BASE_URL).category == "model_output"


@pytest.mark.parametrize(
    ("status", "category"),
    [(200, "bad_request"), (299, "bad_request"), (300, "bad_request"), (404, "not_found"),
     (499, "bad_request"), (500, "server")],
)
def test_a_web_page_is_classified_by_its_status(status: int, category: str) -> None:
    error = classify_exception(_status_error(status, PORTAL), BASE_URL)
    assert (error.category, error.code) == (category, "web_page")
    login = "A network login page (hotel, train or café Wi-Fi)"
    assert (login in error.message) is (status < 300)
    assert ("the service behind it may be down" in error.message) is (status >= 500)
