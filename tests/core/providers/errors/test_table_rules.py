"""The error table rule by rule, each outcome compared whole: the fields read from an error
body in its shapes, an in-band error by its code (and the default for codes it does not know),
and an HTTP status error by its status (overflow, a malformed tool call, the key, the rate,
not found, the server, the rest)."""

from __future__ import annotations

import json

import httpx2
import openai
import pydantic
import pytest

from app.core.providers.base import ProviderError
from app.core.providers.errors.table import (
    _error_fields,
    classify_error_payload,
    classify_exception,
)

KEY = "sk-test-DO-NOT-LEAK-0123456789"
BASE_URL = "https://gw.example/v1"
SECRET_URL = f"https://gw.example/{KEY}/v1"


def outcome(error: ProviderError) -> tuple[object, ...]:
    return (error.category, error.message, error.status, error.code, error.retry_after)


# -- the fields of an error body ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"error": {"message": "m", "code": "c", "type": "t"}}, ("m", "c", "t")),
        ({"error": "boom"}, ("boom", None, None)),  # a wrapper holding plain text
        ({"message": "m", "error": "e", "type": 3}, ("m", None, "3")),  # not a wrapper
        ({"error": "e", "code": 7}, ("e", None, None)),  # unwrapped: the text is the error
        ({"code": 5}, ("fallback", "5", None)),
        ({"error": None}, ("fallback", None, None)),
        ({"error": {"error": "inner"}}, ("inner", None, None)),
        ("  ", ("fallback", None, None)),
        ("plain words", ("plain words", None, None)),
        (None, ("fallback", None, None)),
        (["a list"], ("fallback", None, None)),
    ],
)
def test_an_error_bodys_message_code_and_type(body: object, fields: tuple[object, ...]) -> None:
    assert _error_fields(body, "fallback") == fields


# -- an error reported inside a stream ----------------------------------------------------------


def payload(body: object, **kwargs: object) -> ProviderError:
    return classify_error_payload(body, base_url=SECRET_URL, secrets=[KEY], **kwargs)  # type: ignore[arg-type]


def test_an_in_band_error_by_its_code() -> None:
    assert outcome(payload({"code": "server_is_overloaded", "message": "busy"})) == (
        "server", "busy", None, "server_is_overloaded", None
    )
    assert outcome(payload({"code": "insufficient_quota", "message": "no credit"}, status=200)) == (
        "bad_request", "no credit", 200, "insufficient_quota", None
    )
    assert outcome(payload({"code": "model_not_found", "message": "gone"})) == (
        "not_found", "gone", None, "model_not_found", None
    )


def test_a_code_the_table_does_not_know_takes_the_default() -> None:
    assert payload({"code": "odd", "message": "m"}).category == "server"
    assert payload({"code": "odd", "message": "m"}, default="bad_request").category == "bad_request"
    assert payload({"message": "m"}, default="malformed").category == "malformed"


def test_an_in_band_rate_limit_says_how_long_to_wait() -> None:
    error = payload({"code": "rate_limit_exceeded", "message": "Please try again in 2.5s."})
    assert outcome(error) == (
        "rate_limit", "Please try again in 2.5s.", None, "rate_limit_exceeded", 2.5
    )
    # Only a rate limit reads a wait from its words.
    assert payload({"code": "server_error", "message": "try again in 3s"}).retry_after is None


def test_an_in_band_key_error_names_the_address_without_the_key() -> None:
    error = payload({"code": "invalid_api_key", "message": f"bad key {KEY}"}, status=401)
    assert outcome(error) == (
        "auth", "the server rejected the API key for https://gw.example/[redacted]/v1", 401,
        "invalid_api_key", None,
    )


def test_an_in_band_overflow_and_malformed_tool_call_come_first() -> None:
    overflow = payload({"code": "context_length_exceeded", "message": "too long"}, status=200)
    assert outcome(overflow) == ("context_overflow", "too long", 200, "context_length_exceeded",
                                 None)
    malformed = payload({"code": "rate_limit_exceeded", "message": "Failed to parse tool call"})
    assert malformed.category == "model_output" and malformed.code == "rate_limit_exceeded"
    assert malformed.message.endswith("The server said: Failed to parse tool call")


def test_an_in_band_message_is_scrubbed_and_clipped() -> None:
    error = payload({"message": f"key {KEY} " + "x" * 600})
    assert error.message.startswith("key [redacted] xxx") and len(error.message) == 500
    assert payload("plain trouble").message == "plain trouble"
    assert payload(None).message == "the server reported an error"


# -- an HTTP status error -------------------------------------------------------------------------


