"""Transport failures in words: why the server could not be reached, and a stream cut short."""

from __future__ import annotations

import socket

import httpx2
import openai

from app.core.providers.errors.transport import (
    stream_cut_error,
    timed_out_error,
    unreachable_error,
)

BASE_URL = "http://127.0.0.1:9/v1"
KEY = "sk-test-SECRET-0123456789abcdef"


def _chained(inner: BaseException) -> openai.APIConnectionError:
    """The SDK's wrapper around a transport error, as it raises it."""
    request = httpx2.Request("POST", BASE_URL + "/responses")
    try:
        try:
            raise inner
        except BaseException as exc:
            raise openai.APIConnectionError(request=request) from exc
    except openai.APIConnectionError as wrapped:
        return wrapped


def test_a_refused_connection_says_nothing_listens_and_what_to_check() -> None:
    error = unreachable_error(_chained(ConnectionRefusedError(111, "Connection refused")),
                              BASE_URL, ())
    assert error.category == "connection"
    assert error.message == (
        f"Coco could not reach the server at {BASE_URL}: nothing is listening there "
        "(connection refused). Check that the server is running and that the address in "
        "Settings is right."
    )
    assert error.code is None
    # The raw chain goes to the details, without the SDK's empty wrapper text.
    assert error.details is not None
    assert "ConnectionRefusedError" in error.details
    assert "Connection error." not in error.details


def test_an_unknown_host_is_told_from_a_refusal() -> None:
    error = unreachable_error(
        _chained(socket.gaierror(-2, "Name or service not known")), BASE_URL, ()
    )
    assert "its host name could not be found" in error.message
    assert "internet connection" in error.message


def test_a_timeout_underneath_is_said_as_a_timeout_with_its_code() -> None:
    error = unreachable_error(_chained(TimeoutError("timed out")), BASE_URL, ())
    assert "did not answer in time" in error.message
    assert error.code == "timeout"
    assert timed_out_error(BASE_URL).code == "timeout"
    assert timed_out_error(BASE_URL).category == "connection"


def test_an_unrecognised_reason_is_quoted_scrubbed() -> None:
    error = unreachable_error(OSError(f"proxy refused key {KEY}."), BASE_URL, (KEY,))
    assert "proxy refused key [redacted]" in error.message
    assert error.message.endswith("the address in Settings is right.")
    assert KEY not in (error.details or "")


def test_a_cut_stream_is_a_retried_stream_error_with_its_reason() -> None:
    error = stream_cut_error(
        httpx2.RemoteProtocolError("peer closed connection without sending complete message"),
        (),
    )
    assert error.category == "stream"
    assert error.retryable
    assert error.message == (
        "the response stream was cut: peer closed connection without sending complete message"
    )
