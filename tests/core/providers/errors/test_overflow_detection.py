"""Overflow detection and error classification (compaction-spec.md section 5)."""

from __future__ import annotations

import email.utils
import json

import httpx2
import openai
import pytest

from app.core.providers.errors.table import (
    classify_error_payload,
    classify_exception,
    is_context_overflow,
    parse_retry_after,
    scrub_secrets,
)

BASE_URL = "http://127.0.0.1:9/v1"
KEY = "sk-test-SECRET-0123456789abcdef"

# One real-world message per phrase of the spec, in the words the servers use.
OVERFLOW_MESSAGES = [
    "prompt is too long: 215000 tokens > 200000 maximum",
    "Input is too long for requested model.",
    "Your input exceeds the context window of this model.",
    "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
    "Please reduce the length of the messages or completion.",
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
    "prompt token count of 130000 exceeds the limit of 128000",
    "the request exceeds the available context size, try increasing it",
    (
        "Trying to keep the first 5000 tokens when context the overflows. However, the model "
        "is loaded with context length of 4096"
    ),
    "The number of tokens to keep from the initial prompt is greater than the context length",
    "n_keep: 5000 >= n_ctx: 4096",
    "the input length exceeds the context length",
    "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
    "context length exceeded",
    "Too many tokens in the request",
    "Token limit exceeded for this request",
]


@pytest.mark.parametrize("message", OVERFLOW_MESSAGES)
def test_every_overflow_phrase_is_detected(message: str) -> None:
    assert is_context_overflow(None, message)
    assert is_context_overflow(None, message.upper())  # case-insensitive


def test_overflow_code_and_type_are_detected_without_phrase() -> None:
    assert is_context_overflow("context_length_exceeded", "something odd")
    assert is_context_overflow(None, "bad request", "exceed_context_size_error")


@pytest.mark.parametrize(
    "message",
    [
        "Prefill context too large for available memory",
        "Invalid value for 'model'",
        "rate limit reached, try again later",
        "",
    ],
)
def test_non_overflow_messages_are_not_overflow(message: str) -> None:
    assert not is_context_overflow(None, message)
    assert not is_context_overflow("invalid_request_error", message, "invalid_request_error")


def test_scrub_secrets_removes_the_key_and_key_like_strings() -> None:
    text = f"bad key {KEY}, also sk-other1234567890 and Authorization: Bearer abc.def"
    scrubbed = scrub_secrets(text, [KEY])
    assert KEY not in scrubbed
    assert "sk-other1234567890" not in scrubbed
    assert "abc.def" not in scrubbed
    assert scrubbed.startswith("bad key [redacted]")


def test_scrub_secrets_leaves_ordinary_text_alone() -> None:
    assert scrub_secrets("the model is busy", ["x"]) == "the model is busy"


def _status_error(
    status: int, body: object, headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    """The exception the SDK raises for this status and JSON body."""
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    response = httpx2.Response(
        status, headers=headers or {}, content=json.dumps(body).encode(), request=request
    )
    client = openai.OpenAI(api_key=KEY, base_url=BASE_URL)
    return client._make_status_error_from_response(response)


def test_401_says_the_key_was_rejected_without_the_key() -> None:
    exc = _status_error(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    error = classify_exception(exc, BASE_URL, secrets=[KEY])
    assert error.category == "auth"
    assert error.message == f"the server rejected the API key for {BASE_URL}"
    assert KEY not in str(error)
    assert error.status == 401


def test_403_is_auth() -> None:
    error = classify_exception(_status_error(403, {"error": {"message": "no"}}), BASE_URL)
    assert error.category == "auth"
    assert not error.retryable


def test_bad_request_carries_server_message_scrubbed() -> None:
    exc = _status_error(400, {"error": {"message": f"unknown parameter; key {KEY}"}})
    error = classify_exception(exc, BASE_URL, secrets=[KEY])
    assert error.category == "bad_request"
    assert "unknown parameter" in error.message
    assert KEY not in error.message


def test_overflow_wins_over_status() -> None:
    body = {"error": {"message": "too long", "code": "context_length_exceeded"}}
    for status in (400, 413, 500):
        error = classify_exception(_status_error(status, body), BASE_URL)
        assert error.category == "context_overflow"
        assert error.code == "context_length_exceeded"


def test_ollama_string_error_body_is_read() -> None:
    exc = _status_error(400, {"error": "the input length exceeds the context length"})
    assert classify_exception(exc, BASE_URL).category == "context_overflow"


def test_statuses_map_to_categories() -> None:
    assert classify_exception(_status_error(404, {}), BASE_URL).category == "not_found"
    assert classify_exception(_status_error(503, {}), BASE_URL).category == "server"
    assert classify_exception(_status_error(422, {}), BASE_URL).category == "bad_request"


def test_retry_after_header_forms() -> None:
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=1_000_000.0) == pytest.approx(30.0)
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_429_parses_retry_after() -> None:
    exc = _status_error(429, {"error": {"message": "slow down"}}, {"retry-after": "7"})
    error = classify_exception(exc, BASE_URL)
    assert error.category == "rate_limit"
    assert error.retry_after == 7.0
    assert error.retryable


def test_connection_error_names_the_server_and_reason() -> None:
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    try:
        try:
            raise httpx2.ConnectError("Connection refused")
        except httpx2.ConnectError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as exc:
        error = classify_exception(exc, BASE_URL)
    assert error.category == "connection"
    assert error.message == (
        f"Coco could not reach the server at {BASE_URL}: nothing is listening there (connection "
        "refused). Check that the server is running and that the address in Settings is right."
    )
    assert error.details is not None and "ConnectError: Connection refused" in error.details


def test_timeout_is_connection() -> None:
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    error = classify_exception(openai.APITimeoutError(request=request), BASE_URL)
    assert error.category == "connection"
    assert "timed out" in error.message


def test_transport_error_mid_stream_is_stream() -> None:
    error = classify_exception(httpx2.RemoteProtocolError("peer closed connection"), BASE_URL)
    assert error.category == "stream"
    assert error.retryable


def test_malformed_json_is_malformed() -> None:
    try:
        json.loads("{not json")
    except json.JSONDecodeError as exc:
        error = classify_exception(exc, BASE_URL)
    assert error.category == "malformed"


def test_inband_api_error_is_classified_by_payload() -> None:
    request = httpx2.Request("POST", f"{BASE_URL}/chat/completions")
    text = "maximum context length is 4096 tokens"
    overflow = openai.APIError(text, request, body={"message": text, "code": None})
    assert classify_exception(overflow, BASE_URL).category == "context_overflow"
    plain = openai.APIError("model crashed", request, body={"message": "model crashed"})
    error = classify_exception(plain, BASE_URL)
    assert error.category == "server"
    assert error.message == "model crashed"


def test_inband_rate_limit_reads_try_again_hint() -> None:
    error = classify_error_payload(
        {"code": "rate_limit_exceeded", "message": "Please try again in 1.5s."}, base_url=BASE_URL
    )
    assert error.category == "rate_limit"
    assert error.retry_after == 1.5