def status_error(
    status: int, body: str, headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    response = httpx2.Response(
        status, headers={"content-type": "application/json", **(headers or {})},
        content=body.encode(), request=request,
    )
    client = openai.OpenAI(api_key=KEY, base_url=BASE_URL)
    return client._make_status_error_from_response(response)


def classified(status: int, body: str, headers: dict[str, str] | None = None) -> ProviderError:
    return classify_exception(status_error(status, body, headers), BASE_URL, secrets=[KEY])


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, '{"error": {"message": "bad thing", "code": "x1"}}',
         ("bad_request", "bad thing", 400, "x1", None)),
        (404, '{"error": {"message": "no model"}}',
         ("not_found", f"not found on {BASE_URL}: no model", 404, None, None)),
        (503, '{"error": {"message": "busy"}}',
         ("server", "server error 503: busy", 503, None, None)),
        (500, '{"error": {"message": "oops"}}',
         ("server", "server error 500: oops", 500, None, None)),
        (499, '{"error": {"message": "client closed"}}',
         ("bad_request", "client closed", 499, None, None)),
        (401, '{"error": {"message": "bad key"}}',
         ("auth", f"the server rejected the API key for {BASE_URL}", 401, None, None)),
        (403, "<html><title>Login</title></html>",
         ("auth", f"the server rejected the API key for {BASE_URL}", 403, None, None)),
        (400, '{"error": {"message": "too long", "code": "context_length_exceeded"}}',
         ("context_overflow", "too long", 400, "context_length_exceeded", None)),
        (400, '{"error": {"message": "prompt too big", "type": "exceed_context_size_error"}}',
         ("context_overflow", "prompt too big", 400, None, None)),
        (400, "plain words", ("bad_request", "plain words", 400, None, None)),
    ],
)
def test_an_http_error_by_its_status(status: int, body: str, expected: tuple[object, ...]) -> None:
    assert outcome(classified(status, body)) == expected


def test_a_malformed_tool_call_is_the_models_only_when_the_server_failed() -> None:
    server = classified(500, '{"error": {"message": "Failed to parse tool call", "code": 9}}')
    assert (server.category, server.status, server.code) == ("model_output", 500, "9")
    assert server.message.endswith("The server said: Failed to parse tool call")
    client = classified(400, '{"error": {"message": "Failed to parse tool call"}}')
    assert outcome(client) == ("bad_request", "Failed to parse tool call", 400, None, None)


def test_a_429_waits_what_its_header_says_else_what_its_words_say() -> None:
    header = classified(429, '{"error": {"message": "try again in 9s"}}', {"retry-after": "4"})
    assert outcome(header) == (
        "rate_limit", f"rate limited by {BASE_URL}: try again in 9s", 429, None, 4.0
    )
    words = classified(429, '{"error": {"message": "slow down, try again in 2.5s"}}')
    assert words.retry_after == 2.5
    assert classified(429, '{"error": {"message": "slow down"}}').retry_after is None


def test_a_status_errors_message_is_scrubbed_and_its_details_keep_the_body() -> None:
    error = classified(400, f'{{"error": {{"message": "key {KEY} refused"}}}}')
    assert error.message == "key [redacted] refused"
    # (The SDK gives the error object inside the body's "error".)
    assert error.details == 'HTTP 400 Bad Request\n{"message": "key [redacted] refused"}'


# -- every other exception a request can raise ---------------------------------------------------

_REQUEST = httpx2.Request("POST", f"{BASE_URL}/responses")
_UNREACHED = (
    "Check that the server is running and that the address in Settings is right."
)
_STOPPED = "the server stopped sending: nothing arrived for the whole request timeout"
_SLOW = (
    f"Coco could not reach the server at {BASE_URL}: it did not answer in time (timed out). "
    "Check that the server is running and reachable; a slow server may need a longer request "
    "timeout in Settings."
)


def _cut(cause: BaseException) -> openai.APIConnectionError:
    error = openai.APIConnectionError(request=_REQUEST)
    error.__cause__ = cause
    return error


def _json_error() -> json.JSONDecodeError:
    try:
        json.loads("{bad")
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError("unreachable")


