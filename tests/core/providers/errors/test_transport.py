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


# A secret that is not shaped like an API key (a proxy's password, a local server's token):
# only the secrets passed in can scrub it.
PLAIN_SECRET = "hunter2-local-token"


def test_the_details_name_the_server_then_each_error_behind_it() -> None:
    inner = ValueError("bad port")
    outer = OSError("could not open the socket")
    outer.__cause__ = inner  # a cause only (``raise … from``, outside an ``except``)
    middle_less = RuntimeError()  # an error without a message is named by its type
    inner.__context__ = middle_less
    error = unreachable_error(outer, BASE_URL, ())
    assert error.details == (
        f"{BASE_URL}\nOSError: could not open the socket\nValueError: bad port\nRuntimeError"
    )
    # The reason quoted is the innermost error with something to say.
    assert error.message == (
        f"Coco could not reach the server at {BASE_URL}: bad port. Check that the server is "
        "running and that the address in Settings is right."
    )


def test_a_chain_that_loops_back_is_read_once() -> None:
    first, second = OSError("first"), OSError("second")
    first.__context__, second.__context__ = second, first
    error = unreachable_error(first, BASE_URL, ())
    assert error.details == f"{BASE_URL}\nOSError: first\nOSError: second"
    assert stream_cut_error(first, ()).message == "the response stream was cut: second"


def test_an_error_with_nothing_to_say_is_named_by_its_type_or_as_a_timeout() -> None:
    request = httpx2.Request("POST", BASE_URL + "/responses")
    bare = openai.APIConnectionError(request=request)  # only the SDK's own wrapper text
    assert unreachable_error(bare, BASE_URL, ()).details == f"{BASE_URL}\nAPIConnectionError"
    assert stream_cut_error(bare, ()).message == (
        "the response stream was cut: APIConnectionError"
    )
    timeout = openai.APITimeoutError(request=request)
    assert stream_cut_error(timeout, ()).message == "the response stream was cut: timed out"
    # A message-less error behind one that says something: the one that says it is quoted.
    said = OSError("the proxy said no")
    said.__context__ = RuntimeError()
    assert stream_cut_error(said, ()).message == "the response stream was cut: the proxy said no"


def test_the_secrets_given_are_scrubbed_from_message_and_details() -> None:
    error = unreachable_error(OSError(f"login {PLAIN_SECRET} refused."), BASE_URL,
                              (PLAIN_SECRET,))
    assert error.message == (
        f"Coco could not reach the server at {BASE_URL}: login [redacted] refused. Check "
        "that the server is running and that the address in Settings is right."
    )  # its own full stop taken off before Coco's
    assert error.details == f"{BASE_URL}\nOSError: login [redacted] refused."
    cut = stream_cut_error(OSError(f"lost {PLAIN_SECRET}"), (PLAIN_SECRET,))
    assert cut.message == "the response stream was cut: lost [redacted]"
    ends_in_x = unreachable_error(OSError("bad reply from proxy-X."), BASE_URL, ())
    assert ": bad reply from proxy-X. Check" in ends_in_x.message
    # A reason no rule knows is still a connection failure (retried, told as one).
    assert (error.category, ends_in_x.category) == ("connection", "connection")
    assert error.code is None and ends_in_x.retryable


def test_a_reason_found_in_an_inner_errors_type_name() -> None:
    class SSLError(Exception):
        pass

    outer = OSError("connect failed")
    outer.__context__ = SSLError("handshake failed")
    error = unreachable_error(outer, BASE_URL, ())
    assert "the secure connection (TLS) could not be set up" in error.message
