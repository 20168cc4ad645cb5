"""A server that cannot be reached is said in words (what happened, what to check); the raw
transport error (errno text and all) is kept apart, in ``details``."""

from __future__ import annotations

import httpx2
import openai
import pytest

from app.core.providers.base import ProviderError
from app.core.providers.errors.table import classify_exception

BASE_URL = "http://127.0.0.1:9/v1"


def _through_sdk(cause: BaseException) -> ProviderError:
    """``cause`` as the openai SDK raises it: an APIConnectionError wrapping the transport's."""
    request = httpx2.Request("POST", f"{BASE_URL}/responses")
    try:
        try:
            raise cause
        except BaseException as inner:
            raise openai.APIConnectionError(request=request) from inner
    except openai.APIConnectionError as exc:
        return classify_exception(exc, BASE_URL)


@pytest.mark.parametrize(
    ("raw", "words", "advice"),
    [
        (
            "[Errno 111] Connect call failed ('127.0.0.1', 9)",
            "nothing is listening there (connection refused)",
            "Check that the server is running",
        ),
        (
            "[Errno -2] Name or service not known",
            "its host name could not be found",
            "Check the address in Settings and your internet connection.",
        ),
        (
            "[Errno 101] Network is unreachable",
            "the network is unreachable",
            "Check your internet connection.",
        ),
        (
            "[Errno 104] Connection reset by peer",
            "the connection was reset",
            "try again in a moment",
        ),
        (
            "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate",
            "its security certificate is not trusted",
            "certificate",
        ),
        (
            "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1006)",
            "the secure connection (TLS) could not be set up",
            "http:// or https://",
        ),
    ],
)
def test_a_transport_failure_is_said_in_words_with_the_raw_error_apart(
    raw: str, words: str, advice: str
) -> None:
    error = _through_sdk(httpx2.ConnectError(raw))
    assert error.category == "connection"
    assert error.message.startswith(f"Coco could not reach the server at {BASE_URL}: {words}. ")
    assert advice in error.message
    assert raw not in error.message  # no errno text in the sentence the user reads
    assert error.details is not None and raw in error.details
    assert "Connection error." not in error.details  # the SDK's empty wrapper says nothing


def test_an_unknown_transport_failure_still_names_the_server_and_what_to_check() -> None:
    error = _through_sdk(httpx2.ConnectError("the tubes are clogged"))
    assert error.message == (
        f"Coco could not reach the server at {BASE_URL}: the tubes are clogged. Check that the "
        "server is running and that the address in Settings is right."
    )