def _pydantic_error() -> pydantic.ValidationError:
    class Shape(pydantic.BaseModel):
        a: int

    try:
        Shape(a="x")  # type: ignore[arg-type]
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (openai.APIResponseValidationError(httpx2.Response(200, request=_REQUEST), {},
                                           message="bad shape"),
         ("malformed", f"unexpected response from {BASE_URL}: bad shape", None)),
        (openai.APITimeoutError(_REQUEST), ("connection", _SLOW, "timeout")),
        (openai.APIConnectionError(request=_REQUEST),
         ("connection", f"Coco could not reach the server at {BASE_URL}: APIConnectionError. "
          + _UNREACHED, None)),
        (_cut(httpx2.RemoteProtocolError("peer closed connection")),
         ("stream", "the response stream was cut: peer closed connection", None)),
        (_cut(httpx2.ReadError("read failed")),
         ("stream", "the response stream was cut: read failed", None)),
        (openai.APIError("stream error", _REQUEST,
                         body={"code": "rate_limit_exceeded", "message": "slow, retry in 2s"}),
         ("rate_limit", "slow, retry in 2s", "rate_limit_exceeded")),
        (openai.APIError("the message", _REQUEST, body={"code": "server_error"}),
         ("server", "the message", "server_error")),
        (openai.APIError("plain msg", _REQUEST, body=None), ("server", "plain msg", None)),
        (openai.APIError("too long", _REQUEST, body={"code": "context_length_exceeded"}),
         ("context_overflow", "too long", "context_length_exceeded")),
        (openai.APIError("listy", _REQUEST, body=[1, 2]), ("server", "listy", None)),
        (httpx2.ReadTimeout("rt"),
         ("connection", _STOPPED, "timeout")),
        (httpx2.PoolTimeout("pt"), ("connection", _SLOW, "timeout")),
        (httpx2.RemoteProtocolError("rp"), ("stream", "the response stream was cut: rp", None)),
        (httpx2.ReadError("re"), ("stream", "the response stream was cut: re", None)),
        (httpx2.ConnectError("refused"),
         ("connection", f"Coco could not reach the server at {BASE_URL}: refused. " + _UNREACHED,
          None)),
        (OSError(111, "Connection refused"),
         ("connection", f"Coco could not reach the server at {BASE_URL}: nothing is listening "
          "there (connection refused). " + _UNREACHED, None)),
        (_json_error(),
         ("malformed", "the server sent a reply that is not valid JSON, so it could not be read",
          "unreadable")),
        (_pydantic_error(),
         ("malformed", f"unparsable response from {BASE_URL}: 1 validation error for Shape",
          None)),
        (httpx2.HTTPError("generic http"),
         ("connection", f"Coco could not reach the server at {BASE_URL}: generic http. "
          + _UNREACHED, None)),
        (RuntimeError(f"weird {KEY}"),
         ("bad_request", f"request to {BASE_URL} failed: weird [redacted]", None)),
        (RuntimeError(""), ("bad_request", f"request to {BASE_URL} failed: RuntimeError", None)),
    ],
)
def test_each_kind_of_failure_in_words(exc: BaseException, expected: tuple[object, ...]) -> None:
    error = classify_exception(exc, BASE_URL, secrets=[KEY])
    assert (error.category, error.message, error.code) == expected
    assert KEY not in (error.details or "")


def test_a_failure_without_its_own_details_keeps_its_type_and_words() -> None:
    assert classify_exception(RuntimeError(f"weird {KEY}"), BASE_URL, secrets=[KEY]).details == (
        "RuntimeError: weird [redacted]"
    )
    assert classify_exception(RuntimeError("  "), BASE_URL).details == "RuntimeError: RuntimeError"
    in_band = openai.APIError("stream error", _REQUEST, body={"code": "server_error"})
    assert classify_exception(in_band, BASE_URL).details == "APIError: stream error"


def test_details_are_scrubbed_before_they_are_cut_to_their_length() -> None:
    # 2 033 characters with the key, 2 014 without it: cut to 2 000 after the key is gone.
    error = classify_exception(RuntimeError(KEY + "x" * 1990), BASE_URL, secrets=[KEY])
    assert error.details == "RuntimeError: [redacted]" + "x" * 1975 + "…"
    status = classified(400, KEY + "y" * 2000)
    assert status.details == "HTTP 400 Bad Request\n[redacted]" + "y" * 1968 + "…"


def test_a_key_in_the_base_url_never_reaches_the_words() -> None:
    error = classify_exception(httpx2.ConnectError("refused"), SECRET_URL, secrets=[KEY])
    assert error.message.startswith(
        "Coco could not reach the server at https://gw.example/[redacted]/v1: refused."
    )
    assert KEY not in (error.details or "")
    passed = ProviderError("server", f"as it was {KEY}")
    assert classify_exception(passed, SECRET_URL, secrets=[KEY]) is passed  # already classified


# -- the last edges: codes kept, nested bodies, a secret not shaped like a key ---------------------

PASSWORD = "opensesame-4242"  # only the secrets given can take it out


def test_a_malformed_tool_calls_words_in_full() -> None:
    error = payload({"message": "Failed to parse tool call"}, status=200)
    words = (
        "the model produced a malformed tool call (or a reply the server could not read), and "
        "sending the same request again would give the same result. Rephrase the request, or "
        "use a model whose chat template supports tools. The server said: Failed to parse tool "
        "call"
    )
    assert outcome(error) == ("model_output", words, 200, None, None)


@pytest.mark.parametrize("status", [401, 403, 404, 429, 500, 503])
def test_an_http_errors_code_is_kept_whatever_its_status(status: int) -> None:
    assert classified(status, '{"error": {"message": "m", "code": "the_code"}}').code == "the_code"


def test_a_nested_error_body_gives_its_inner_words_and_its_outer_code_and_type() -> None:
    nested = classified(400, '{"error": {"error": {"message": "deep words"}, "code": "outer"}}')
    assert outcome(nested) == ("bad_request", "deep words", 400, "outer", None)
    typed = classified(
        400, '{"error": {"error": {"message": "too big"}, "type": "exceed_context_size_error"}}'
    )
    assert typed.category == "context_overflow"
    # A body with no words of its own: the SDK's.
    assert classified(400, '{"error": {"code": "x"}}').message == "Error code: 400"


def test_an_in_band_overflow_said_only_by_its_type() -> None:
    error = payload({"type": "exceed_context_size_error", "message": "too big"})
    assert error.category == "context_overflow"


def test_a_web_page_status_errors_details_name_the_address() -> None:
    page = "<html><title>502 Bad Gateway</title></html>"
    error = classify_exception(
        status_error(502, page, {"content-type": "text/html"}), BASE_URL, secrets=[PASSWORD]
    )
    assert (error.details or "").splitlines()[0] == f"{BASE_URL}: HTTP 502 Bad Gateway"


def test_bad_json_from_a_request_names_the_address_in_its_details() -> None:
    error = classify_exception(_json_error(), BASE_URL)
    assert (error.details or "").splitlines()[0] == BASE_URL


def test_a_secret_in_words_the_server_or_the_sdk_wrote_is_taken_out() -> None:
    shape = openai.APIResponseValidationError(
        httpx2.Response(200, request=_REQUEST), {}, message=f"bad shape near {PASSWORD}"
    )
    error = classify_exception(shape, BASE_URL, secrets=[PASSWORD])
    assert error.message == f"unexpected response from {BASE_URL}: bad shape near [redacted]"
    assert error.args == (error.message,)
    direct = classify_error_payload({"message": f"bad {PASSWORD}"}, base_url=BASE_URL,
                                    secrets=[PASSWORD])
    assert direct.message == "bad [redacted]"


@pytest.mark.parametrize(
    "exc",
    [
        openai.APIError(PASSWORD + "x" * 600, _REQUEST, body={"code": "context_length_exceeded"}),
        openai.APIError(PASSWORD + "x" * 600, _REQUEST, body={"code": "server_error"}),
        RuntimeError(PASSWORD + "x" * 600),
    ],
)
def test_a_long_message_is_scrubbed_before_it_is_cut(exc: BaseException) -> None:
    error = classify_exception(exc, BASE_URL, secrets=[PASSWORD])
    # 500 characters once the password is out (cut first, it would be 495 after).
    assert error.message.endswith("[redacted]" + "x" * 489 + "…")


def test_an_in_band_overflow_says_the_sdks_words_not_the_bodys() -> None:
    by_code = openai.APIError("sdk words", _REQUEST,
                              body={"code": "context_length_exceeded", "message": "body words"})
    by_type = openai.APIError("sdk words", _REQUEST,
                              body={"type": "exceed_context_size_error", "message": "body words"})
    for exc in (by_code, by_type):
        error = classify_exception(exc, BASE_URL)
        assert (error.category, error.message) == ("context_overflow", "sdk words")


def test_a_long_status_message_and_page_are_scrubbed_before_they_are_cut() -> None:
    body = f'{{"error": {{"message": "{PASSWORD}{"x" * 600}"}}}}'
    error = classify_exception(status_error(400, body), BASE_URL, secrets=[PASSWORD])
    assert error.message.endswith("[redacted]" + "x" * 489 + "…")
    page = f"<html>{PASSWORD}" + "p" * 3000 + "</html>"
    shown = classify_exception(
        status_error(502, page, {"content-type": "text/html"}), BASE_URL, secrets=[PASSWORD]
    )
    assert len(shown.details or "") == 2000 and PASSWORD not in (shown.details or "")
